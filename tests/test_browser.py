"""Notebook 6 in a real JupyterLab, driven by headless Chromium: the panel works for a student.

Starts JupyterLab on 127.0.0.1 (a free port) over a temporary COPY of source/week4, with an
nbgrader_config.py in the served root (course id, writable exchange) so nbgrader's pages work;
opens 06_tile_sweep.ipynb in Debian's Chromium through Playwright, runs every cell, picks tile
32, clicks "Run sweep", waits for the progress bar to reach 100 % and the plot to appear, and
checks that /formgrader loads in the same server. Screenshots land in test-artifacts/.

How to drive JupyterLab here (flags, waits, pitfalls) follows ../shared/browser-notes.md.
Installs what it needs: Chromium through apt-get when run as root, else the test is skipped
with the reason. Never `playwright install` (nothing can be downloaded that way here).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run",
        "--disable-dev-shm-usage"]
NOTEBOOK = "06_tile_sweep.ipynb"

pytestmark = [pytest.mark.browser, pytest.mark.slow]


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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _served_root(tmp: Path) -> Path:
    """A copy of the week's notebooks, nbgrader's config, and clean Jupyter settings dirs."""
    root = tmp / "course"
    shutil.copytree(ROOT / "source" / "week4", root / "source" / "week4",
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
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


def _start_lab(tmp: Path, root: Path, port: int, log) -> subprocess.Popen:
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "jupyter_config"),
               IPYTHONDIR=str(tmp / "ipython"), MPLCONFIGDIR=str(tmp / "mpl"),
               MPLBACKEND="module://matplotlib_inline.backend_inline")
    env.pop("NBGRADER_EXECUTION", None)
    cmd = [sys.executable, "-m", "jupyter", "lab", "--allow-root", "--no-browser",
           "--ip=127.0.0.1", f"--port={port}", "--port-retries=0", "--ServerApp.token=",
           "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
           "--LabApp.expose_app_in_browser=True", f"--ServerApp.root_dir={root}",
           f"--LabApp.workspaces_dir={tmp / 'workspaces'}",
           f"--LabApp.user_settings_dir={tmp / 'settings'}"]
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"jupyter lab exited with {proc.returncode}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status", timeout=2)
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


def test_tile_sweep_panel_in_jupyterlab(tmp_path: Path) -> None:
    _ensure_chromium()
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
                page.goto(f"{base}/lab/tree/source/week4/{NOTEBOOK}")
                page.wait_for_function("window.jupyterapp !== undefined")
                page.evaluate("() => window.jupyterapp.restored")
                page.wait_for_function(
                    "() => { const w = window.jupyterapp.shell.currentWidget;"
                    " return w && w.sessionContext && w.sessionContext.session &&"
                    " w.sessionContext.session.kernel &&"
                    " w.sessionContext.session.kernel.status === 'idle'; }")
                page.evaluate("() => window.jupyterapp.commands.execute("
                              "'notebook:run-all-cells')")
                panel = page.locator(".week4-panel")
                panel.wait_for(state="visible")
                errors = page.locator(".jp-OutputArea-output[data-mime-type="
                                      "'application/vnd.jupyter.stderr']").count()
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
    assert elapsed < 120, f"the browser test took {elapsed:.0f} s (limit 120 s)"
