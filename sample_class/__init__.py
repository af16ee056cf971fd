"""The sample class: submissions that exercise every grading path, built from the release.

Each file in ``students/`` describes one student as *changes* to the released notebooks, so
the samples follow the notebooks when they change:

``NOTEBOOKS``  which notebooks the student hands in (``"all"`` or a list of names);
``BASE``       ``"solutions"`` (answer cells filled with the course's solutions) or
               ``"release"`` (answer cells untouched);
``ANSWERS``    {notebook: {grade_id: source}} — replaced answer cells;
``EDIT_TESTS`` {notebook: {grade_id: source}} — test cells the student rewrote;
``DELETE``     {notebook: [grade_id, …]} — cells the student deleted;
``APPEND``     {notebook: [source, …]} — code cells the student added at the end;
``DUPLICATE``  {notebook: [grade_id, …]} — cells the student copied (*Duplicate*: the copy,
               metadata and all, right below the original, with a new id);
``MOVE``       {notebook: [(grade_id, after_grade_id), …]} — a cell moved to stand right after
               another;
``INSERT``     {notebook: [(grade_id, cell_type, source), …]} — a new cell of the student's own
               right above the cell ``grade_id``;
``PASTE``      {notebook: [(other_notebook, grade_id, after_grade_id), …]} — a cell of another
               released notebook pasted, metadata and all, right after a cell of this one;
``RETYPE``     {notebook: [grade_id, …]} — cells turned code <-> markdown;
``STRIP_IDS``  notebooks saved as nbformat 4.4 (no cell ids), metadata kept;
``KERNELSPEC`` {"name", "display_name", "language"}: every notebook saved with this kernel;
``STRIP_METADATA`` notebooks (a list, or ``"all"``) whose cells lost ``metadata.nbgrader`` and
               their ids, as after a trip through an editor that drops what it does not know;
``ROUND_TRIP`` ``"colab"``: every notebook as Colab writes it back (see :func:`colab_round_trip`);
``ATTACH``     {notebook: {grade_id: attachments}}: a cell's attachments (``{name: {mime: data}}``);
``NOTEBOOK_METADATA`` {notebook: {key: value}}: keys set in the notebook's own metadata;
``BESIDE``     {file name: text}: files handed in beside the notebooks (not notebooks);
``FOREIGN_CELLS`` {notebook: [cell, …]}: cells added at the end exactly as given (any type,
               any field: what a notebook of a newer format may hold), and ``FORMAT_MINOR``
               the ``nbformat_minor`` the notebooks then declare;
``TAMPERS``    True for a student who tampers with the checks in their own kernel, so that the
               notebook's verdicts are expected to differ from the grader's;
``HANDIN``     how the files reach the instructor when not as ``submitted/<id>/week4/<name>``:
               ``"canvas"`` or ``"moodle"`` (in that LMS's zip) or ``"colab"`` (under Colab's and
               browsers' names), with ``LMS_ID``, ``LATE``, ``UPLOADED_AS``, ``OLDER_UPLOAD``
               and ``EXTRA_FILES`` (see :mod:`sample_class.handin`);
``EXPECTED``   {notebook: points} on a machine without a GPU (GPU-only checks excluded);
``EXPECTED_GPU`` the same on a GPU machine, where it differs;
``EXPECTED_NOTES`` {notebook: [text, …]}: what the grade table's notes must say;
``LANGUAGE``   ``"ko"`` for a student who works on the Korean release (``release-ko/week4``;
               default ``"en"``, ``release/week4``);
``SAME_AS``    for such a student, the English student whose answers they hand in: the grade
               must be the same (tests/test_sample_class.py compares them).

:data:`CORE_CLASS` picks the students that ``make demo`` and CI grade.
"""

from __future__ import annotations

import copy
import importlib
import json
import pkgutil
import re
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from autograder.runner.names import ASSIGNMENT
from sample_class import edits
from sample_class import handin
from autograder.release.translation import release_dir

_MARKERS = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)


def sample_students() -> dict[str, ModuleType]:
    """Every sample student, by id (the file name).

    (Not called `students`: importing the subpackage `students` rebinds that name on this
    package, which would hide a function of the same name after its first call.)
    """
    pkg = importlib.import_module(f"{__name__}.students")
    return {m.name: importlib.import_module(f"{pkg.__name__}.{m.name}")
            for m in pkgutil.iter_modules(pkg.__path__)}


#: the sample classes: ``demo`` (the first student of each kind of :data:`CORE_CLASS`: what
#: ``make demo`` grades in a few minutes), ``core`` (every student of :data:`CORE_CLASS`: what
#: CI checks) and ``full`` (every student).
CLASSES = ("demo", "core", "full")

#: The core class, kind by kind: the students of every kind the full class has, so every
#: grading path still runs where time is short — every correct answer written in another style
#: (issue 9's class: each scores exactly what the instructor's solution scores) and deleted or
#: edited tests in every notebook with tests, one or two students of every other kind.
#: CI (``make test``) grades it; ``make demo`` grades the first student of each kind;
#: ``make demo-full`` and ``make test-class`` grade everyone.
CORE_CLASS: dict[str, tuple[str, ...]] = {
    "a full correct submission": ("ada_correct",),
    "correct answers in other styles": (
        "ana_isinstance", "bo_any_and_dicts", "cy_divmod_and_try", "di_numpy_functions",
        "ed_where_and_while", "fi_clip_and_numba_spelling", "gil_numba_module",
        "hu_imported_api_names", "io_device_functions", "jo_while_loops", "ka_occupancy_math",
        "lu_occupancy_divmod", "mo_bonus_own_layout", "ne_hints_and_asserts",
        "ol_sums_and_comprehensions"),
    "a wrong Numba kernel": ("kim_fake_kernel",),
    "a wrong CUDA C kernel (the CUDA C track)": ("fin_cuda_missing_barrier",),
    "feedback that says how to fix it": ("nia_one_thread_per_element",),
    "a wrong answer whose test cell was deleted": ("eli_deletes_tests",),
    "deleted and edited test cells in every notebook with tests": (
        "pat_deletes_and_edits_tests", "cas_cuda_deletes_and_edits_tests"),
    "lost nbgrader metadata": ("tia_lost_metadata",),
    "copied cells: an answer, a test, read-only cells (nbformat 4.4)": ("kit_copies_cells",),
    "an answer moved below its test": ("abe_answer_below_its_test",),
    "the Korean release (the same grades as in English, feedback in Korean)": (
        "minji_ko_deletes_tests", "jiwoo_ko_correct"),
    "a hang": ("fay_hangs",),
    "a dying kernel": ("gus_kernel_dies",),
    "checks tampered with in the student's kernel": ("lou_monkeypatch",),
    "reading the instructor's files": ("max_reads_instructor_files",),
    "reading files in the home folder": ("oscar_reads_home_files",),
    "printing the environment's secrets": ("pam_prints_env_secrets",),
    "script where the notebook is looked at (formgrader, feedback)": ("ivo_injects_html",),
    "reaching the network": ("quinn_phones_home",),
    "a fork bomb": ("rita_fork_bomb",),
    "too much memory": ("sam_eats_memory",),
    "handed in through a Canvas zip, a Moodle zip, or under Colab's names": (
        "uma_canvas_zip", "vic_moodle_zip", "wes_colab_names"),
}


def class_members(which: str = "full") -> list[str]:
    """The ids of the ``demo``, ``core`` or ``full`` sample class, sorted."""
    if which not in CLASSES:
        raise ValueError(f"the sample class is one of {', '.join(CLASSES)}, not {which!r}")
    if which == "full":
        return sorted(sample_students())
    if which == "demo":
        return sorted(kind[0] for kind in CORE_CLASS.values())
    return sorted(s for kind in CORE_CLASS.values() for s in kind)


def _nbgrader(cell: dict[str, Any]) -> dict[str, Any]:
    return cell.get("metadata", {}).get("nbgrader", {})


def _text(cell: dict[str, Any]) -> str:
    src = cell["source"]
    return "".join(src) if isinstance(src, list) else src


def solutions(root: Path, notebook: str) -> dict[str, str]:
    """Answer-cell sources of the course's solution: source cells without solution markers."""
    path = root / "source" / ASSIGNMENT / f"{notebook}.ipynb"
    nb = json.loads(path.read_text())
    return {_nbgrader(c)["grade_id"]: _MARKERS.sub("", _text(c)) for c in nb["cells"]
            if _nbgrader(c).get("solution")}


def solution_cells(root: Path, notebook: str) -> list[str]:
    """Every code cell of a source notebook, solutions filled in: the course's own answer."""
    nb = json.loads((root / "source" / ASSIGNMENT / f"{notebook}.ipynb").read_text())
    return [_MARKERS.sub("", _text(c)) for c in nb["cells"] if c["cell_type"] == "code"]


def language(spec: ModuleType) -> str:
    """The release a sample student works on: ``"en"`` or ``"ko"``."""
    return str(getattr(spec, "LANGUAGE", "en"))


def build_notebook(root: Path, notebook: str, spec: ModuleType) -> dict[str, Any]:
    """One student's version of one released notebook (of the student's language)."""
    path = release_dir(root, language(spec)) / f"{notebook}.ipynb"
    nb = json.loads(path.read_text(encoding="utf-8"))
    answers = dict(solutions(root, notebook)) if spec.BASE == "solutions" else {}
    answers.update(getattr(spec, "ANSWERS", {}).get(notebook, {}))
    edits = getattr(spec, "EDIT_TESTS", {}).get(notebook, {})
    delete = set(getattr(spec, "DELETE", {}).get(notebook, []))
    cells = []
    for cell in nb["cells"]:
        gid = _nbgrader(cell).get("grade_id")
        if gid in delete:
            continue
        cell = copy.deepcopy(cell)
        if gid in answers and _nbgrader(cell).get("solution"):
            cell["source"] = answers[gid]
        if gid in edits:
            cell["source"] = edits[gid]
        if gid in getattr(spec, "ATTACH", {}).get(notebook, {}):
            cell["attachments"] = copy.deepcopy(spec.ATTACH[notebook][gid])
        cells.append(cell)
    for source in getattr(spec, "APPEND", {}).get(notebook, []):
        cells.append({"cell_type": "code", "metadata": {}, "source": source, "outputs": [],
                      "execution_count": None})
    nb["cells"] = cells
    nb["metadata"].update(copy.deepcopy(getattr(spec, "NOTEBOOK_METADATA", {}).get(notebook, {})))
    structure_edits(root, nb, notebook, spec)
    nb["cells"] += copy.deepcopy(getattr(spec, "FOREIGN_CELLS", {}).get(notebook, []))
    if getattr(spec, "FORMAT_MINOR", None) is not None:
        nb["nbformat_minor"] = spec.FORMAT_MINOR
    strip = getattr(spec, "STRIP_METADATA", [])
    if strip == "all" or notebook in strip:
        strip_metadata(nb)
    if getattr(spec, "ROUND_TRIP", None) == "colab":
        colab_round_trip(nb)
    return nb


def structure_edits(root: Path, nb: dict[str, Any], notebook: str, spec: ModuleType) -> None:
    """Apply the spec's copies, moves, pasted and new cells, 4.4 format and kernelspec (in
    that order)."""
    for n, gid in enumerate(getattr(spec, "DUPLICATE", {}).get(notebook, [])):
        edits.duplicate(nb, edits.index_of(nb, gid), seed=n)
    for gid, after in getattr(spec, "MOVE", {}).get(notebook, []):
        at = edits.index_of(nb, gid)
        cell = nb["cells"].pop(at)
        nb["cells"].insert(edits.index_of(nb, after) + 1, cell)
    for n, (other, gid, after) in enumerate(getattr(spec, "PASTE", {}).get(notebook, [])):
        path = release_dir(root, language(spec)) / f"{other}.ipynb"
        theirs = json.loads(path.read_text(encoding="utf-8"))
        cell = copy.deepcopy(theirs["cells"][edits.index_of(theirs, gid)])
        if "id" in cell:
            cell["id"] = edits.new_id(nb, seed=200 + n)
        nb["cells"].insert(edits.index_of(nb, after) + 1, cell)
    for n, (gid, cell_type, source) in enumerate(getattr(spec, "INSERT", {}).get(notebook, [])):
        edits.insert(nb, edits.index_of(nb, gid), cell_type, source, seed=100 + n)
    for gid in getattr(spec, "RETYPE", {}).get(notebook, []):
        edits.retype(nb, edits.index_of(nb, gid))
    if notebook in getattr(spec, "STRIP_IDS", []):
        edits.strip_ids(nb)
    kernel = getattr(spec, "KERNELSPEC", None)
    if kernel:
        edits.set_kernelspec(nb, **kernel)


def strip_metadata(nb: dict[str, Any]) -> None:
    """What an editor that keeps only what it knows leaves: no nbgrader metadata, no ids
    (nbformat 4.4), no deletable/editable flags."""
    nb["nbformat_minor"] = 4
    for cell in nb["cells"]:
        cell.pop("id", None)
        meta = cell.get("metadata", {})
        for key in ("nbgrader", "deletable", "editable"):
            meta.pop(key, None)


def colab_round_trip(nb: dict[str, Any]) -> None:
    """A notebook as Colab saves it (from the public record, see docs/grading.md): nbgrader
    metadata kept, each cell's id copied into ``metadata.id``, Colab's own keys added, and
    trailing whitespace trimmed from every line."""
    nb.setdefault("metadata", {})["colab"] = {"provenance": []}
    for cell in nb["cells"]:
        meta = cell.setdefault("metadata", {})
        if cell.get("id"):
            meta["id"] = cell["id"]
        if cell["cell_type"] == "code":
            meta["colab"] = {"base_uri": "https://localhost:8080/"}
        lines = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        text = "\n".join(line.rstrip() for line in lines.split("\n"))
        cell["source"] = text.splitlines(True)


def build_class(root: Path, submitted: Path, only: Sequence[str] | None = None) -> list[str]:
    """Write the sample students' submissions under ``submitted/<id>/week4``.

    ``only``: just these students (a part of the class, e.g. for a short GPU run).
    """
    released = sorted(p.stem for p in (root / "release" / ASSIGNMENT).glob("*.ipynb"))
    everyone = sample_students()
    unknown = sorted(set(only or ()) - set(everyone))
    if unknown:
        raise ValueError(f"no sample student called {', '.join(unknown)}; the class is "
                         f"{', '.join(sorted(everyone))}")
    ids = []
    handin.reset(root)
    for sid, spec in sorted(everyone.items()):
        if only and sid not in only:
            continue
        wanted = released if spec.NOTEBOOKS == "all" else spec.NOTEBOOKS
        if getattr(spec, "HANDIN", None):
            release = {nb: json.loads((root / "release" / ASSIGNMENT / f"{nb}.ipynb")
                                      .read_text()) for nb in released}
            handin.write(root, submitted, sid, spec,
                         {nb: build_notebook(root, nb, spec) for nb in wanted}, release)
            ids.append(sid)
            continue
        folder = submitted / sid / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        for notebook in wanted:
            nb = build_notebook(root, notebook, spec)
            indent = 2 if getattr(spec, "ROUND_TRIP", None) == "colab" else 1
            (folder / f"{notebook}.ipynb").write_text(
                json.dumps(nb, indent=indent, ensure_ascii=False), encoding="utf-8")
        for name, text in getattr(spec, "BESIDE", {}).items():
            (folder / name).write_text(text, encoding="utf-8")
        ids.append(sid)
    return ids


def expected_scores(gpu: bool = False) -> dict[str, dict[str, float]]:
    """What each sample student should score, per notebook."""
    out = {}
    for sid, spec in sample_students().items():
        exp = dict(spec.EXPECTED)
        if gpu:
            exp.update(getattr(spec, "EXPECTED_GPU", {}))
        out[sid] = exp
    return out


def compare(actual: dict[str, dict], gpu: bool = False, only_present: bool = False
            ) -> list[str]:
    """Differences between a graded class (harness --json) and the expected scores.

    ``only_present``: compare only the students in the table (a part of the class was graded).
    """
    problems = []
    for sid, expected in sorted(expected_scores(gpu).items()):
        got = actual.get(sid)
        if got is None and only_present:
            continue
        if got is None:
            problems.append(f"{sid}: missing from the grade table")
            continue
        for notebook, points in expected.items():
            score = got["scores"].get(notebook, [0.0, 0.0])[0]
            if abs(score - points) > 1e-9:
                problems.append(f"{sid} {notebook}: got {score:g}, expected {points:g}")
    return problems
