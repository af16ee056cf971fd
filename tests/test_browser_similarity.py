"""The similarity report opened in real Chromium with hostile content: a student's code,
comments and folder name full of HTML and script. Nothing runs, nothing loads, the hostile
text shows as text and the matching lines are marked (autograder/similarity/report_html.py).

A control page first: the same payloads written into a page raw do run (a dialog opens,
a request reaches the beacon), so the test would see them if the report let them through.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder.runner.names import ASSIGNMENT
from autograder.similarity import command
from tests import test_browser as lab

ROOT = Path(__file__).resolve().parents[1]
BEACON = "http://127.0.0.1:47619"
PAYLOAD = (f'</pre><script>alert("pwned");fetch("{BEACON}/script")</script>'
           f'<img src="{BEACON}/img" onerror="alert(1)">'
           f'<style>body{{background:url({BEACON}/css)}}</style>')
#: a folder name is what the student called themselves (no "/" in it)
HOSTILE_ID = '<img src=x onerror=alert(2)>'

pytestmark = [pytest.mark.browser]


def _stage(course: Path) -> None:
    """Two students with one kernel between them, payloads in code, comments and a name."""
    from sample_class import build_notebook
    from sample_class.similarity.students import copier_fox_one_kernel, honest_bodhi

    for name in ("release", "release-ko", "source"):
        (course / name).symlink_to(ROOT / name)
    notebook = "03c_tiled_gemm_cuda"
    for sid, spec in ((HOSTILE_ID, honest_bodhi), ("fox", copier_fox_one_kernel)):
        answers = {gid: src.replace("{\n", "{\n    // " + PAYLOAD + "\n", 1)
                   .replace('r"""\n', 'r"""\n/* ' + PAYLOAD + ' */\n', 1)
                   for gid, src in spec.ANSWERS[notebook].items()}
        student = SimpleNamespace(BASE="release", ANSWERS={notebook: answers})
        folder = course / "submitted" / sid / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / f"{notebook}.ipynb").write_text(
            json.dumps(build_notebook(ROOT, notebook, student)), encoding="utf-8")


def test_the_report_runs_nothing_and_shows_the_matches(tmp_path: Path) -> None:
    course = tmp_path / "course"
    course.mkdir()
    _stage(course)
    assert command.main(course) == 0
    report = course / "similarity.html"
    control = tmp_path / "control.html"
    control.write_text(f"<html><body><pre>{PAYLOAD}</pre></body></html>")
    with lab.static_page({"width": 1400, "height": 1000}) as (page, dialogs, requests):
        page = lab.payload_runs_on(page, control, BEACON, dialogs, requests)

        page.goto(report.as_uri())
        page.wait_for_timeout(1500)
        marks = page.locator("mark")
        assert marks.count() > 10
        assert marks.first.is_visible()
        assert page.get_by_text("<script>alert", exact=False).count() > 0  # shown as text
        assert page.get_by_text(HOSTILE_ID, exact=False).count() > 0
        assert page.locator("script, img, iframe, object, embed").count() == 0
        page.screenshot(path=str(lab.ARTIFACTS / "week4-similarity-hostile.png"),
                        full_page=False)
    assert not dialogs, dialogs
    assert requests == [report.as_uri()], requests
