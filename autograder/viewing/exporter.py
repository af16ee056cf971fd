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
"""

from __future__ import annotations

from typing import Any

from jinja2 import pass_context
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


def configure(c: Any) -> None:
    """Make every HTML exporter of the traitlets config ``c`` render submissions cleaned."""
    c.HTMLExporter.sanitize_html = True
    c.HTMLExporter.filters = dict(FILTERS)
