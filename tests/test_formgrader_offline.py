"""The formgrader with no internet, in real Chromium: math renders, students are named, and
the totals are the course's (docs/grading.md, "The formgrader").

Ada's notebook 1 (formulas in its markdown) is graded by this course's harness; JupyterLab
starts as an instructor starts it, with this environment's server extensions
(jupyter-server-mathjax, :mod:`autograder.viewing.mathjax`,
:mod:`autograder.results.formgrader_totals`). Chromium refuses every request that is not to
that server — a firewalled cluster, a laptop on a train — and the test

1. opens the grading page and requires MathJax to have typeset the formulas (its rendered
   elements present, no raw ``$$`` left in the text), saves a screenshot
   (``test-artifacts/week4-formgrader-offline-math.png``), and fails on any request that
   left the server;
2. reads the formgrader's *Manage Students* data (the API its page shows) and requires the
   grade table's total and the student's id where nbgrader would write "None, None".
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from tests import test_browser as lab

STUDENT = "ada_correct"
NOTEBOOK = "01_arithmetic_intensity"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _graded(tmp: Path) -> Path:
    import sample_class as samples

    def hand_in(root: Path) -> None:
        folder = root / "submitted" / STUDENT / "week4"
        folder.mkdir(parents=True)
        nb = samples.build_notebook(root, NOTEBOOK, samples.sample_students()[STUDENT])
        (folder / f"{NOTEBOOK}.ipynb").write_text(json.dumps(nb))

    root, _ = lab.graded_course(tmp, hand_in)
    return root


def _submission_id(root: Path) -> str:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return str(gb.find_submission_notebook(NOTEBOOK, "week4", STUDENT).id)


def test_the_formgrader_renders_math_offline_and_shows_the_course_total(tmp_path: Path) -> None:
    lab._ensure_chromium()
    pytest.importorskip("jupyterlab")
    pytest.importorskip("jupyter_server_mathjax")
    sync_api = pytest.importorskip("playwright.sync_api")
    from autograder.results import table

    root = _graded(tmp_path)
    notebooks, rows = table.collect(root)
    (row,) = rows
    expected = table.total(row, notebooks)
    submission = _submission_id(root)
    port, token = lab._free_port(), secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    left: list[str] = []
    missing: list[str] = []
    with open(tmp_path / "lab.log", "w") as log:
        server = lab._start_lab(tmp_path, root, port, log, token=token)
        try:
            with sync_api.sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(lab.CHROMIUM), args=lab.ARGS)
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                context.set_default_timeout(60_000)

                def offline(route) -> None:  # nothing but this server answers
                    if route.request.url.startswith(f"{base}/"):
                        route.continue_()
                    else:
                        left.append(route.request.url)
                        route.abort()

                context.route("**/*", offline)
                page = context.new_page()
                # MathJax asks for more files as it goes (fonts, extensions): each must be there
                page.on("response", lambda r: missing.append(f"{r.status} {r.url}")
                        if r.status >= 400 and "/static/" in r.url else None)
                page.goto(f"{base}/formgrader?token={token}")
                page.goto(f"{base}/formgrader/submissions/{submission}/")
                page.wait_for_function("() => window.MathJax && MathJax.Hub "
                                       "&& MathJax.Hub.queue.pending === 0 "
                                       "&& document.querySelectorAll('.MathJax, .MathJax_Display,"
                                       " .MathJax_CHTML, .MathJax_SVG').length > 0")
                typeset = page.locator(".MathJax, .MathJax_Display").count()
                raw = page.evaluate("() => document.querySelector('#notebook-container, body')"
                                    ".innerText.includes('$$')")
                lab.ARTIFACTS.mkdir(exist_ok=True)
                shot = lab.ARTIFACTS / "week4-formgrader-offline-math.png"
                page.wait_for_timeout(3000)  # the formgrader's own script settles (focus)
                page.evaluate("() => document.querySelector('.MathJax_Display')"
                              ".scrollIntoView({block: 'center'})")
                page.wait_for_timeout(500)
                page.screenshot(path=str(shot))  # the first formulas, typeset
                students = json.loads(page.evaluate(
                    "async (b) => (await fetch(b + '/formgrader/api/students')).text()", base))
                submissions = json.loads(page.evaluate(
                    "async (b) => (await fetch(b + '/formgrader/api/submissions/week4')).text()",
                    base))
                page.goto(f"{base}/formgrader/manage_students")
                page.get_by_text(STUDENT).first.wait_for()
                names = page.locator("td a").all_inner_texts()
                browser.close()
        finally:
            lab._stop(server)
    assert left == [], f"the formgrader asked for something off this server: {left}"
    assert typeset > 0 and not raw, (typeset, raw)
    assert missing == [], f"files MathJax asked for were not served: {missing}"
    (ada,) = [s for s in students if s["id"] == STUDENT]
    assert (ada["score"], ada["max_score"]) == expected, (ada, expected)
    (sub,) = [s for s in submissions if s["student"] == STUDENT]
    assert (sub["score"], sub["max_score"]) == expected, (sub, expected)
    assert not any("None" in name for name in names), names
    assert any(name.startswith(STUDENT) for name in names), names
    print(f"screenshot: {shot}; {typeset} formulas typeset offline; total {expected}")
