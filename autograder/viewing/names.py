"""The course's one rule for names a student chooses: student ids and the files they hand in.

A student id becomes a folder (``submitted/<id>/``), a URL part of the formgrader
(``/formgrader/manage_students/<id>``), a row of the gradebook and of ``grades.csv``; a file
name becomes a path and a link. Whatever route a name came in by — an LMS download
(``make collect``), nbgrader's exchange (``nbgrader collect``), a folder an instructor copied
into ``submitted/`` by hand, the gradebook — it is held to :data:`SAFE_ID`: letters and
digits first, then letters, digits and ``. _ @ + -``, at most 100 characters. Such a name is
markup nowhere, a path nowhere but where it is put, and needs no quoting in a URL.

:func:`safe_alias` gives a refused name the safe name it is graded under (readable, and
different for different names); :func:`printable` is how a refused name is reported.
"""

from __future__ import annotations

import hashlib
import re

from autograder.viewing.terminal import printable as _printable

#: a student id (or handed-in file name) that is safe as a folder name, a URL part and text
SAFE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@+-]{0,99}")
#: the prefix of the safe name a refused id is graded under
ALIAS_PREFIX = "renamed-"


def is_safe(name: str) -> bool:
    """True when ``name`` follows :data:`SAFE_ID` (the whole of it: no trailing newline)."""
    return isinstance(name, str) and SAFE_ID.fullmatch(name) is not None


def safe_alias(name: str) -> str:
    """The safe name a refused ``name`` is graded under: ``renamed-`` and the safe characters of
    it (at most 40), then 8 hex digits of its SHA-256, so that two refused names never meet."""
    kept = re.sub(r"[^A-Za-z0-9._@+-]+", "_", name).strip("._@+-")[:40]
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{ALIAS_PREFIX}{kept + '-' if kept else ''}{digest}"


def printable(name: str) -> str:
    """``name`` as a report shows it: quoted, control characters and line breaks spelled out."""
    return repr(_printable(name.replace("\n", "\\n")))
