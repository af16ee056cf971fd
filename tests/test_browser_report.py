"""The class report opened in real Chromium with a hostile student: an id full of HTML and
script, and a failed check's message that carries script and a remote image. Nothing runs,
nothing loads, the hostile text shows as text and the pictures show
(autograder/report/page.py).

A control page first: the same payloads written into a page raw do run (a dialog opens, a
request reaches the beacon), so the test would see them if the report let them through.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.report import command
from autograder.report.records import build
from tests import test_browser as lab
from tests.test_report import HOSTILE_ID, NOTEBOOKS, PAYLOAD, PEOPLE, synthetic_class

BEACON = "http://127.0.0.1:47620"

pytestmark = [pytest.mark.browser]


@pytest.mark.parametrize("with_leaderboard", [True])
def test_the_report_runs_nothing_and_shows_its_pictures(tmp_path: Path,
                                                        with_leaderboard: bool) -> None:
    rows, summaries = synthetic_class()
    report = command.write(tmp_path / "report", build(NOTEBOOKS, rows, summaries, PEOPLE),
                           with_leaderboard)
    board = report.parent / "leaderboard.html"
    control = tmp_path / "control.html"
    control.write_text(f"<html><body><p>{PAYLOAD}</p></body></html>")
    with lab.static_page({"width": 1300, "height": 1800}) as (page, dialogs, requests):
        page = lab.payload_runs_on(page, control, BEACON, dialogs, requests)

        page.goto(report.as_uri())
        page.wait_for_timeout(1500)
        assert page.get_by_text('<script>alert("msg")', exact=False).count() > 0  # as text
        assert page.get_by_text(HOSTILE_ID, exact=False).count() > 0
        assert page.locator("script, iframe, object, embed").count() == 0
        images = page.locator("img")
        assert images.count() >= 5  # scores, mistakes, speeds, two rooflines
        widths = images.evaluate_all("els => els.map(e => e.naturalWidth)")
        assert all(w > 100 for w in widths), widths  # every picture shown (data: allowed)
        lab.ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(lab.ARTIFACTS / "week4-report-hostile.png"), full_page=True)

        page.goto(board.as_uri())
        page.wait_for_timeout(500)
        assert page.locator("table tr").count() >= 2
        page.screenshot(path=str(lab.ARTIFACTS / "week4-leaderboard.png"))
    assert not dialogs, dialogs
    assert [r for r in requests if not r.startswith("data:")] == [
        report.as_uri(), board.as_uri()], requests
