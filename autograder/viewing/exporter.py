"""nbconvert's HTML of a submission, cleaned: the formgrader's pages and the feedback.

nbgrader renders both with nbconvert's ``HTMLExporter`` (templates ``formgrade`` and
``feedback``). With ``sanitize_html`` on, nbconvert's templates drop JavaScript and widget
outputs, show SVG as an image and pass outputs and raw cells through the ``clean_html``
filter; but nbgrader's two templates render markdown cells with ``markdown2html`` alone, and
nbconvert's ``clean_html`` (bleach with a short list) turns ordinary ``<img>`` and ``<h1>``
into visible text. :func:`configure` therefore replaces both filters, for every HTML exporter
the configuration reaches (nbgrader's formgrader and ``generate_feedback`` both read it):

* ``clean_html`` becomes :func:`autograder.viewing.policy.clean`;
* ``markdown2html`` becomes the exporter's own ``markdown2html`` (same renderer, attachments,
  anchors) followed by the same cleaning (:class:`CleanMarkdown2HTML`).

``generate_feedback`` writes its pages with :class:`FeedbackExporter`: nbconvert's
``HTMLExporter`` less its last pass, which parses each whole page into a BeautifulSoup tree
and writes it out again to add alt text to images that have none — half of the CPU of a
student's feedback (2.5 of 4.8 CPU-s for ten pages on the 2-core VM, cProfile). The same alt
text is added by a parser that builds no tree.
"""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from jinja2 import pass_context
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from traitlets.config import LoggingConfigurable

from autograder.viewing import policy


def _context_marker() -> Any:
    """Jinja's mark of a filter that takes the template context first (``pass_context``)."""
    return pass_context(lambda context, value: value).jinja_pass_arg  # type: ignore[attr-defined]


class CleanMarkdown2HTML(LoggingConfigurable):
    """The exporter's ``markdown2html``, cleaned by the viewing policy.

    nbconvert builds a configurable filter with ``parent=`` the exporter, so the original
    filter (a bound method that reads the cell's attachments from the template context) is
    the parent's. The instance is called by Jinja with the context first, as the original is.
    """

    jinja_pass_arg = _context_marker()

    def __call__(self, context: Any, source: str) -> str:
        parent = self.parent
        html = parent.markdown2html(context, source) if parent is not None else source
        return policy.clean(str(html))


def clean_html(html: Any) -> str:
    """nbconvert's ``clean_html`` filter, with the viewing policy (bytes are UTF-8)."""
    text = html.decode("utf-8", "replace") if isinstance(html, bytes) else str(html)
    return policy.clean(text)


#: The filters nbconvert looks up by name, replaced (``HTMLExporter.filters``).
FILTERS = {
    "markdown2html": f"{CleanMarkdown2HTML.__module__}.{CleanMarkdown2HTML.__qualname__}",
    "clean_html": f"{clean_html.__module__}.{clean_html.__qualname__}",
}


#: what nbconvert's ``HTMLExporter`` writes as an image's alt text where the page has none
MISSING_ALT = "No description has been provided for this image"


class _ImagesWithoutAlt(HTMLParser):
    """Where the ``<img>`` start tags without an ``alt`` attribute begin: the same parser
    (Python's ``html.parser``) that nbconvert's BeautifulSoup pass uses, so the same tags —
    none inside a comment, a script or a style — and no tree."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.found: list[tuple[int, int]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img" and not any(name == "alt" for name, _ in attrs):
            self.found.append(self.getpos())


def with_alt_text(html: str) -> tuple[str, int]:
    """``html`` with :data:`MISSING_ALT` as the alt text of every image that has none, and how
    many there were (what nbconvert's ``HTMLExporter`` adds, without re-serialising the page)."""
    finder = _ImagesWithoutAlt()
    finder.feed(html)
    finder.close()
    if not finder.found:
        return html, 0
    line_starts = [0]  # the parser counts lines by "\n" alone (not str.splitlines's set)
    at = html.find("\n")
    while at >= 0:
        line_starts.append(at + 1)
        at = html.find("\n", at + 1)
    offsets = [line_starts[line - 1] + column for line, column in finder.found]
    for at in sorted(offsets, reverse=True):
        end = at + len("<img")
        if html[at:end].lower() != "<img":  # pragma: no cover - the parser said a tag is here
            raise ValueError(f"no <img> at offset {at}")
        html = f'{html[:end]} alt="{MISSING_ALT}"{html[end:]}'
    return html, len(offsets)


class FeedbackExporter(HTMLExporter):
    """nbconvert's ``HTMLExporter`` for the feedback pages, less the whole-page BeautifulSoup
    pass (see the module's docstring): the same template, filters and configuration, and the
    same alt text on images (:func:`with_alt_text`). A page of JupyterLab's template (whose
    cells that pass also makes focusable) goes through nbconvert's own pass."""

    def from_notebook_node(  # type: ignore[override]  # (as nbconvert's own)
            self, nb: Any, resources: dict[str, Any] | None = None,
            **kw: Any) -> tuple[str, dict[str, Any]]:
        # nbconvert 7's HTMLExporter.from_notebook_node up to its template (tests compare the
        # two exporters' pages, so that a new nbconvert that changes this shows)
        langinfo = nb.metadata.get("language_info", {})
        lexer = langinfo.get("pygments_lexer", langinfo.get("name", None))
        highlight_code = self.filters.get(
            "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self))
        resources = self._init_resources(resources)
        filter_data_type = WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources)
        self.register_filter("highlight_code", highlight_code)
        self.register_filter("filter_data_type", filter_data_type)
        html, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        if "jp-Notebook" in html:  # JupyterLab's template: nbconvert's own pass
            return super().from_notebook_node(nb, resources, **kw)
        html, missing = with_alt_text(html)
        if missing:
            self.log.warning("Alternative text is missing on %s image(s).", missing)
        return html, resources


def configure(c: Any) -> None:
    """Make every HTML exporter of the traitlets config ``c`` render submissions cleaned, and
    ``generate_feedback`` write its pages with :class:`FeedbackExporter`."""
    c.HTMLExporter.sanitize_html = True
    c.HTMLExporter.filters = dict(FILTERS)
    c.GenerateFeedback.exporter_class = \
        f"{FeedbackExporter.__module__}.{FeedbackExporter.__qualname__}"
