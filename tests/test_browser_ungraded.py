"""A notebook with nothing graded keeps the outputs it was handed in with
(autograder/grading/ungraded.py): outputs the grader never produced reach the feedback page.
Opened in real Chromium through the course's own steps — kept (not cleared), not run, cleaned
for viewing, rendered by the feedback's exporter, protected — a hostile notebook's outputs run
nothing and load nothing, and the page still says why its outputs are the student's own.

A control page first: the same notebook rendered by nbconvert without the course's cleaning
does run its payloads (a dialog opens), so the quiet page proves the cleaning.
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest

from autograder.grading.execute import SurvivingExecute
from autograder.grading.ungraded import ClearOutputOfGraded
from autograder.sandbox.bwrap import ROOT_ENV
from autograder.viewing.feedback import MATHJAX, protect_page
from autograder.viewing.notebook import CleanForViewing
from tests import test_browser as lab
from tests.test_viewing import _exporter, _hostile_notebook

pytestmark = [pytest.mark.browser]
NOTEBOOK = "04_writeup_experiment"


def test_kept_outputs_of_a_notebook_with_nothing_graded_run_nothing(tmp_path: Path,
                                                                     monkeypatch) -> None:
    course = tmp_path / "course"
    (course / "source" / "week4").mkdir(parents=True)
    nothing_graded = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import course")])
    nbformat.write(nothing_graded, course / "source" / "week4" / f"{NOTEBOOK}.ipynb")
    monkeypatch.setenv(ROOT_ENV, str(course))
    resources = {"nbgrader": {"notebook": NOTEBOOK, "student": "s", "assignment": "week4"},
                 "metadata": {"path": str(tmp_path)}, "unique_key": NOTEBOOK}

    handed_in = _hostile_notebook()
    # plain nbconvert refuses a missing attachment (the cleaned page names it instead)
    handed_in.cells[0].source = handed_in.cells[0].source.replace("![m](attachment:gone.png)", "")
    control = tmp_path / "control.html"
    control.write_text(_exporter("classic", clean=False).from_notebook_node(
        copy.deepcopy(handed_in))[0])
    nb, _ = ClearOutputOfGraded().preprocess(handed_in, resources)
    nb, _ = SurvivingExecute(kernel_name="python3", timeout=5).preprocess(nb, resources)
    assert nb.cells[3].outputs, "the handed-in outputs were not kept"
    nb, _ = CleanForViewing().preprocess(nb, resources)
    feedback = tmp_path / f"{NOTEBOOK}.html"
    # what GetGrades hands nbgrader's feedback template (a notebook worth nothing)
    resources["nbgrader"].update(score=0, max_score=0, late_penalty=0)
    feedback.write_text(_exporter("feedback", clean=True).from_notebook_node(nb, resources)[0])
    assert protect_page(feedback)

    with lab.static_page({"width": 1200, "height": 1600}) as (page, dialogs, requests):
        page = lab.payload_runs_on(page, control, None, dialogs, requests)

        page.goto(feedback.as_uri())
        page.wait_for_timeout(1500)
        assert page.get_by_text("Not run again at grading", exact=False).count() == 1
        assert page.get_by_text("My answer.", exact=False).count() > 0
        assert page.locator("iframe, object, embed").count() == 0
        lab.ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(lab.ARTIFACTS / "week4-ungraded-feedback.png"), full_page=True)
    assert not dialogs, dialogs
    foreign = [r for r in requests if not r.startswith(("data:", "file://", MATHJAX))]
    assert foreign == [], foreign
