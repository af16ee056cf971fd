"""Notebook 6 in a real JupyterLab, driven by headless Chromium: the panel works for a student,
and the instructor grades its written answer by hand in nbgrader's formgrader.

Starts JupyterLab on 127.0.0.1 (a free port) over a temporary COPY of source/week4, with an
nbgrader_config.py in the served root (course id, writable exchange) so nbgrader's pages work;
opens 06_tile_sweep.ipynb in Debian's Chromium through Playwright, runs every cell, picks tile
32, clicks "Run sweep", waits for the progress bar to reach 100 % and the plot to appear; then
the same in the Korean edition (the notebook marked "ko" in its metadata: labels, model, table
and plot in Korean, Hangul drawn with fonts-nanum), and checks that /formgrader loads in the
same server. Screenshots land in test-artifacts/ (week4-panel-ko*.png: the Korean panel).

The hand-grading test serves a real course directory instead: this course's
nbgrader_config.py, the release, and one student's notebook 6 autograded by the harness. In
JupyterLab it opens the formgrader (``nbgrader:open-formgrader``), goes Manual Grading → week4
→ 06_tile_sweep → Submission #1, gives the written answer 2 points and a comment, and checks
that the gradebook, ``harness table`` (what ``make table`` runs) and ``grades.csv`` have them.

How to drive JupyterLab here (flags, waits, pitfalls) follows what was found driving a real
JupyterLab in Chromium on these machines.
Installs what it needs: Chromium through apt-get when run as root, else the test is skipped
with the reason. Never `playwright install` (nothing can be downloaded that way here).
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run",
        "--disable-dev-shm-usage"]
NOTEBOOK = "06_tile_sweep.ipynb"
#: The same notebook marked Korean in its metadata, as the Korean release writes it: the kernel
#: finds its notebook through JupyterLab's session and speaks Korean (course.runtime.i18n).
KOREAN_NOTEBOOK = "06_tile_sweep_ko.ipynb"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@contextlib.contextmanager
def static_page(viewport: dict[str, int]) -> Iterator[tuple[object, list[str], list[str]]]:
    """Chromium on pages opened from disk (a report, a feedback file), recording every dialog a
    page opens and every request it makes: yields ``(page, dialogs, requests)``."""
    _ensure_chromium()
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(viewport=viewport)
        dialogs: list[str] = []
        requests: list[str] = []
        # every page of the context, the ones fresh_page opens included
        context.on("page", lambda p: p.on("dialog", lambda d: (dialogs.append(d.message),
                                                               d.dismiss())))
        context.on("request", lambda r: requests.append(r.url))
        page = context.new_page()
        try:
            yield page, dialogs, requests
        finally:
            browser.close()


def fresh_page(page):
    """Close ``page`` and open another in its context (the same recorders). A page whose
    payloads ran may still navigate on its own — a meta refresh to an address nothing answers
    ends on Chromium's error page — and that navigation, late on a busy machine, interrupts
    the next page's load ("interrupted by another navigation"); closing the page cancels it."""
    context = page.context
    page.close()
    return context.new_page()


def payload_runs_on(page, control: Path, beacon: str | None, dialogs: list[str],
                    requests: list[str]):
    """The hostile payload, put raw in ``control``, does run in this browser (a dialog, and a
    request to ``beacon`` unless it is None): so a page that stays quiet proves its cleaning,
    not a browser that runs nothing. Clears both records afterwards; returns a fresh page
    (:func:`fresh_page`) for what is looked at next."""
    page.goto(control.as_uri())
    page.wait_for_timeout(1000)
    assert dialogs, f"the control page ran nothing: this browser would prove nothing {requests}"
    assert beacon is None or any(beacon in r for r in requests), (dialogs, requests)
    page = fresh_page(page)
    dialogs.clear()
    requests.clear()
    return page


def _ensure_chromium() -> None:
    if CHROMIUM.exists():
        return
    if os.geteuid() != 0:
        pytest.skip(f"{CHROMIUM} is missing and this is not root: run "
                    "`apt-get install -y chromium` (or `make system-deps`) first")
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "chromium"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            pytest.skip(f"could not install chromium ({' '.join(cmd)}): {proc.stderr[-300:]}")
    if not CHROMIUM.exists():
        pytest.skip("apt-get ran but /usr/bin/chromium is still missing")


def _korean_fonts() -> str:
    return subprocess.run(["fc-list", ":lang=ko"], capture_output=True, text=True).stdout


def _ensure_korean_font() -> None:
    """Chromium draws Hangul with a system font: fonts-nanum (`make system-deps`)."""
    if shutil.which("fc-list") and _korean_fonts().strip():
        return
    if os.geteuid() != 0:
        pytest.skip("no Korean font for Chromium and this is not root: run "
                    "`apt-get install -y fonts-nanum` (or `make system-deps`) first")
    for cmd in (["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", "fonts-nanum"]):
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            pytest.skip(f"could not install fonts-nanum ({' '.join(cmd)}): {proc.stderr[-300:]}")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _served_root(tmp: Path) -> Path:
    """A copy of the week's notebooks, nbgrader's config, and clean Jupyter settings dirs."""
    root = tmp / "course"
    shutil.copytree(ROOT / "source" / "week4", root / "source" / "week4",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    korean = json.loads((root / "source" / "week4" / NOTEBOOK).read_text())
    korean["metadata"]["course"] = {"language": "ko"}
    (root / "source" / "week4" / KOREAN_NOTEBOOK).write_text(json.dumps(korean))
    exchange = tmp / "exchange"
    exchange.mkdir(mode=0o777)
    (root / "nbgrader_config.py").write_text(
        "c = get_config()  # noqa: F821\n"
        "c.CourseDirectory.course_id = 'week4-browser-test'\n"
        f"c.CourseDirectory.root = {str(root)!r}\n"
        f"c.Exchange.root = {str(exchange)!r}\n")
    settings = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    # Render every cell (no windowing), so off-screen outputs are painted for screenshots.
    notebook = tmp / "settings" / "@jupyterlab" / "notebook-extension"
    notebook.mkdir(parents=True)
    (notebook / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    for name in ("workspaces", "jupyter_config", "ipython", "mpl"):
        (tmp / name).mkdir()
    return root


def _start_lab(tmp: Path, root: Path, port: int, log, token: str | None = None
               ) -> subprocess.Popen:
    """JupyterLab over ``root``: with no token and no XSRF checks (a test's own server), or,
    given ``token``, as an instructor starts it — that token, XSRF checks on."""
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "jupyter_config"),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]),
               IPYTHONDIR=str(tmp / "ipython"), MPLCONFIGDIR=str(tmp / "mpl"),
               MPLBACKEND="module://matplotlib_inline.backend_inline")
    env.pop("NBGRADER_EXECUTION", None)
    env.pop("COURSE_LANG", None)  # each notebook's metadata chooses its language
    access = ([f"--IdentityProvider.token={token}"] if token else
              ["--ServerApp.token=", "--ServerApp.password=",
               "--ServerApp.disable_check_xsrf=True"])
    cmd = [sys.executable, "-m", "jupyter", "lab", "--allow-root", "--no-browser",
           "--ip=127.0.0.1", f"--port={port}", "--port-retries=0", *access,
           "--LabApp.expose_app_in_browser=True", f"--ServerApp.root_dir={root}",
           f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
           f"--LabApp.user_settings_dir={tmp / 'settings'}"]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    headers = {"Authorization": f"token {token}"} if token else {}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {proc.returncode}")
        try:
            urllib.request.urlopen(urllib.request.Request(
                f"http://127.0.0.1:{port}/api/status", headers=headers), timeout=2)
            return proc
        except OSError:
            time.sleep(0.5)
    raise RuntimeError("jupyter lab did not answer within 60 s")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_a_fresh_page_still_records_dialogs(tmp_path: Path) -> None:
    """The pages fresh_page opens are watched like the first: a quiet page after a control
    proves its cleaning only if a dialog there would have been seen."""
    alert = tmp_path / "alert.html"
    alert.write_text("<script>alert('seen')</script>")
    with static_page({"width": 400, "height": 300}) as (page, dialogs, _):
        page.goto(alert.as_uri())
        page.wait_for_timeout(300)
        page = fresh_page(page)
        assert dialogs == ["seen"], dialogs
        dialogs.clear()
        page.goto(alert.as_uri())
        page.wait_for_timeout(300)
        assert dialogs == ["seen"], dialogs


def test_tile_sweep_panel_in_jupyterlab(tmp_path: Path) -> None:
    _ensure_chromium()
    _ensure_korean_font()
    pytest.importorskip("jupyterlab")
    sync_api = pytest.importorskip("playwright.sync_api")
    started = time.monotonic()
    ARTIFACTS.mkdir(exist_ok=True)
    root = _served_root(tmp_path)
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with open(tmp_path / "lab.log", "w") as log:
        lab = _start_lab(tmp_path, root, port, log)
        try:
            with sync_api.sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(90_000)
                _open_and_run(page, f"{base}/lab/tree/source/week4/{NOTEBOOK}")
                panel = page.locator(".week4-panel")
                errors = _stderr_outputs(page)
                panel.scroll_into_view_if_needed()
                panel.screenshot(path=str(ARTIFACTS / "week4-panel-initial.png"))

                # The tile: the one-tile model must follow at once.
                page.locator(".week4-tile select").select_option("32")
                page.wait_for_function("() => document.querySelector('.week4-model')"
                                       ".innerText.includes('tile 32')")
                assert "1024 (32 warps)" in page.locator(".week4-model").inner_text()

                # Run the sweep: progress to 100 %, then the table and the plot.
                page.locator("button.week4-run").click()
                page.wait_for_function(
                    "() => { const b = document.querySelector('.week4-progress .progress-bar');"
                    " return b && b.style.width === '100%'; }")
                page.locator(".week4-output img").first.wait_for(state="visible")
                page.wait_for_function(
                    "() => { const i = document.querySelector('.week4-output img');"
                    " return i && i.complete && i.naturalWidth > 0; }")
                page.locator(".week4-output img").first.scroll_into_view_if_needed()
                page.wait_for_timeout(300)  # let the decoded image paint
                table = page.locator(".week4-output table").first.inner_text()
                assert "blocks/SM" in table and "tiled" in table
                panel.screenshot(path=str(ARTIFACTS / "week4-panel-after-sweep.png"))
                page.screenshot(path=str(ARTIFACTS / "week4-notebook.png"))
                page.locator(".week4-output").screenshot(
                    path=str(ARTIFACTS / "week4-panel-plot.png"))
                korean_errors = _korean_panel(page, base)

                # nbgrader's formgrader, served by the same server.
                page.goto(f"{base}/formgrader")
                page.get_by_text("Manage Assignments").first.wait_for(state="visible")
                page.screenshot(path=str(ARTIFACTS / "week4-formgrader.png"))
                browser.close()
        finally:
            _stop(lab)
    elapsed = time.monotonic() - started
    print(f"browser test: {elapsed:.1f} s; screenshots in {ARTIFACTS}")
    assert errors == 0, "a cell of notebook 6 wrote to stderr in JupyterLab"
    assert korean_errors == 0, "a cell of the Korean notebook 6 wrote to stderr in JupyterLab"
    assert elapsed < 150, f"the browser test took {elapsed:.0f} s (limit 150 s)"


def _open_and_run(page, url: str) -> None:
    """Open a notebook, wait for its kernel, run every cell, wait for the panel."""
    page.goto(url)
    page.wait_for_function("window.jupyterapp !== undefined")
    page.evaluate("() => window.jupyterapp.restored")
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " return w && w.sessionContext && w.sessionContext.session &&"
        " w.sessionContext.session.kernel &&"
        " w.sessionContext.session.kernel.status === 'idle'; }")
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.locator(".week4-panel").wait_for(state="visible")


def _stderr_outputs(page) -> int:
    return page.locator(".jp-OutputArea-output[data-mime-type="
                        "'application/vnd.jupyter.stderr']").count()


def _korean_panel(page, base: str) -> int:
    """The Korean notebook: the panel's labels, its one-tile model, the sweep's table and plot
    in Korean; screenshots of the panel before and after the sweep. Returns the number of
    stderr outputs."""
    # a workspace of its own: only this notebook is open, not the English one as well
    _open_and_run(page, f"{base}/lab/workspaces/korean/tree/source/week4/{KOREAN_NOTEBOOK}")
    panel = page.locator(".week4-panel")
    errors = _stderr_outputs(page)
    title = page.locator(".week4-title").inner_text()
    assert "타일 sweep" in title, title
    assert page.locator("button.week4-run").inner_text().strip() == "sweep 실행"
    page.locator(".week4-tile select").select_option("32")
    page.wait_for_function("() => document.querySelector('.week4-panel .week4-model')"
                           ".innerText.includes('타일 32')")
    assert "1024 (warp 32개)" in page.locator(".week4-model").inner_text()
    panel.scroll_into_view_if_needed()
    panel.screenshot(path=str(ARTIFACTS / "week4-panel-ko.png"))
    page.locator("button.week4-run").click()
    page.wait_for_function(
        "() => { const i = document.querySelector('.week4-output img');"
        " return i && i.complete && i.naturalWidth > 0; }")
    page.locator(".week4-output img").first.scroll_into_view_if_needed()
    page.wait_for_timeout(300)  # let the decoded image paint
    table = page.locator(".week4-output table").first.inner_text()
    assert "블록/SM" in table and "제한 요인" in table, table
    panel.screenshot(path=str(ARTIFACTS / "week4-panel-ko-after-sweep.png"))
    return errors


HAND_GRADED = "why_not_tile_32"


def open_manual_grading(formgrader, notebook: str) -> None:
    """Manual Grading → week4 → ``notebook`` in the formgrader's frame, each click made on the
    page it is meant for: the formgrader opens on Manage Assignments, which has a "week4" link
    of its own (to the source folder), and on a busy machine a click made before the next page
    has replaced it lands there. Each step waits for its page's breadcrumb."""
    for link, arrived in (("Manual Grading", "Manual Grading"), ("week4", "week4"),
                          (notebook, notebook)):
        formgrader.get_by_role("link", name=link, exact=True).click()
        formgrader.locator("ol.breadcrumb li.active", has_text=arrived).wait_for(state="visible")


def graded_course(tmp: Path, hand_in) -> tuple[Path, str]:
    """A course copy (our nbgrader config, the figures the release embeds), the release,
    ``hand_in(root)`` writing ``submitted/``, the harness's ``grade``, and the instructor's
    settings dirs; (the course directory, what ``grade`` printed)."""
    root = tmp / "course"
    root.mkdir()
    shutil.copytree(ROOT / "source", root / "source",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(ROOT / "assets", root / "assets")  # the release embeds the figures
    shutil.copy(ROOT / "nbgrader_config.py", root)
    env = dict(os.environ, COURSE_SANDBOX_HIDE=str(ROOT), PYTHONPATH=str(ROOT))
    harness = [sys.executable, "-m", "autograder"]
    out = subprocess.run([*harness, "release", "--root", str(root)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    hand_in(root)
    out = subprocess.run([*harness, "grade", "--root", str(root)], env=env,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    instructor_settings(tmp)
    return root, out.stdout


def _graded_course(tmp: Path) -> Path:
    """Ada's notebook 6 graded, for the hand-grading test."""
    import sample_class as samples

    def hand_in(root: Path) -> None:
        folder = root / "submitted" / "ada_correct" / "week4"
        folder.mkdir(parents=True)
        nb = samples.build_notebook(root, "06_tile_sweep", samples.sample_students()["ada_correct"])
        (folder / "06_tile_sweep.ipynb").write_text(json.dumps(nb))

    root, printed = graded_course(tmp, hand_in)
    assert f"to grade by hand: 06_tile_sweep:{HAND_GRADED}" in printed, printed[-2000:]
    return root


def instructor_settings(tmp: Path) -> None:
    """Clean Jupyter settings dirs under ``tmp``, and a user-level nbgrader config that only
    names a writable exchange (what an instructor's own machine has)."""
    settings = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    for name in ("workspaces", "jupyter_config", "ipython", "mpl"):
        (tmp / name).mkdir()
    exchange = tmp / "exchange"
    exchange.mkdir(mode=0o777)
    (tmp / "jupyter_config" / "nbgrader_config.py").write_text(
        f"c = get_config()  # noqa: F821\nc.Exchange.root = {str(exchange)!r}\n")


def test_hand_grading_in_the_formgrader(tmp_path: Path) -> None:
    _ensure_chromium()
    pytest.importorskip("jupyterlab")
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    root = _graded_course(tmp_path)
    started = time.monotonic()
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with open(tmp_path / "lab.log", "w") as log:
        lab = _start_lab(tmp_path, root, port, log)
        try:
            # The server runs our nbgrader config: the grading sandbox is its kernel spec.
            specs = json.loads(urllib.request.urlopen(f"{base}/api/kernelspecs").read())
            assert "week4-sandboxed" in specs["kernelspecs"], specs["kernelspecs"].keys()
            with sync_api.sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.set_default_timeout(90_000)
                page.goto(f"{base}/lab")
                page.wait_for_function("window.jupyterapp !== undefined")
                page.evaluate("() => window.jupyterapp.restored")
                page.evaluate("() => window.jupyterapp.commands.execute("
                              "'nbgrader:open-formgrader')")
                formgrader = page.frame_locator("iframe").first
                open_manual_grading(formgrader, "06_tile_sweep")
                formgrader.locator("a", has_text="Submission #1").click()
                score = formgrader.locator(f"input#{HAND_GRADED}")
                score.wait_for(state="visible")
                # The formgrader's script marks the field after drawing it: wait for the mark
                # (a busy 2-core machine draws first and marks a moment later).
                sync_api.expect(score).to_have_class(re.compile(r"\bneeds_manual_grade\b"),
                                                     timeout=60_000)
                score.scroll_into_view_if_needed()
                score.fill("2")
                score.press("Tab")  # leaving the field saves the grade
                comment = formgrader.locator("textarea").last
                comment.fill("Clear: reuse against one resident block per SM.")
                comment.press("Tab")
                page.wait_for_timeout(500)
                page.screenshot(path=str(ARTIFACTS / "week4-formgrader-hand-grade.png"))
                saved = _wait_for_hand_grade(root)
                browser.close()
        finally:
            _stop(lab)
    elapsed = time.monotonic() - started
    assert saved == (2.0, False, "Clear: reuse against one resident block per SM.")

    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "autograder", "table", "--root",
                          str(root), "--json", str(tmp_path / "table.json")], env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    row = json.loads((tmp_path / "table.json").read_text())["ada_correct"]
    assert row["scores"]["06_tile_sweep"] == [7.0, 7.0]
    assert row["manual"] == [] and row["hand_graded"] == [f"06_tile_sweep:{HAND_GRADED} 2/2"]
    assert f"graded by hand: 06_tile_sweep:{HAND_GRADED} 2/2" in out.stdout
    assert "to grade by hand" not in out.stdout
    with open(root / "grades.csv") as fh:
        (grades,) = [r for r in csv.DictReader(fh) if r["student_id"] == "ada_correct"]
    assert float(grades["score"]) == 7.0
    print(f"formgrader test: {elapsed:.1f} s in the browser")
    assert elapsed < 120, f"the formgrader part took {elapsed:.0f} s (limit 120 s)"


def _wait_for_hand_grade(root: Path, timeout_s: float = 30.0) -> tuple:
    """(manual score, needs manual grade, manual comment) once the formgrader saved both."""
    from nbgrader.api import Gradebook

    deadline = time.monotonic() + timeout_s
    while True:
        with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
            grade = gb.find_grade(HAND_GRADED, "06_tile_sweep", "week4", "ada_correct")
            comment = gb.find_comment(HAND_GRADED, "06_tile_sweep", "week4", "ada_correct")
            got = (grade.manual_score, grade.needs_manual_grade, comment.manual_comment)
        if got[0] is not None and got[2] or time.monotonic() > deadline:
            return got
        time.sleep(0.5)
