"""Put a submission's cells back in shape before nbgrader grades it: no grade is lost to an edit.

nbgrader knows a cell by ``metadata.nbgrader.grade_id``. A student who deletes a test cell, or
whose notebook lost its metadata on the way (another editor, a download/upload round trip,
a cell retyped by hand in Colab, which has no way to show or keep cell metadata), would
otherwise lose points for work that is there — or, with nbgrader 0.9's own
``add_missing_cells``, the whole notebook: it looks up the cell *before* a deleted test
cell among the graded cells only, and raises ``KeyError`` when that neighbour is markdown.

:class:`RestoreCells` runs in autograde's sanitize step, before ``OverwriteCells``:

1. **Recognise** every cell that has no (known) ``grade_id`` against the release notebook the
   student was given: by cell id (nbformat's ``id``, or Colab's copy in ``metadata.id``),
   then by source (trailing whitespace ignored: Colab trims it on save), then by position —
   cells between two recognised neighbours are paired, in order and by type, with the
   release cells between the same neighbours (that is how an answer cell, whose source the
   student rewrote, is found). The release is the one of the notebook's language
   (:mod:`autograder.grading.languages`): ``release-ko/week4`` for a Korean notebook.
2. **Restore** the release's ``metadata.nbgrader`` on each recognised cell. ``OverwriteCells``
   then puts back the instructor's source of every test cell, hidden tests included.
3. **Add back** graded cells and read-only code cells that are missing altogether, right
   after the cell that precedes them in the release (a test may need the instructor's
   imports and helpers: a deleted one would fail it).

What was done is written into the notebook's metadata (:data:`RESTORED_KEY`); the trusted
re-check copies it into its summary and the grade table says so. A course directory without the
release notebook is an error, not a notebook graded as it is: that would leave a deleted test
cell to the grader instead of scoring it, a different grade for the same submission.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from nbformat.notebooknode import NotebookNode, from_dict
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode

from autograder.grading.languages import notebook_language, release_notebook
from autograder.runner.cells import cell_text, nbgrader_meta
from autograder.runner.cells import metadata as cell_metadata

RESTORED_KEY = "course_restored"


def normalised(source: str) -> str:
    """Source with trailing whitespace dropped from every line and blank lines trimmed."""
    return "\n".join(line.rstrip() for line in source.strip("\n").splitlines()).strip()


def cell_ids(cell: dict[str, Any]) -> set[str]:
    """A cell's ids: nbformat 4.5's ``id`` and the older ``metadata.id``."""
    ids = {cell.get("id"), cell_metadata(cell).get("id")}
    return {i for i in ids if isinstance(i, str) and i}


def recognise(cells: list[dict[str, Any]], release: list[dict[str, Any]]) -> dict[int, int]:
    """Map submission cell index -> release cell index for every cell that can be recognised.

    Cells that carry a ``grade_id`` of the release keep it. The others are matched by id, by
    source, then by position between recognised neighbours (see the module docstring).
    """
    by_gid = {nbgrader_meta(c).get("grade_id"): i for i, c in enumerate(release)
              if nbgrader_meta(c).get("grade_id")}
    match: dict[int, int] = {}
    taken: set[int] = set()

    def pair(i: int, j: int) -> None:
        match[i] = j
        taken.add(j)

    for i, cell in enumerate(cells):
        j = by_gid.get(nbgrader_meta(cell).get("grade_id"))
        if j is not None and j not in taken:
            pair(i, j)
    by_id = {cid: j for j, c in enumerate(release) for cid in cell_ids(c)}
    for i, cell in enumerate(cells):
        if i in match:
            continue
        for cid in cell_ids(cell):
            j = by_id.get(cid)
            if j is not None and j not in taken and release[j]["cell_type"] == cell["cell_type"]:
                pair(i, j)
                break
    by_source: dict[tuple[str, str], list[int]] = {}
    for j, c in enumerate(release):
        by_source.setdefault((c["cell_type"], normalised(cell_text(c))), []).append(j)
    for i, cell in enumerate(cells):
        if i in match or not normalised(cell_text(cell)):
            continue
        for j in by_source.get((cell["cell_type"], normalised(cell_text(cell))), []):
            if j not in taken:
                pair(i, j)
                break
    # Position: between two recognised neighbours, pair the rest in order and by type.
    anchors = sorted((i, j) for i, j in match.items())
    bounds = [(-1, -1), *anchors, (len(cells), len(release))]
    for (i0, j0), (i1, j1) in zip(bounds, bounds[1:], strict=False):
        if j1 <= j0:
            continue  # the student reordered cells: no safe pairing in this gap
        free = [j for j in range(j0 + 1, j1) if j not in taken]
        for i in range(i0 + 1, i1):
            if i in match:
                continue
            for j in free:
                if release[j]["cell_type"] == cells[i]["cell_type"]:
                    pair(i, j)
                    free.remove(j)
                    break
    return match


def _wanted_back(cell: dict[str, Any]) -> bool:
    """Release cells that must exist for grading: tests, graded answers, tasks, and read-only
    code (the instructor's imports and helpers, which tests may need)."""
    meta = nbgrader_meta(cell)
    return bool(meta.get("grade") or meta.get("task")
                or (cell["cell_type"] == "code" and meta.get("locked")))


def restore(nb: dict[str, Any], release: dict[str, Any]) -> dict[str, list[str]]:
    """Recognise, restore and add back cells of ``nb`` (in place); return what was done."""
    cells, rel = nb["cells"], release["cells"]
    match = recognise(cells, rel)
    restored = []
    for i, j in sorted(match.items()):
        want = copy.deepcopy(nbgrader_meta(rel[j]))
        if not want or nbgrader_meta(cells[i]).get("grade_id") == want.get("grade_id"):
            continue
        cells[i].setdefault("metadata", {})["nbgrader"] = want
        restored.append(want["grade_id"])
    present = {j for j in match.values()}
    position = {j: i for i, j in match.items()}
    used_ids = {c.get("id") for c in cells if c.get("id")}
    with_ids = nb.get("nbformat", 4) > 4 or nb.get("nbformat_minor", 0) >= 5
    added: list[str] = []
    read_only: list[str] = []
    for j, cell in enumerate(rel):
        if j in present or not _wanted_back(cell):
            continue
        before = [position[k] for k in range(j) if k in position]
        at = (max(before) + 1) if before else 0
        new = copy.deepcopy(cell)
        new["source"] = cell_text(cell)
        new.pop("id", None)
        if with_ids:
            cid = cell.get("id") or nbgrader_meta(cell)["grade_id"]
            while cid in used_ids:
                cid = f"{cid}-restored"
            new["id"] = cid
            used_ids.add(cid)
        if new["cell_type"] == "code":
            new["outputs"], new["execution_count"] = [], None
        cells.insert(at, new)
        position = {k: (p + 1 if p >= at else p) for k, p in position.items()}
        position[j] = at
        (added if nbgrader_meta(cell).get("grade") or nbgrader_meta(cell).get("task")
         else read_only).append(nbgrader_meta(cell)["grade_id"])
    done = {"metadata_restored": restored, "cells_added": added}
    if read_only:
        done["read_only_added"] = read_only
    return done


class RestoreCells(NbGraderPreprocessor):
    """nbgrader sanitize step: recognise cells against the release and add back lost ones."""

    course_root = Unicode("", help="The course directory (holds release/).").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]):
        info = resources.get("nbgrader", {})
        root = Path(self.course_root or ".")
        # The release the student was given: release/week4, or release-ko/week4 for a Korean
        # notebook (the same graded cells; its markdown matches the Korean text).
        path = release_notebook(root, info.get("assignment", ""), info.get("notebook", ""),
                                notebook_language(nb))
        if not path.exists():
            # Grading on without it would score deleted test cells differently (left to the
            # grader instead of scored): a grade must not depend on where it was graded.
            raise FileNotFoundError(
                f"RestoreCells: no release notebook at {path}; build the release "
                "(`python -m autograder release`) in the course directory that is "
                "graded, or a deleted test cell cannot be put back")
        release = json.loads(path.read_text(encoding="utf-8"))
        raw = json.loads(json.dumps(nb))  # plain dicts, edited in place
        done = self.restore_cells(raw, release)
        out = from_dict(raw)
        if done["metadata_restored"] or done["cells_added"]:
            self.log.warning("RestoreCells %s: restored metadata of %s; added back %s",
                             info.get("notebook"), done["metadata_restored"], done["cells_added"])
        out.metadata[RESTORED_KEY] = done
        return out, resources

    def restore_cells(self, raw: dict[str, Any], release: dict[str, Any]) -> dict[str, Any]:
        """Recognise, restore and add back cells of ``raw`` (in place); what was done. A
        subclass may do more around it (:class:`autograder.grading.normalise.NormaliseCells`)."""
        return dict(restore(raw, release))
