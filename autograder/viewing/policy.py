"""The HTML a student's notebook may put in front of a person, and what cleaning removed.

:func:`clean` keeps what hand grading needs — text, headings, lists, code, tables (pandas'
too), emphasis, links, math (MathJax reads the text), and raster images embedded as
``data:`` URLs or linked by a relative path — and removes everything that can run script,
load something from elsewhere or change the page around it: ``<script>``, ``<style>``, event
handlers, ``javascript:`` and other URL schemes, ``<iframe>``, ``<object>``, ``<embed>``,
``<form>``, ``<meta>``, ``<base>``, ``<link>``, SVG and MathML, remote images (a tracking
beacon) and links to other hosts or out of the notebook's folder — each URL read as a browser
reads it (:mod:`autograder.viewing.urls`: backslashes, tabs, character references) — every
``style`` property but ``text-align``, and ``data-*`` attributes (the formgrader's script
acts on ``data-link``). Element ids get a ``user-content-`` prefix, and
in-page links follow them, so a student's element can never take the id of one of the
formgrader's score fields.

The cleaning is nh3's (ammonia, an HTML5 parser and an allow-list); :func:`removed` only
*reports*, by comparing what Python's HTML parser finds before and after, so that the grade
table can say what a student lost from view. It never decides what is safe.
"""

from __future__ import annotations

import base64
import hashlib
from collections import Counter
from html.parser import HTMLParser

import nh3

from autograder.viewing import urls

#: Tags kept: ammonia's default list, less image maps (``<area href>``).
TAGS = frozenset(nh3.ALLOWED_TAGS - {"area", "map"})
#: Attributes kept, by tag ("*": on every tag).
ATTRIBUTES = {
    **{tag: set(attrs) for tag, attrs in nh3.ALLOWED_ATTRIBUTES.items()},
    "*": {"class", "id", "title", "lang", "dir", "style"},
    "table": {*nh3.ALLOWED_ATTRIBUTES.get("table", set()), "border"},
    "details": {"open"},
}
#: ``style`` may only align text (markdown tables and pandas write ``text-align``).
STYLE_PROPERTIES = frozenset({"text-align"})
#: URL schemes kept in ``href``/``src``/``cite``; relative URLs are kept too.
URL_SCHEMES = frozenset({"http", "https", "mailto", "data"})
#: Attributes that hold a URL: each is resolved as a browser resolves it before it is kept
#: (:mod:`autograder.viewing.urls`).
URL_ATTRIBUTES = frozenset({"href", "src", "cite", "longdesc", "action", "formaction",
                            "poster", "background"})
ID_PREFIX = "user-content-"


def _filter_attribute(tag: str, attribute: str, value: str) -> str | None:
    if attribute == "id":
        return value if value.startswith(ID_PREFIX) else ID_PREFIX + value
    if attribute in URL_ATTRIBUTES:
        if not urls.allowed(tag, attribute, value):
            return None  # a remote load, a link out of the notebook's folder, a script
        if attribute == "href" and urls.resolve(value).fragment_only \
                and not value.strip().startswith("#" + ID_PREFIX):
            return "#" + ID_PREFIX + value.strip()[1:]
    return value


def clean(html: str) -> str:
    """``html`` with everything outside the policy removed (see the module's docstring)."""
    return nh3.clean(
        html, tags=set(TAGS), clean_content_tags={"script", "style"},
        attributes={tag: set(attrs) for tag, attrs in ATTRIBUTES.items()},
        attribute_filter=_filter_attribute, strip_comments=True,
        link_rel="noopener noreferrer nofollow", url_schemes=set(URL_SCHEMES),
        filter_style_properties=set(STYLE_PROPERTIES))


class Inventory(HTMLParser):
    """What a fragment holds, for the report and for the formgrader's hashes:

    * ``tags`` and ``attributes`` ((tag, attribute, value) triples), counted, with what the
      cleaner itself changes undone — the ``rel`` it adds to links, the id prefix, the
      spacing it gives ``style``;
    * ``scripts`` (the text of each inline JavaScript ``<script>``) and ``handlers`` (each
      event-handler attribute's value), exactly as written.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter[str] = Counter()
        self.attributes: Counter[tuple[str, str, str]] = Counter()
        self.scripts: list[str] = []
        self.handlers: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        found = dict(attrs)
        self._in_script = tag == "script" and "src" not in found \
            and (found.get("type") or "text/javascript") == "text/javascript"
        if self._in_script:
            self.scripts.append("")
        for name, value in attrs:
            if name.startswith("on") and value:
                self.handlers.append(value)
            if name == "rel":  # the cleaner adds rel="noopener …" to links: not a loss
                continue
            text = value or ""
            if name == "id" or (name == "href" and text.startswith("#")):
                text = text.replace(ID_PREFIX, "", 1)
            if name == "style":
                text = "".join(text.lower().split()).rstrip(";")
            self.attributes[(tag, name, text)] += 1

    handle_startendtag = handle_starttag

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts[-1] += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False


def inventory(html: str) -> Inventory:
    """The :class:`Inventory` of ``html``."""
    parser = Inventory()
    parser.feed(html)
    parser.close()
    return parser


def removed(original: str, cleaned: str) -> list[str]:
    """What :func:`clean` took out of ``original``: ``<script>``, ``img onerror=`` …, sorted.

    A report for people (the grade table's notes); the cleaning itself never depends on it.
    """
    before, after = inventory(original), inventory(cleaned)
    gone = [f"<{tag}>" for tag in sorted(before.tags - after.tags)]
    # an attribute of a tag that is gone altogether is said by the tag
    gone += sorted({f"{tag} {name}=" for tag, name, _value in before.attributes - after.attributes
                    if after.tags[tag]})
    return gone


def clean_and_report(html: str) -> tuple[str, list[str]]:
    """(:func:`clean` of ``html``, what it removed)."""
    cleaned = clean(html)
    return cleaned, removed(html, cleaned)


def hash_source(text: str) -> str:
    """The Content-Security-Policy source that allows exactly this inline script, handler or
    style and nothing else: ``'sha256-…'`` (every page the course writes or guards uses it)."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode()}'"


def static_page_policy(style: str, images: str = "'none'") -> str:
    """The policy of a page the course writes to disk for a person to open (the class report,
    the similarity report): its one ``<style>`` block by hash, images from ``images`` only, no
    script, no request anywhere."""
    return "; ".join([
        "default-src 'none'", f"style-src {hash_source(style)}", f"img-src {images}",
        "script-src 'none'", "base-uri 'none'", "form-action 'none'", "object-src 'none'",
        "frame-src 'none'", "connect-src 'none'"])
