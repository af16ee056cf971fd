"""A hostile student's notebook, looked at the way an instructor and a student look at it, in
real Chromium: nothing they wrote or printed may run (docs/grading.md, "Looking at a
submission").

Sample student ``ivo_injects_html`` (notebook 6, correct) fills his written answer, a markdown
cell, a raw cell, a code cell's outputs, an attachment, the notebook's metadata and two files
handed in beside it with script of every kind; each payload beacons to 127.0.0.1:47613. The
test grades him with this course's harness, starts JupyterLab as an instructor does (a token,
XSRF checks on, this environment's server extensions: the formgrader and
``autograder.viewing.formgrader``), listens on the beacon port, and in Chromium

1. opens a *control* page first — his notebook as nbconvert renders it with no cleaning — and
   requires beacons to arrive (so the listener would see one);
2. opens the formgrader, Manual Grading → week4 → 06_tile_sweep → his submission, and the
   grading page on its own, the two files he handed in beside the notebook as the formgrader
   serves them, his autograded notebook in JupyterLab, and his feedback file;

3. (issue 36) opens every formgrader page a TA reaches from the submission (Manual Grading's
   pages, Manage Students and each student's pages, Manage Submissions, Manage Assignments),
   each formgrader route with script as its URL part, and clicks every link in his rendered
   answer, on the grading page and in the feedback file.

Ivo's notebook also declares a newer format and holds cells of unknown types (a MathJax
configuration block, a refresh), remote images spelled as a browser still resolves them, links
into the formgrader's other pages, and images whose metadata nbconvert prints unquoted. And a
second submission comes in through nbgrader's exchange under a student id that is HTML
(``nbgrader collect`` only warns): it is graded under its safe alias, and that alias is what
Manage Students shows.

The test fails on any request to the beacon, any request of those pages to another origin,
any request that is not a GET, any change in the course directory, a missing written answer,
a score field that is missing or not the formgrader's, a missing Content-Security-Policy on
any formgrader page, or a formgrader route that answers a hostile URL part with a page.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import os
import secrets
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import quote

import pytest

from autograder.runner.names import COURSE_ID
from autograder.viewing.feedback import MATHJAX
from autograder.viewing.names import safe_alias
from tests import test_browser as lab

ROOT = Path(__file__).resolve().parents[1]
STUDENT = "ivo_injects_html"
NOTEBOOK = "06_tile_sweep"

pytestmark = [pytest.mark.browser, pytest.mark.slow]
#: a student id that is HTML (its script beacons to /student-id), handed in through the exchange
EXCHANGE_ID = "<img src=x onerror=fetch(atob('aHR0cDovLzEyNy4wLjAuMTo0NzYxMy9zdHVkZW50LWlk'))>"
STAMP = "2026-12-01 12:00:00.000000 UTC"


class _Beacon(http.server.ThreadingHTTPServer):
    """Records the path of every request it gets (a payload that ran)."""

    daemon_threads = True

    def __init__(self, port: int) -> None:
        self.hits: list[str] = []
        beacon = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _hit(self) -> None:
                beacon.hits.append(f"{self.command} {self.path}")
                self.send_response(204)
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()

            do_GET = do_POST = do_PUT = do_OPTIONS = _hit

            def log_message(self, *args) -> None:
                pass

        super().__init__(("127.0.0.1", port), Handler)


def _snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _graded_course(tmp: Path) -> Path:
    """A course copy with the release and Ivo's notebook 6 graded by the harness."""
    import sample_class as samples

    def hand_in(root: Path) -> None:
        samples.build_class(root, root / "submitted", only=[STUDENT])
        _collect_from_exchange(root, tmp)

    root, printed = lab.graded_course(tmp, hand_in)
    assert "removed from view" in printed, printed[-3000:]
    assert "student id refused" in printed and safe_alias(EXCHANGE_ID) in printed, printed[-3000:]
    return root


def _collect_from_exchange(root: Path, tmp: Path) -> None:
    """Ada's notebook 6 submitted to nbgrader's exchange under :data:`EXCHANGE_ID`, and
    ``nbgrader collect`` run as the instructor runs it: it only warns."""
    import sample_class as samples

    exchange = tmp / "exchange-in"
    inbound = exchange / COURSE_ID / "inbound" / f"{EXCHANGE_ID}+week4+{STAMP}"
    inbound.mkdir(parents=True)
    nb = samples.build_notebook(root, NOTEBOOK, samples.sample_students()["ada_correct"])
    (inbound / f"{NOTEBOOK}.ipynb").write_text(json.dumps(nb))
    (inbound / "timestamp.txt").write_text(STAMP)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-m", "nbgrader", "collect", "week4",
                          f"--Exchange.root={exchange}", "--CollectApp.check_owner=False"],
                         cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    assert (root / "submitted" / EXCHANGE_ID / "week4" / f"{NOTEBOOK}.ipynb").exists(), \
        out.stderr[-2000:]


def _control_page(root: Path, tmp: Path) -> Path:
    """Ivo's handed-in notebook as nbconvert renders it without any cleaning."""
    import nbformat
    from nbconvert.exporters import HTMLExporter

    nb = nbformat.read(root / "submitted" / STUDENT / "week4" / f"{NOTEBOOK}.ipynb", 4)
    html, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    page = tmp / "control.html"
    page.write_text(html)
    return page


class _PolicyServer(http.server.ThreadingHTTPServer):
    """Serves one unclean page with the formgrader's page policy: the policy alone, no
    cleaning, must stop every script (the layer that holds if a cleaner misses)."""

    daemon_threads = True

    def __init__(self, page: Path) -> None:
        from autograder.viewing.formgrader import page_policy

        html = page.read_bytes()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                origin = f"http://{self.headers['Host']}"
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Security-Policy", page_policy(origin, "/", []))
                self.end_headers()
                self.wfile.write(html)

            def log_message(self, *args) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)


def _submission_id(root: Path) -> str:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return str(gb.find_submission_notebook(NOTEBOOK, "week4", STUDENT).id)


#: attributes and scripts of the page that still reach the beacon's host (none may): a URL
#: attribute as the browser resolves it (``%5C%5Chost/x`` is a file beside the page), any
#: other attribute, script, meta or style that names it
LEFT_IN_DOM = """() => [...document.querySelectorAll('*')].flatMap(e => [...e.attributes]
    .filter(a => {
        if (!a.value.includes('47613')) return false;
        if (!['src', 'href', 'action', 'data', 'poster', 'cite'].includes(a.name)) return true;
        try { return new URL(a.value, document.baseURI).host.includes('47613'); }
        catch (error) { return true; } })
    .map(a => e.tagName + ' ' + a.name + '=' + a.value.slice(0, 80)))
    .concat([...document.querySelectorAll('script, meta, style')]
    .filter(s => s.outerHTML.includes('47613')).map(s => s.outerHTML.slice(0, 80)))"""
#: the links of what the student wrote (markdown cells and HTML outputs)
LINKS = ".rendered_html a[href]"


def _reachable_pages() -> list[str]:
    """The formgrader pages a TA reaches from a submission: the navigation's and each
    student's, Ivo's and the exchange student's (by the safe alias)."""
    alias = safe_alias(EXCHANGE_ID)
    return ["/formgrader/manage_assignments", "/formgrader/gradebook",
            "/formgrader/gradebook/week4", f"/formgrader/gradebook/week4/{NOTEBOOK}",
            "/formgrader/manage_students", f"/formgrader/manage_students/{STUDENT}",
            f"/formgrader/manage_students/{STUDENT}/week4", f"/formgrader/manage_students/{alias}",
            f"/formgrader/manage_students/{alias}/week4", "/formgrader/manage_submissions/week4"]


def _hostile_routes() -> list[str]:
    """Every formgrader route that takes a URL part, with script as that part (nbgrader
    0.9.6 prints it unescaped), and the exchange student's own id."""
    from sample_class.students.ivo_injects_html import _in_url

    part, raw = _in_url("url-part"), quote(EXCHANGE_ID, safe="")
    students = "/formgrader/manage_students"
    return [f"{students}/{part}", f"{students}/{raw}", f"{students}/{raw}/week4",
            f"{students}/{STUDENT}/{part}", f"/formgrader/gradebook/{part}",
            f"/formgrader/gradebook/week4/{part}", f"/formgrader/gradebook/{part}/{NOTEBOOK}",
            f"/formgrader/manage_submissions/{part}", f"/formgrader/submissions/{part}/",
            f"/formgrader/submissions/{part}/next"]


def _click_every_link(page, url: str) -> list[str]:
    """Open ``url`` once per link of the student's content and click that link."""
    page.goto(url)
    count = page.locator(LINKS).count()
    hrefs = []
    for i in range(count):
        page.goto(url)
        link = page.locator(LINKS).nth(i)
        hrefs.append(link.get_attribute("href") or "")
        link.dispatch_event("click")
        page.wait_for_timeout(800)
    return hrefs


def _score_field(page, grading: str) -> tuple[list, list]:
    """([how many elements have the score field's id, the first one's tag, whether it is the
    formgrader's score input], what of the page still names the beacon)."""
    page.goto(grading)
    page.locator(f"input#{lab.HAND_GRADED}").wait_for(state="attached")
    page.wait_for_timeout(1500)
    field = page.evaluate(f"""() => {{
        const all = document.querySelectorAll('[id="{lab.HAND_GRADED}"]');
        return [all.length, all[0].tagName, all[0].classList.contains('score')]; }}""")
    return field, page.evaluate(LEFT_IN_DOM)


def test_nothing_a_student_wrote_runs_where_it_is_looked_at(tmp_path: Path) -> None:
    lab._ensure_chromium()
    pytest.importorskip("jupyterlab")
    sync_api = pytest.importorskip("playwright.sync_api")
    from sample_class.students import ivo_injects_html as ivo

    root = _graded_course(tmp_path)
    submission = _submission_id(root)
    port, token = lab._free_port(), secrets.token_hex(16)
    base = f"http://127.0.0.1:{port}"
    beacon_port = int(ivo.BEACON.rsplit(":", 1)[1])
    try:
        beacon = _Beacon(beacon_port)
    except OSError as exc:
        pytest.fail(f"the beacon port {beacon_port} is taken ({exc}): free it and run again")
    threading.Thread(target=beacon.serve_forever, daemon=True).start()
    control = _control_page(root, tmp_path)
    requests: list[str] = []
    headers: dict[str, str] = {}
    before = _snapshot(root)
    with open(tmp_path / "lab.log", "w") as log:
        server = lab._start_lab(tmp_path, root, port, log, token=token)
        try:
            with sync_api.sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(lab.CHROMIUM), args=lab.ARGS)
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                context.set_default_timeout(90_000)
                page = context.new_page()

                # 1. The control: unclean, the payloads do reach the beacon.
                page.goto(control.as_uri())
                page.wait_for_timeout(2000)
                control_hits = list(beacon.hits)
                page = lab.fresh_page(page)
                beacon.hits.clear()

                # The same unclean page under the grading page's policy: nothing runs.
                policy_only = _PolicyServer(control)
                threading.Thread(target=policy_only.serve_forever, daemon=True).start()
                page.goto(f"http://127.0.0.1:{policy_only.server_address[1]}/")
                page.wait_for_timeout(2000)
                policy_only.shutdown()
                policy_hits = list(beacon.hits)
                page = lab.fresh_page(page)
                beacon.hits.clear()

                # 2. Everything a person looks at, watched from here on.
                context.on("request", lambda r: requests.append(f"{r.method} {r.url}"))
                page.goto(f"{base}/lab?token={token}")
                page.wait_for_function("window.jupyterapp !== undefined")
                page.evaluate("() => window.jupyterapp.restored")
                page.evaluate("() => window.jupyterapp.commands.execute("
                              "'nbgrader:open-formgrader')")
                grader = page.frame_locator("iframe").first
                lab.open_manual_grading(grader, NOTEBOOK)
                grader.locator(f"a[href*='{submission}']").first.click()  # Ivo's, of two
                grader.locator("input#why_not_tile_32").wait_for(state="visible")
                answer_in_formgrader = grader.get_by_text(ivo.ANSWER_TEXT[:60]).count()
                page.wait_for_timeout(3000)  # a refresh, a late onerror, an autofocus
                page.screenshot(path=str(lab.ARTIFACTS / "week4-formgrader-hostile.png"))

                for path in (f"/formgrader/submissions/{submission}/",
                             f"/formgrader/submissions/{submission}/notes.html",
                             f"/formgrader/submissions/{submission}/plot.svg"):
                    response = page.goto(base + path)
                    assert response is not None and response.ok, (path, response)
                    headers[path] = response.headers.get("content-security-policy", "")
                    page.wait_for_timeout(1500)

                page.goto(f"{base}/lab/tree/autograded/{STUDENT}/week4/{NOTEBOOK}.ipynb")
                page.wait_for_function("window.jupyterapp !== undefined")
                page.get_by_text(ivo.ANSWER_TEXT[:60]).first.wait_for(state="attached")
                page.wait_for_timeout(3000)

                feedback = root / "feedback" / STUDENT / "week4" / f"{NOTEBOOK}.html"
                page.goto(feedback.as_uri())
                answer_in_feedback = page.get_by_text(ivo.ANSWER_TEXT[:60]).count()
                page.wait_for_timeout(2000)
                left_in_feedback = page.evaluate(LEFT_IN_DOM)

                # 3. Every formgrader page a TA reaches, and every route with script in its URL.
                for path in _reachable_pages():
                    response = page.goto(base + path)
                    assert response is not None and response.ok, (path, response)
                    headers[path] = response.headers.get("content-security-policy", "")
                    page.wait_for_timeout(1000)
                page.goto(f"{base}/formgrader/manage_students")
                page.get_by_text(safe_alias(EXCHANGE_ID)).first.wait_for(state="attached")
                students_table = page.locator("table").first.inner_text()
                refused = {}
                for path in _hostile_routes():
                    response = page.goto(base + path)
                    refused[path] = response.status if response is not None else None
                    page.wait_for_timeout(500)

                # 4. One click on every link of the rendered answer, in both views.
                grading = f"{base}/formgrader/submissions/{submission}/"
                clicked = _click_every_link(page, grading) + _click_every_link(
                    page, feedback.as_uri())
                score_field, left_in_grading = _score_field(page, grading)
                browser.close()
        finally:
            lab._stop(server)
            beacon.shutdown()
    after = _snapshot(root)

    assert control_hits, "the control page sent no beacon: this test could not see a payload"
    # A policy cannot stop a <meta http-equiv=refresh> navigation (CSP dropped navigate-to);
    # it runs no script, and the cleaner removes it (the formgrader page above).
    scripts = [hit for hit in policy_hits
               if hit not in ("GET /md-meta-refresh", "GET /unknown-cell-refresh")]
    assert scripts == [], f"the page policy alone let payloads run: {scripts}"
    assert beacon.hits == [], f"payloads ran where a person looks: {beacon.hits}"
    # the pages' own requests: the Jupyter server (JupyterLab's API calls included; the grading
    # page's MathJax, autograder/viewing/mathjax.py), embedded images, the feedback file, MathJax
    # from the CDN nbconvert's feedback template names, and about:blank (MathJax's web-font
    # probe, which leaves the browser for no origin and which font-src refuses anyway)
    own = (f"GET {base}/", "GET data:", "GET file://", f"GET {MATHJAX}", "GET about:blank")
    foreign = [r for r in requests if not r.startswith(own)
               and not r.startswith((f"{r.split()[0]} {base}/api/",
                                     f"{r.split()[0]} {base}/lab/api/"))]
    assert foreign == [], f"the pages sent requests elsewhere: {foreign}"
    writes = [r for r in requests if not r.startswith("GET ") and "/formgrader/" in r]
    assert writes == [], f"the formgrader page wrote through its API: {writes}"
    # JupyterLab checkpoints a notebook it opens: a copy, identical to the notebook, is no change
    copies = {path for path, digest in after.items() if "/.ipynb_checkpoints/" in path
              and digest == before.get(path.replace("/.ipynb_checkpoints", "")
                                       .replace("-checkpoint.ipynb", ".ipynb"))}
    changed = sorted((set(before.items()) ^ set(after.items())) - {(p, after[p]) for p in copies})
    assert changed == [], f"the course directory changed while it was looked at: {changed}"
    assert answer_in_formgrader, "the written answer's text is missing from the formgrader"
    assert answer_in_feedback, "the written answer's text is missing from the feedback"
    page_policy = headers[f"/formgrader/submissions/{submission}/"]
    assert "script-src" in page_policy and "'sha256-" in page_policy \
        and "'unsafe-inline'" not in page_policy.split("style-src")[0], page_policy
    for name in ("notes.html", "plot.svg"):
        assert headers[f"/formgrader/submissions/{submission}/{name}"].startswith("sandbox"), \
            headers
    for path in _reachable_pages():  # issue 36: every formgrader page has a policy
        script_src = next((d for d in headers[path].split("; ") if d.startswith("script-src")),
                          "")
        assert "/formgrader/static/" in script_src and "'unsafe-inline'" not in script_src \
            and "'unsafe-eval'" not in script_src, (path, headers[path])
    assert {path: status for path, status in refused.items() if status != 404} == {}, refused
    assert safe_alias(EXCHANGE_ID) in students_table and "<img" not in students_table
    assert score_field == [1, "INPUT", True], f"the score field is not the formgrader's: " \
        f"{score_field}"
    assert left_in_grading == [] and left_in_feedback == [], (left_in_grading, left_in_feedback)
    assert any(href.startswith("#") for href in clicked), clicked  # the loop clicked links
    assert not [h for h in clicked if "47613" in h or "manage_students" in h
                or h.startswith(("/", "\\", "http"))], clicked
    print(f"{len(_reachable_pages())} formgrader pages with a policy, {len(refused)} hostile "
          f"routes refused, {len(clicked)} links clicked")
    print(f"control page: {len(control_hits)} beacons ({sorted(control_hits)[:5]} …); "
          f"cleaned pages: none; {len(requests)} requests, all to the Jupyter server")
