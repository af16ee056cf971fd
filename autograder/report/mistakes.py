"""The named mistakes of a class, grouped by what they say rather than how they say it.

A failed check's message names a mistake with the student's own numbers in it ("C[3, 17] is
12.5, expected 3.25", "tile 16 at 2048³ …"). Counting the class's mistakes groups those
messages by their *template*: numbers, shapes, quoted names and addresses normalised
(:func:`template`), so two students who made the same mistake at different places count
together, and so the grouping survives a check's wording changing (the key is computed from
whatever the message says now; nothing here lists the messages).

An example message shown in the report is :func:`anonymised`: the class's student ids and
names are taken out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: at most this many characters of a message (its first line) are shown or grouped
MESSAGE_CHARS = 240
STUDENT = "<student>"

_QUOTED = re.compile(r"'[^'\n]{0,80}'|\"[^\"\n]{0,80}\"|`[^`\n]{0,80}`")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]+\b")
_NUMBER = re.compile(r"(?<![A-Za-z_])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_SPACE = re.compile(r"\s+")


def first_line(message: str) -> str:
    """The message's first non-empty line, at most :data:`MESSAGE_CHARS` characters."""
    for line in message.splitlines():
        if line.strip():
            return line.strip()[:MESSAGE_CHARS]
    return ""


def template(ename: str, evalue: str) -> str:
    """The mistake a message names, without its particulars: quoted text becomes ``'…'``,
    addresses and numbers (so shapes and sizes too) ``#``, spacing one space."""
    text = _QUOTED.sub("'…'", first_line(evalue))
    text = _ADDRESS.sub("#", text)
    text = _NUMBER.sub("#", text)
    return f"{ename}: {_SPACE.sub(' ', text).strip()}"


def anonymised(message: str, people: Iterable[str]) -> str:
    """``message`` with every student id and name of the class (``people``) replaced by
    ``<student>``: longest first, so a name inside another is never half replaced."""
    for word in sorted({p for p in people if p and len(p) > 1}, key=len, reverse=True):
        # a whole word only: the id "cy" is no part of "policy"
        message = re.sub(rf"(?<!\w){re.escape(word)}(?!\w)", STUDENT, message,
                         flags=re.IGNORECASE)
    return message
