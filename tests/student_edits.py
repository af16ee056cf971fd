"""Random student edits of the release notebooks, and the course's real sanitize pipeline.

What a submission's score depends on: nbgrader records, for every test cell, the verdict of the
trusted re-check (:mod:`autograder.grading.trusted`), which runs the test cell's code (the
instructor's, from the gradebook) on the *definitions* it needs, rebuilt from the code cells
above it (:func:`autograder.grading.trusted.make_job`). Execution in the student's kernel is
compared with that verdict but never scored. So two submissions that reach the end of the
sanitize step with the same graded cells (ids, points, answers' sources for hand grading) and
the same job for every test cell get the same score: the job is all the re-check sees.
:func:`structure` is that fingerprint, taken after the course's sanitize preprocessors —
nbgrader's ClearOutput, OverwriteKernelspec, OverwriteCells and CheckCellMetadata, with this
course's NormaliseCells, configured by :func:`autograder.grading.config.configure` exactly as
``nbgrader autograde`` is — ran on the notebook as nbgrader reads it from disk. A structure
problem that would end in GRADING FAILED raises there. Whether equal fingerprints really grade
equal is checked end to end on notebook 01 (``tests/test_edits.py``).
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat
from hypothesis import strategies as st

from autograder.release.translation import LANGUAGES as TRANSLATED
from autograder.release.translation import SOURCE_LANGUAGE, release_dir
from autograder.runner.names import ASSIGNMENT
from autograder.runner.worker import nbgrader_env
from sample_class import build_notebook, edits

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p.stem for p in (ROOT / "release" / ASSIGNMENT).glob("*.ipynb"))
#: every release a student may work on: the English one and its translations
LANGUAGES = (SOURCE_LANGUAGE, *TRANSLATED)
KERNELS = [("week4-gpu", "Week 4 (GPU)", "python"), ("ir", "R", "R"),
           ("python3", "Python 3 (ipykernel)", "python"), ("", "", "")]
SCRATCH_CODE = ["# trying things\n", "scratch_n = 3 * 4\nprint(scratch_n)\n",
                "import numpy as np\nprint(np.arange(4))\n", "print('hello')"]
SCRATCH_MD = ["My notes.", "## Scratch\n\nTo do: check the ragged case.", ""]


def make_course(where: Path) -> Path:
    """A course directory with the release built and the gradebook filled, as nbgrader does
    (``nbgrader generate_assignment``), and the translated releases beside it."""
    course = where / "course"
    shutil.copytree(ROOT / "source", course / "source")
    for language in TRANSLATED:
        shutil.copytree(release_dir(ROOT, language), release_dir(course, language))
    shutil.copy(ROOT / "nbgrader_config.py", course)
    subprocess.run([sys.executable, "-m", "nbgrader", "generate_assignment", ASSIGNMENT,
                    "--force", "--log-level=ERROR"], cwd=course, check=True,
                   capture_output=True, env=nbgrader_env())
    return course


def solved(notebook: str, language: str = SOURCE_LANGUAGE) -> dict[str, Any]:
    """The release notebook (of ``language``) with the instructor's answers, as the sample
    students' base."""
    spec = SimpleNamespace(BASE="solutions", LANGUAGE=language)
    return build_notebook(ROOT, notebook, spec)  # type: ignore[arg-type]


def sanitize(course: Path, notebook: str, nb: dict[str, Any]) -> nbformat.NotebookNode:
    """Run the course's sanitize preprocessors (autograde's first half) on ``nb`` as nbgrader
    reads it from disk; raise what nbgrader would raise."""
    from traitlets.config import Config

    from autograder.grading.config import configure

    c = Config()
    configure(c, course)
    node = nbformat.reads(json.dumps(nb), as_version=4)
    resources = {"nbgrader": {"notebook": notebook, "assignment": ASSIGNMENT,
                              "db_url": f"sqlite:///{course / 'gradebook.db'}"},
                 "unique_key": notebook, "metadata": {"path": str(course)}}
    for pp in c.Autograde.sanitize_preprocessors:
        node, resources = pp(config=c).preprocess(node, resources)
    return node


_ATTACHMENT = re.compile(r"attachment:([^)\s\"'>]+)")


def missing_attachments(nb: nbformat.NotebookNode) -> list[str]:
    """Figures a markdown cell links (``attachment:name``) but does not carry: nbconvert, and
    so ``nbgrader generate_feedback``, fails on them."""
    return [f"{cell.metadata.get('nbgrader', {}).get('grade_id')}: {name}"
            for cell in nb.cells if cell.cell_type == "markdown"
            for name in _ATTACHMENT.findall(cell.source)
            if name not in (cell.get("attachments") or {})]


def structure(nb: nbformat.NotebookNode) -> dict[str, Any]:
    """What the score depends on (see the module docstring), and the figures the feedback
    cannot find."""
    from autograder.grading.trusted import is_test_cell, make_job

    graded, jobs = [], []
    for i, cell in enumerate(nb.cells):
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade") or meta.get("solution"):
            graded.append((meta["grade_id"], cell.cell_type, meta.get("points"),
                           cell.source if meta.get("grade") and meta.get("solution") else ""))
        if is_test_cell(cell):
            jobs.append(make_job(nb.cells[:i], cell))
    return {"graded": graded, "jobs": jobs, "missing_attachments": missing_attachments(nb)}


# --------------------------------------------------------------------------- random edits

def _graded(cell: dict[str, Any]) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader") or {}
    return bool(meta.get("grade") or meta.get("solution") or meta.get("task"))


@st.composite
def edited(draw: st.DrawFn, notebook: str, language: str = SOURCE_LANGUAGE
           ) -> tuple[dict[str, Any], list[str]]:
    """A solved notebook after a few random student edits; returns it and what was done."""
    nb = copy.deepcopy(solved(notebook, language))
    done: list[str] = []
    for _ in range(draw(st.integers(1, 6))):
        n = len(nb["cells"])
        what = draw(st.sampled_from(["duplicate", "scratch", "delete", "swap", "paste",
                                     "retype"]))
        if what == "duplicate":
            at = draw(st.integers(0, n - 1))
            edits.duplicate(nb, at)
            done.append(f"duplicate {at}")
        elif what == "scratch":
            at = draw(st.integers(0, n))
            if draw(st.booleans()):
                edits.insert(nb, at, "code", draw(st.sampled_from(SCRATCH_CODE)))
            else:
                edits.insert(nb, at, "markdown", draw(st.sampled_from(SCRATCH_MD)))
            done.append(f"scratch at {at}")
        elif what == "delete":
            free = [i for i, c in enumerate(nb["cells"]) if not _graded(c)]
            if free:
                at = draw(st.sampled_from(free))
                del nb["cells"][at]
                done.append(f"delete {at}")
        elif what == "swap":
            pairs = [i for i in range(n - 1)
                     if not _graded(nb["cells"][i]) and not _graded(nb["cells"][i + 1])]
            if pairs:
                at = draw(st.sampled_from(pairs))
                nb["cells"][at], nb["cells"][at + 1] = nb["cells"][at + 1], nb["cells"][at]
                done.append(f"swap {at}")
        elif what == "retype":  # a read-only cell turned code <-> markdown by a stray key
            free = [i for i, c in enumerate(nb["cells"]) if not _graded(c)]
            if free:
                at = draw(st.sampled_from(free))
                edits.retype(nb, at)
                done.append(f"retype {at}")
        else:  # a cell pasted from another notebook of the week, metadata and all
            other = solved(draw(st.sampled_from([x for x in NOTEBOOKS if x != notebook])),
                           language)
            cell = copy.deepcopy(draw(st.sampled_from(other["cells"])))
            at = draw(st.integers(0, n))
            nb["cells"].insert(at, cell)
            if "id" in cell:
                cell["id"] = edits.new_id(nb)
            done.append(f"paste a cell of another notebook at {at}")
    fmt = draw(st.sampled_from(["4.4", "4.5", "4.5 without ids", "4.10"]))
    if fmt != "4.5":
        if fmt != "4.10":
            edits.strip_ids(nb)
        nb["nbformat_minor"] = {"4.4": 4, "4.5 without ids": 5, "4.10": 10}[fmt]
    done.append(f"nbformat {fmt}")
    if draw(st.booleans()):
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                cell["outputs"], cell["execution_count"] = [], None
        done.append("outputs cleared")
    else:
        for k, cell in enumerate(nb["cells"]):
            if cell["cell_type"] == "code":
                cell["execution_count"] = k + 1
                cell["outputs"] = [{"output_type": "stream", "name": "stdout",
                                    "text": f"output {k}\n"}]
        done.append("outputs kept")
    name, display, language = draw(st.sampled_from(KERNELS))
    if name:
        edits.set_kernelspec(nb, name, display, language)
        done.append(f"kernelspec {name}")
    else:
        nb["metadata"].pop("kernelspec", None)
        done.append("no kernelspec")
    return nb, done
