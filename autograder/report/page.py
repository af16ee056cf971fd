"""The class report's pages: static HTML, safe to open whatever a student wrote or called
themselves.

Every text that came from a student or a check (ids, messages, GPU names) is escaped
(``html.escape``); the pictures are the report's own PNGs, embedded as ``data:`` URLs so that
the page works offline and from any folder; the page has no script at all, and its policy
(:func:`policy`, a ``<meta>`` first in ``<head>``) allows nothing but its one style block (by
its hash) and ``data:`` images: no script, no request to any origin would run or load even if
something slipped through.
"""

from __future__ import annotations

import base64
from html import escape

from autograder.viewing.policy import static_page_policy
from course.runtime.i18n import in_language

STYLE = """
body { font-family: "Noto Sans", "NanumGothic", "Malgun Gothic", sans-serif; margin: 1.5em;
       color: #222; max-width: 75em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
td, th { padding: 0.2em 0.7em; text-align: left; border-bottom: 1px solid #ddd;
         vertical-align: top; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; }
code, .msg { font-family: monospace; font-size: 0.9em; white-space: pre-wrap;
             overflow-wrap: anywhere; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
section { border-top: 1px solid #ccc; margin-top: 1.5em; }
.bad { color: #a00; } .good { color: #070; } .quiet { color: #666; }
"""


def policy(style: str = STYLE) -> str:
    """The page's Content-Security-Policy: its one style block, ``data:`` images, nothing
    else."""
    return static_page_policy(style, images="data:")


def text(value: object) -> str:
    """Any value as escaped text (quotes too: safe in an attribute)."""
    return escape(str(value), quote=True)


def image(png: bytes | None, alt: str) -> str:
    """A picture embedded in the page (``data:``), or nothing."""
    if not png:
        return ""
    data = base64.b64encode(png).decode("ascii")
    return f'<p><img src="data:image/png;base64,{data}" alt="{text(alt)}"></p>'


def table(head: list[str], rows: list[list[object]], numeric: frozenset[int] = frozenset()
          ) -> str:
    """An HTML table of escaped cells; columns in ``numeric`` aligned right."""
    def cell(tag: str, i: int, value: object) -> str:
        cls = ' class="n"' if i in numeric else ""
        return f"<{tag}{cls}>{text(value)}</{tag}>"

    header = "".join(cell("th", i, h) for i, h in enumerate(head))
    body = "".join("<tr>" + "".join(cell("td", i, v) for i, v in enumerate(row)) + "</tr>"
                   for row in rows)
    return f"<table><tr>{header}</tr>{body}</table>"


def page(language: str, title: str, body: str) -> str:
    """A whole page: the policy first, then the title, the style and ``body`` (already
    HTML, built from escaped parts)."""
    lang = "ko" if language == "ko" else "en"
    return (f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="{policy()}">\n'
            f'<meta name="referrer" content="no-referrer">\n'
            f"<title>{text(title)}</title><style>{STYLE}</style></head>\n<body>\n"
            f"<h1>{text(title)}</h1>\n{body}\n</body></html>\n")

