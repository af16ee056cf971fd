"""Where a URL a student wrote takes the browser, decided as the browser decides it.

A cleaner that looks for ``http:`` or ``//`` at the start of an ``<img src>`` misses what a
browser still resolves to another host: the WHATWG URL parser strips leading and trailing
spaces and control characters, removes every tab and newline anywhere, and reads ``\\`` as
``/`` in http(s) and file URLs — ``\\\\host/x``, ``/\\host/x``, ``h<tab>ttp://host/x`` and
``//host`` spelled with character references all load from ``host``. And a *relative* link is
not harmless on the instructor's own origin: ``../../manage_students/…`` from the grading page
is a formgrader page, ``/api/contents/…`` the Jupyter API.

:func:`resolve` parses a value (already freed of HTML character references by the HTML
parser) the way a browser does, far enough to answer: which scheme, or which relative path.
:func:`allowed` says whether a student's URL may stay:

* images: only an embedded raster ``data:`` URL, or a file beside the notebook;
* links: an in-page ``#anchor``, ``mailto:``, or a file beside the notebook — a link to
  another host is removed (following it is a request to another origin from the viewer's
  page), as is every link that climbs out of the notebook's folder (``..``, ``/…``), where the
  formgrader's pages and the Jupyter API are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote

#: WHATWG: leading and trailing C0 controls and spaces are stripped, ASCII tab and newline
#: removed everywhere.
_EDGES = "".join(chr(c) for c in range(0x21))
_TAB_NEWLINE = re.compile(r"[\t\n\r]")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
#: The only ``data:`` URLs kept, and only as an image's source.
RASTER_DATA = ("image/png;", "image/jpeg;", "image/gif;", "image/webp;")


@dataclass(frozen=True)
class Resolved:
    """A URL as the browser reads it: its scheme ("" when relative), and the rest."""

    scheme: str
    rest: str

    @property
    def remote(self) -> bool:
        """True when it names a host (``//host``: another origin, or this one by name)."""
        return self.rest.startswith("//") and self.scheme in ("", "http", "https", "file", "ftp",
                                                              "ws", "wss")

    @property
    def fragment_only(self) -> bool:
        return not self.scheme and self.rest.startswith("#")

    @property
    def climbs(self) -> bool:
        """True for a relative URL that leaves the page's folder: from the root (``/…``) or
        through a ``..`` segment (``%2e%2e`` included)."""
        if self.scheme or self.fragment_only:
            return False
        path = re.split(r"[?#]", self.rest, maxsplit=1)[0]
        if path.startswith("/"):
            return True
        return any(".." in unquote(segment) for segment in path.split("/"))


def resolve(value: str) -> Resolved:
    """``value`` (an attribute's value, character references already decoded) as the WHATWG
    URL parser sees it, far enough to classify it."""
    text = _TAB_NEWLINE.sub("", value.strip(_EDGES))
    match = _SCHEME.match(text)
    scheme = match.group(1).lower() if match else ""
    rest = text[match.end():] if match else text
    if scheme in ("", "http", "https", "file", "ftp", "ws", "wss"):
        rest = rest.replace("\\", "/")  # special schemes (and relative URLs on them)
    return Resolved(scheme, rest)


def allowed(tag: str, attribute: str, value: str) -> bool:
    """Whether a student's URL in ``tag``'s ``attribute`` may stay (see the module's docstring)."""
    url = resolve(value)
    if url.remote:
        return False
    if tag == "img" and attribute == "src":
        if url.scheme == "data":
            return url.rest.lower().lstrip().startswith(RASTER_DATA)
        return not url.scheme and not url.fragment_only and not url.climbs
    if url.scheme:
        return url.scheme == "mailto"
    return not url.climbs
