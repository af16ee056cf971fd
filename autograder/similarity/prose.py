"""A written answer as words: what the release's prompt said taken out, case and punctuation
ignored (the prose has no syntax to read; its words are its tokens)."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)

Token = tuple[str, int]


def tokens(text: str, given: list[str]) -> list[Token]:
    """The words of ``text`` with their line numbers, leaving out every line that one of the
    releases' ``given`` versions of the cell has (the prompt, ``YOUR ANSWER HERE``)."""
    prompt = {line.strip() for version in given for line in version.split("\n")}
    out: list[Token] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip() in prompt:
            continue
        out.extend((f"w:{word.lower()}", number) for word in _WORD.findall(line))
    return out
