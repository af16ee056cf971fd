"""Notebooks with nothing graded are not run again at grading: the student's outputs stay.

``00_setup`` and ``04_writeup_experiment`` have no test, no answer cell and nothing graded by
hand. Running them at grading cost a sandboxed kernel each (3-4 CPU-s per student) and showed
the student less than they had: the grading kernel has no GPU, so the write-up's experiment
ran on Numba's simulator there, while the student's own notebook shows what *their* GPU
measured. So such a notebook keeps the outputs it was handed in with (cut to the same output
limit as a run, and cleaned for viewing like every output), and its feedback opens with a
sentence saying it was not run again (docs/grading.md, "Notebooks with nothing graded").

Which notebooks have nothing graded is read from the course's *source* notebook, never from
the submission: a student who strips the metadata of a graded notebook does not make it
"ungraded". A notebook without a source (renamed, extra) is run as before.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from nbformat import v4
from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import ClearOutput

from autograder.grading import outputs
from autograder.runner.names import ASSIGNMENT
from autograder.sandbox.bwrap import course_root
from course.runtime import i18n

#: the opening cell's metadata mark (tests and the viewing code can find it)
NOTE_MARK = {"course": {"note": "not-run-at-grading"}}
N_ = i18n.N_
NOTE = N_("**Not run again at grading.** Nothing in this notebook is graded, so the grader "
          "did not run it: the outputs below are the ones you handed in.")


@lru_cache(maxsize=64)
def _source_has_graded_cells(path: str, mtime: float) -> bool:
    cells = json.loads(Path(path).read_text(encoding="utf-8")).get("cells", [])
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade") or meta.get("task") or meta.get("solution"):
            return True
    return False


def nothing_graded(course_root: Path | str | None, resources: Any) -> bool:
    """Whether the course's source of this notebook has no graded, task or answer cell."""
    name = ((resources or {}).get("nbgrader") or {}).get("notebook")
    if not course_root or not isinstance(name, str) or "/" in name or name.startswith("."):
        return False
    source = Path(course_root, "source", ASSIGNMENT, f"{name}.ipynb")
    try:
        return not _source_has_graded_cells(str(source), source.stat().st_mtime)
    except (OSError, ValueError):
        return False  # no source to read: run it, as before


class ClearOutputOfGraded(ClearOutput):
    """nbgrader's ``ClearOutput``, except for a notebook with nothing graded (kept as handed in)."""

    def preprocess(self, nb: NotebookNode, resources: Any):
        if nothing_graded(course_root(), resources):
            return nb, resources
        return super().preprocess(nb, resources)


def keep_as_handed_in(nb: NotebookNode, language: str, output_limit: int) -> NotebookNode:
    """The handed-in notebook for its feedback: outputs cut at ``output_limit`` bytes (as a
    run's would be), execution counts kept, and an opening cell saying it was not run."""
    used, cut = 0, False
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        kept = []
        for output in cell.get("outputs", []):
            counted = outputs.size(output)
            if cut or used + counted > output_limit:
                if not cut:
                    cut = True
                    kept.append(outputs.cut_notice(language, output_limit))
                continue
            used += counted
            kept.append(output)
        cell.outputs = kept
    note = v4.new_markdown_cell(i18n.in_language(language, NOTE))
    note.metadata.update(json.loads(json.dumps(NOTE_MARK)))
    nb.cells.insert(0, note)
    return nb
