"""Notebooks with nothing graded keep the student's outputs and are not run again
(autograder/grading/ungraded.py; docs/grading.md, "Notebooks with nothing graded")."""

from __future__ import annotations

import json
import os
from pathlib import Path

import nbformat
import pytest

from autograder.grading import ungraded
from autograder.grading.execute import NOTES_KEY, SurvivingExecute
from autograder.sandbox import bwrap as sandbox
from autograder.sandbox import kernel_server

ROOT = Path(__file__).resolve().parents[1]


def _course(tmp_path: Path) -> Path:
    course = tmp_path / "course"
    (course / "source" / "week4").mkdir(parents=True)
    graded = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1", metadata={"nbgrader": {
            "grade": True, "grade_id": "t", "points": 1, "solution": False, "locked": True}})])
    plain = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import course")])
    nbformat.write(graded, course / "source" / "week4" / "graded.ipynb")
    nbformat.write(plain, course / "source" / "week4" / "plain.ipynb")
    return course


def _res(name: str) -> dict:
    return {"nbgrader": {"notebook": name, "student": "s", "assignment": "week4"}}


def test_what_is_graded_is_read_from_the_course_source_not_the_submission(tmp_path) -> None:
    course = _course(tmp_path)
    assert ungraded.nothing_graded(course, _res("plain")) is True
    # a submission of the graded notebook with every bit of metadata stripped is still graded
    assert ungraded.nothing_graded(course, _res("graded")) is False
    assert ungraded.nothing_graded(course, _res("renamed_by_student")) is False
    assert ungraded.nothing_graded(course, _res("../source/week4/plain")) is False
    assert ungraded.nothing_graded(None, _res("plain")) is False


def test_the_course_has_exactly_two_notebooks_with_nothing_graded() -> None:
    names = sorted(p.stem for p in (ROOT / "source" / "week4").glob("*.ipynb")
                   if ungraded.nothing_graded(ROOT, _res(p.stem)))
    assert names == ["00_setup", "04_writeup_experiment"]


def _handed_in() -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell("plot()", execution_count=3)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1.9 TFLOP/s\n"),
                    nbformat.v4.new_output("display_data",
                                           data={"text/plain": "x" * 5000})]
    crash = nbformat.v4.new_code_cell("import os\nos._exit(3)")
    return nbformat.v4.new_notebook(cells=[cell, crash])


@pytest.mark.parametrize("language, words", [("en", "Not run again at grading"),
                                             ("ko", "채점")])
def test_kept_outputs_are_cut_at_the_limit_and_the_feedback_says_why(language, words) -> None:
    nb = ungraded.keep_as_handed_in(_handed_in(), language, output_limit=1000)
    note, cell = nb.cells[0], nb.cells[1]
    assert note.cell_type == "markdown" and words in note.source
    assert note.metadata["course"] == ungraded.NOTE_MARK["course"]
    assert cell.outputs[0].text == "1.9 TFLOP/s\n" and cell.execution_count == 3
    assert len(cell.outputs) == 2 and "output cut" in cell.outputs[1].text or \
        "출력" in cell.outputs[1].text


def test_clear_output_keeps_an_ungraded_notebook_and_clears_a_graded_one(tmp_path,
                                                                          monkeypatch) -> None:
    course = _course(tmp_path)
    monkeypatch.setenv(sandbox.ROOT_ENV, str(course))
    clear = ungraded.ClearOutputOfGraded()
    kept, _ = clear.preprocess(_handed_in(), _res("plain"))
    cleared, _ = clear.preprocess(_handed_in(), _res("graded"))
    assert kept.cells[0].outputs and not cleared.cells[0].outputs


def test_an_ungraded_notebook_starts_no_kernel(tmp_path, monkeypatch) -> None:
    course = _course(tmp_path)
    monkeypatch.setenv(sandbox.ROOT_ENV, str(course))
    started = []
    monkeypatch.setattr(kernel_server, "server_for", lambda *a, **k: started.append(a))
    monkeypatch.setattr(SurvivingExecute, "start_new_kernel",
                        lambda *a, **k: started.append("kernel"))
    ex = SurvivingExecute(kernel_name="python3", timeout=5)
    nb, res = ex.preprocess(_handed_in(), {**_res("plain"), "metadata": {"path": str(tmp_path)}})
    assert started == [] and res[NOTES_KEY] == []
    assert nb.cells[1].outputs[0].text == "1.9 TFLOP/s\n"
    assert nb.cells[2].outputs == []  # the cell that would crash a kernel was not run
    assert os.environ.get(kernel_server.SERVER_ENV) is None
    assert json.dumps(nb.cells[0].metadata) == json.dumps(ungraded.NOTE_MARK)
