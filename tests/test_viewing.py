"""What a person sees of a submission: the policy, the cleaned notebook, nbconvert's cleaned
pages, the feedback folder and the formgrader's policies (autograder/viewing/).

The browser proof (payloads beaconing from a graded notebook, in Chromium) is
tests/test_browser_viewing.py; the sample class's notebooks rendered before and after are in
tests/test_sample_class.py.
"""

from __future__ import annotations

import copy
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from nbconvert.exporters import HTMLExporter
from traitlets.config import Config

from autograder.viewing import exporter, feedback, formgrader, notebook, policy

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*(ROOT / "release" / "week4").glob("*.ipynb"),
                    *(ROOT / "release-ko" / "week4").glob("*.ipynb"),
                    *(ROOT / "source" / "week4").glob("*.ipynb")])


class _Text(HTMLParser):
    """The words a reader sees (no script, style or title), and the images' sources."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []
        self.images: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs) -> None:
        if tag in ("script", "style", "title"):
            self._skip += 1
        if tag == "img":
            self.images.append((dict(attrs).get("src") or "")[:40])

    def handle_endtag(self, tag) -> None:
        if tag in ("script", "style", "title") and self._skip:
            self._skip -= 1

    def handle_data(self, data) -> None:
        if not self._skip:
            self.words += data.split()


def seen(html: str) -> _Text:
    parser = _Text()
    parser.feed(html)
    return parser


# --------------------------------------------------------------------------------- the policy

ATTACKS = {
    "img onerror": '<img src=x onerror="alert(1)">',
    "script": "<script>alert(1)</script>",
    "svg onload": "<svg onload=alert(1)></svg>",
    "javascript link": '<a href="javascript:alert(1)">x</a>',
    "iframe": '<iframe src="https://example.org"></iframe>',
    "iframe srcdoc": '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
    "object": '<object data="x.swf"></object>',
    "embed": '<embed src="x.swf">',
    "meta refresh": '<meta http-equiv="refresh" content="0;url=https://example.org">',
    "base": '<base href="https://example.org/">',
    "form": '<form action="https://example.org"><button>go</button></form>',
    "style tag": "<style>@import url(https://example.org/x.css)</style>",
    "style attribute": '<div style="background:url(https://example.org/x)">d</div>',
    "link": '<link rel="stylesheet" href="https://example.org/x.css">',
    "remote image": '<img src="https://example.org/beacon.png">',
    "details ontoggle": "<details open ontoggle=alert(1)>x</details>",
    "mutation": '<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">',
    "data URL link": '<a href="data:text/html,<script>alert(1)</script>">x</a>',
    "svg data image": '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+">',
    "data-link": '<span data-link="https://example.org">x</span>',
}
DANGEROUS = ("<script", "onerror", "onload", "ontoggle", "javascript:", "<iframe", "<object",
             "<embed", "<meta", "<base", "<form", "<style", "url(", "<link", "example.org",
             "data:text", "data:image/svg", "data-link", "<svg")


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_the_policy_removes_every_attack(name: str) -> None:
    cleaned, lost = policy.clean_and_report(ATTACKS[name])
    assert not [d for d in DANGEROUS if d in cleaned.lower()], (name, cleaned)
    assert lost, f"{name}: removed, but the report says nothing was"


def test_the_policy_keeps_what_hand_grading_needs() -> None:
    html = ('<h2 id="Why">Why</h2><p>A <b>tile</b> of <code>T</code>, $a &lt; b$</p>'
            '<table border="1" class="dataframe"><thead><tr style="text-align: right;">'
            '<th>tile</th></tr></thead><tbody><tr><td>32</td></tr></tbody></table>'
            '<img alt="plot" src="data:image/png;base64,iVBORw0KGgo=">'
            '<img src="figure.png"><a href="#Why">up</a><a href="mailto:ta@example.org">ta</a>'
            '<pre><span class="k">def</span></pre><details open><summary>s</summary></details>')
    cleaned, lost = policy.clean_and_report(html)
    assert lost == []
    assert seen(cleaned).words == seen(html).words
    assert seen(cleaned).images == seen(html).images
    for kept in ('class="dataframe"', 'style="text-align:right"', 'href="mailto:ta@',
                 'class="k"', '<details open'):
        assert kept in cleaned, kept


def test_a_students_id_cannot_take_the_formgraders() -> None:
    cleaned = policy.clean('<span id="why_not_tile_32">x</span><a href="#why_not_tile_32">y</a>')
    assert 'id="why_not_tile_32"' not in cleaned
    assert f'id="{policy.ID_PREFIX}why_not_tile_32"' in cleaned
    assert f'href="#{policy.ID_PREFIX}why_not_tile_32"' in cleaned


def test_the_report_names_what_went_and_never_what_stayed() -> None:
    assert policy.removed("<p>x</p>", policy.clean("<p>x</p>")) == []
    assert policy.removed(ATTACKS["img onerror"], policy.clean(ATTACKS["img onerror"])) \
        == ["img onerror="]
    assert policy.removed(ATTACKS["iframe"], policy.clean(ATTACKS["iframe"])) == ["<iframe>"]


# ------------------------------------------------------------------------ the cleaned notebook

def _hostile_notebook() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    md = nbformat.v4.new_markdown_cell("My answer.\n\n" + "\n".join(ATTACKS.values())
                                       + "\n\n![f](attachment:f.svg)\n\n![m](attachment:gone.png)")
    md.attachments = {"f.svg": {"image/svg+xml": "PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"}}
    md.metadata["nbgrader"] = {"grade_id": "why_not_tile_32", "solution": True}
    raw = nbformat.v4.new_raw_cell("<script>alert(1)</script>")
    code = nbformat.v4.new_code_cell("x", outputs=[
        nbformat.v4.new_output("display_data", data={
            "text/html": ATTACKS["img onerror"], "application/javascript": "alert(1)",
            "image/svg+xml": "<svg onload=alert(1)/>", "text/plain": "x"}),
        nbformat.v4.new_output("display_data", data={"text/markdown": ATTACKS["script"]}),
        nbformat.v4.new_output("display_data", data={
            "application/vnd.jupyter.widget-view+json": {"model_id": "w"}}),
        nbformat.v4.new_output("error", ename="ValueError", evalue=ATTACKS["script"],
                               traceback=[ATTACKS["img onerror"]]),
        nbformat.v4.new_output("stream", name="stdout", text=ATTACKS["script"]),
    ])
    nb.cells = [md, raw, code]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    nb.metadata["title"] = "</title><script>alert(1)</script>"
    return nb


def test_the_autograded_notebook_is_cleaned_and_the_answer_kept() -> None:
    nb = _hostile_notebook()
    found = notebook.clean_notebook(nb)
    md, raw, code = nb.cells
    assert "My answer." in md.source and "attachments" not in md
    assert not [d for d in DANGEROUS if d in md.source.lower()], md.source
    assert "<script" not in raw.source
    first, second, widget = code.outputs[:3]
    assert set(first.data) == {"text/html", "text/plain"}
    assert "onerror" not in first.data["text/html"]
    assert "<script" not in second.data["text/markdown"]
    assert list(widget.data) == ["text/plain"]
    assert "removed for safe viewing" in widget.data["text/plain"]
    assert code.outputs[3].output_type == "error" and code.outputs[4].output_type == "stream"
    assert "widgets" not in nb.metadata
    assert "attachment gone.png (missing)" in found["why_not_tile_32"]
    assert {"img onerror= in text/html", "application/javascript output",
            "image/svg+xml output"} <= set(found["cell 3"])
    assert found["notebook metadata"] == ["widget state"]


def test_a_cell_with_nothing_to_remove_is_left_as_written() -> None:
    raw = nbformat.v4.new_raw_cell("x < y &  z\n<b>bold</b>")
    html = nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output(
        "display_data", data={"text/html": "<table><tr><td>1 &lt; 2</td></tr></table>"})])
    before = copy.deepcopy([raw, html])
    assert notebook.clean_cell(raw, "en") == [] and notebook.clean_cell(html, "en") == []
    assert [raw, html] == before


def test_a_missing_attachment_no_longer_fails_the_page() -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("![x](attachment:nowhere.png)")]
    from nbconvert.filters.markdown_mistune import InvalidNotebook

    with pytest.raises(InvalidNotebook):  # what nbconvert does with it, uncleaned
        HTMLExporter(template_name="lab").from_notebook_node(copy.deepcopy(nb))
    notebook.clean_notebook(nb)
    html, _ = HTMLExporter(template_name="lab").from_notebook_node(nb)
    assert notebook.EMPTY_GIF in html


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_the_courses_own_notebooks_pass_unchanged(path: Path) -> None:
    nb = nbformat.read(path, 4)
    before = copy.deepcopy(nb)
    assert notebook.clean_notebook(nb) == {}
    assert nb == before


def test_a_garbled_language_does_not_stop_the_cleaning() -> None:
    nb = _hostile_notebook()
    nb.metadata["course"] = {"language": "<script>"}
    assert notebook.clean_notebook(nb)


def test_the_preprocessor_is_on_and_writes_its_record(tmp_path: Path) -> None:
    step = notebook.CleanForViewing()
    assert step.enabled, "nbconvert skips a preprocessor that is not enabled"
    nb, _ = step.preprocess(_hostile_notebook(),
                            {"metadata": {"path": str(tmp_path)}, "unique_key": "06_tile_sweep"})
    record = notebook.read_removed(tmp_path, "06_tile_sweep")
    assert record["why_not_tile_32"] and record["notebook metadata"] == ["widget state"]
    assert notebook.read_removed(tmp_path, "no_such_notebook") == {}
    (tmp_path / f"bad{notebook.SUFFIX}").write_text("not json")
    assert notebook.read_removed(tmp_path, "bad") == {}


# ------------------------------------------------------------------- nbconvert's pages, cleaned

def _exporter(template: str, clean: bool) -> HTMLExporter:
    c = Config()
    if clean:
        exporter.configure(c)
    from nbgrader.server_extensions.formgrader import handlers

    bootstrap = Path(handlers.static_path) / "node_modules" / "bootstrap" / "dist" / "css"
    return HTMLExporter(config=c, template_name=template,  # as nbgrader's GenerateFeedback
                        extra_template_basedirs=[handlers.template_path],
                        extra_template_paths=[str(bootstrap)])


@pytest.mark.parametrize("template", ["classic", "lab"])
def test_pages_of_a_hostile_notebook_run_nothing(template: str) -> None:
    nb = _hostile_notebook()
    nb.cells[0].source = nb.cells[0].source.replace("![m](attachment:gone.png)", "")
    html, _ = _exporter(template, clean=True).from_notebook_node(nb)
    bare = nbformat.v4.new_notebook(metadata=copy.deepcopy(nb.metadata))  # the same template
    empty, _ = _exporter(template, clean=True).from_notebook_node(bare)  # scripts, no cells
    found, baseline = policy.inventory(html), policy.inventory(empty)
    handlers = [a for a in found.attributes if a[1].startswith("on")]
    assert handlers == [], handlers
    for tag in ("iframe", "object", "embed", "base", "form", "svg", "link", "script", "meta"):
        assert found.tags[tag] == baseline.tags[tag], (template, tag)  # the template's own only
    assert not [a for a in found.attributes if a[2].strip().lower().startswith("javascript:")]
    assert "My answer." in html
    assert "<title>&lt;/title&gt;&lt;script&gt;" in html  # the title is text, escaped


@pytest.mark.parametrize("path", sorted((ROOT / "release" / "week4").glob("*.ipynb"))
                         + sorted((ROOT / "release-ko" / "week4").glob("*.ipynb")),
                         ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_the_courses_pages_read_the_same_cleaned(path: Path) -> None:
    nb = nbformat.read(path, 4)
    # classic: the template nbgrader's feedback and formgrade pages extend
    plain, _ = _exporter("classic", clean=False).from_notebook_node(copy.deepcopy(nb))
    cleaned, _ = _exporter("classic", clean=True).from_notebook_node(copy.deepcopy(nb))
    assert seen(cleaned).words == seen(plain).words
    assert seen(cleaned).images == seen(plain).images


def test_the_markdown_filter_is_the_exporters_own_then_cleaned() -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell("![p](attachment:p.png) <img src=x onerror=alert(1)>")
    cell.attachments = {"p.png": {"image/png": "iVBORw0KGgo="}}
    nb.cells = [cell]
    html, _ = _exporter("lab", clean=True).from_notebook_node(nb)
    assert 'src="data:image/png;base64,iVBORw0KGgo="' in html and "onerror" not in html


# ------------------------------------------------------------------------- the feedback folder

def test_feedback_keeps_one_protected_page_per_graded_notebook(tmp_path: Path) -> None:
    graded = tmp_path / "autograded" / "ivo" / "week4"
    folder = tmp_path / "feedback" / "ivo" / "week4"
    graded.mkdir(parents=True)
    folder.mkdir(parents=True)
    (graded / "06_tile_sweep.ipynb").write_text("{}")
    page = folder / "06_tile_sweep.html"
    page.write_text("<!DOCTYPE html>\n<html>\n<head>\n<meta charset='utf-8'>\n</head><body>x")
    for extra in ("06_tile_sweep.trusted.json", "06_tile_sweep.viewing.json", "notes.html",
                  "plot.svg"):
        (folder / extra).write_text("<script>alert(1)</script>")
    (folder / "sub").mkdir()
    (folder / "sub" / "x.html").write_text("x")
    (folder / "timestamp.txt").write_text("2026-12-01 12:00:00.000000 UTC")
    (folder / "submission_secret.txt").write_text("…")
    removed = feedback.finish(tmp_path, "week4")
    # nbgrader release_feedback reads its own two files (tests/test_exchange.py)
    assert sorted(p.name for p in folder.iterdir()) == [
        "06_tile_sweep.html", "submission_secret.txt", "timestamp.txt"]
    assert len(removed) == 5
    text = page.read_text()
    assert text.index(feedback.META) < text.index("<meta charset")
    feedback.finish(tmp_path, "week4")  # again: one policy, not two
    assert page.read_text().count("Content-Security-Policy") == 1


def test_a_page_without_nbgraders_head_is_not_kept(tmp_path: Path) -> None:
    (tmp_path / "autograded" / "s" / "week4").mkdir(parents=True)
    (tmp_path / "autograded" / "s" / "week4" / "01.ipynb").write_text("{}")
    folder = tmp_path / "feedback" / "s" / "week4"
    folder.mkdir(parents=True)
    (folder / "01.html").write_text("<body>" + "x" * 2000 + "<head>")
    feedback.finish(tmp_path, "week4")
    assert not (folder / "01.html").exists()


# -------------------------------------------------------------------- the formgrader's policies

def test_the_grading_pages_hashes_are_its_templates_scripts_only() -> None:
    from nbgrader.server_extensions.formgrader import handlers

    exp = HTMLExporter(template_name="formgrade", extra_template_basedirs=[handlers.template_path])
    resources = {"assignment_id": "week4", "notebook_id": "06_tile_sweep",
                 "submission_id": "abc", "index": 0, "total": 1, "base_url": "",
                 "student": "<script>evil()</script>", "last_name": "<img onerror=x>",
                 "first_name": "", "notebook_path": "/x"}
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1")]
    html, _ = exp.from_notebook_node(nb, resources=dict(resources))
    hashes = formgrader.template_hashes(exp.environment, resources)
    page = policy.inventory(html)
    ours = {policy.hash_source(text) for text in page.scripts + page.handlers}
    assert set(hashes) <= ours and len(hashes) >= 4  # 3 inline scripts + 2 handlers
    assert policy.hash_source("evil()") not in hashes
    policy_text = formgrader.page_policy("http://127.0.0.1:8888", "/", hashes)
    script_src = next(d for d in policy_text.split("; ") if d.startswith("script-src"))
    assert "'unsafe-inline'" not in script_src and "'self'" not in script_src
    assert "http://127.0.0.1:8888/formgrader/static/" in script_src


def test_guard_gives_both_handlers_their_policies() -> None:
    from nbgrader.server_extensions.formgrader import handlers

    formgrader.guard()
    assert isinstance(handlers.SubmissionHandler.exporter, property)
    assert handlers.SubmissionFilesHandler.content_security_policy.fget(None) \
        .startswith("sandbox")


def test_the_instructors_jupyter_loads_the_extension() -> None:
    config = ROOT / "jupyter-config" / "jupyter_server_config.d" / "week4-viewing.json"
    assert json.loads(config.read_text())["ServerApp"]["jpserver_extensions"] == {
        "autograder.viewing.formgrader": True,  # the page policies (issues 28, 36)
        "autograder.results.formgrader_totals": True,  # the course's one total (issue 38)
        "jupyter_server_mathjax": True}  # MathJax from this server, offline (issue 38)
    points = formgrader._jupyter_server_extension_points()
    assert points == [{"module": "autograder.viewing.formgrader"}]


# ---------------------------------------------------------- the grade table and collection.csv

def test_collection_csv_never_holds_a_formula_and_reads_back_exactly(tmp_path: Path) -> None:
    from autograder.handin import report

    names = ['=HYPERLINK("https://example.org?"&A1,"x").ipynb', "+1.ipynb", "-x", "@SUM(1)",
             "'quoted", "plain.ipynb", "\tTab"]
    entries = [report.Entry("folder", "s", name, "", "ignored", "not a notebook")
               for name in names]
    report.write(tmp_path, entries, "folder")
    import csv

    with open(tmp_path / report.CSV_NAME, newline="") as fh:
        cells = [row["handed_in"] for row in csv.DictReader(fh)]
    assert all(not c.startswith(report.FORMULA_START) for c in cells), cells
    assert sorted(e.handed_in for e in report.read(tmp_path)) == sorted(names)


def test_the_grade_table_spells_out_control_characters() -> None:
    from autograder.results.table import Row, render
    from autograder.viewing.terminal import printable

    assert printable("a\x1b[2Jb\x07") == "a\\x1b[2Jb\\x07"
    row = Row("s", scores={"01": (1.0, 2.0)}, notes=["\x1b]0;pwned\x07 title"])
    row.lost["01:x"] = "ValueError: \x1b[31mred"
    text = render(["01"], [row])
    assert "\x1b" not in text and "\x07" not in text and "\\x1b" in text


def test_the_collection_summary_spells_out_control_characters(tmp_path: Path) -> None:
    from autograder.handin import report

    (tmp_path / "submitted" / "s" / "week4").mkdir(parents=True)
    entry = report.Entry("folder", "s", "\x1b]0;pwned\x07.ipynb", "", "ignored", "not a notebook")
    text = report.summary([entry], tmp_path / "submitted", "collection")
    assert "\x1b" not in text and "\\x1b]0;pwned\\x07" in text and "\n" in text


# ------------------------------------------------------------------- the feedback's exporter

def _feedback_exporter(template: str, cls: type = HTMLExporter) -> HTMLExporter:
    c = Config()
    exporter.configure(c)
    from nbgrader.server_extensions.formgrader import handlers

    bootstrap = Path(handlers.static_path) / "node_modules" / "bootstrap" / "dist" / "css"
    return cls(config=c, template_name=template, extra_template_basedirs=[handlers.template_path],
               extra_template_paths=[str(bootstrap)])


def _images_notebook() -> nbformat.NotebookNode:
    """Images with and without alt text where a page can hold them, and text that only looks
    like an image (a comment, a stylesheet, escaped text) after line breaks of every kind."""
    nb = _hostile_notebook()
    nb.cells[0].source = nb.cells[0].source.replace("![m](attachment:gone.png)", "")
    png = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4DwABBAEAwS2OUAAAAABJ"
           "RU5ErkJggg==")
    nb.cells.append(nbformat.v4.new_markdown_cell(
        "line\r\nbreaks\u2028and\x0cfeeds ![](data:image/png;base64,x) <IMG SRC='data:,'>"
        " <img alt='kept' src='data:,'> <!-- <img src='data:,'> --> &lt;img src=x&gt;"))
    nb.cells.append(nbformat.v4.new_code_cell("plot()", outputs=[
        nbformat.v4.new_output("display_data", data={"image/png": png, "text/plain": "fig"}),
        nbformat.v4.new_output("display_data", data={
            "text/html": "<style>a::before{content:'<img src=x>'}</style><img src='data:,'>"}),
        nbformat.v4.new_output("stream", name="stdout", text="a\rb <img src=x>\n"),
    ]))
    return nb


@pytest.mark.parametrize("template", ["classic", "lab"])
def test_the_feedback_exporter_writes_nbconverts_page_without_its_tree(template: str) -> None:
    """The same page as nbconvert's HTMLExporter, read by the parser its last pass uses (the
    pass writes the tree back with its attributes sorted: the bytes differ, the page does
    not); a new nbconvert that changes what comes before that pass fails here. Classic is
    the template nbgrader's feedback extends (its own needs the grades GetGrades adds)."""
    from bs4 import BeautifulSoup

    nb = _images_notebook()
    ours, _ = _feedback_exporter(template, exporter.FeedbackExporter).from_notebook_node(
        copy.deepcopy(nb))
    theirs, _ = _feedback_exporter(template).from_notebook_node(copy.deepcopy(nb))
    def page(html: str) -> str:  # as the tree pass writes it; the template's random ids aside
        return re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "ID",
                      str(BeautifulSoup(html, "html.parser")))

    assert page(ours) == page(theirs)
    assert ours.count(exporter.MISSING_ALT) == theirs.count(exporter.MISSING_ALT) >= 3
    if template == "classic":
        assert ours != theirs, "the tree pass ran (the page came back re-serialised)"


def test_alt_text_goes_on_images_without_it_and_nowhere_else() -> None:
    html = ("<p>a\r\nb\u2028c</p>\n<IMG SRC='x'><img alt='kept' src='y'>\n<img src=z/>"
            "<!-- <img src=c> --><script>'<img src=s>'</script>&lt;img src=t&gt;<img\nsrc=w>")
    out, count = exporter.with_alt_text(html)
    alt = f'alt="{exporter.MISSING_ALT}"'
    assert count == 3
    assert f"<IMG {alt} SRC='x'>" in out and f"<img {alt} src=z/>" in out
    assert f"<img {alt}\nsrc=w>" in out and "<img alt='kept' src='y'>" in out
    assert "<!-- <img src=c> -->" in out and "'<img src=s>'" in out and "&lt;img src=t" in out
    assert exporter.with_alt_text("<p>no images</p>") == ("<p>no images</p>", 0)


def test_generate_feedback_writes_with_the_feedback_exporter() -> None:
    from nbgrader.converters import GenerateFeedback

    c = Config()
    exporter.configure(c)
    assert GenerateFeedback(config=c).exporter_class is exporter.FeedbackExporter
