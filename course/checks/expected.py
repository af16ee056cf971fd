"""What the visible answer checks of notebooks 1 and 5 know: values, worked out at release.

``expected_answers.json`` (beside this module) is written by ``python -m autograder.release``
from the grader's rules (``autograder.answers``) for exactly the calls the released notebooks'
visible test cells make, and nothing else: for each, the right value and the value of each
named mistake there, with the mistakes' hints as catalog messages (shown in the student's
language). A student's copy of the course can tell a wrong answer which mistake it is without
holding any rule that computes an answer, and it holds no hidden test's arguments.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course.runtime.i18n import _

#: the table's file, in this package (package data).
TABLE = Path(__file__).with_name("expected_answers.json")

#: a named mistake's value at one call, and the hints of every mistake that gives it, in order
Mistakes = Sequence[tuple[float, Sequence[str]]]


@dataclass(frozen=True)
class Expected:
    """What a check knows about one call: the right value, each named mistake's value there
    (with the catalog messages of its hints) and what else the check's message quotes."""

    value: Any
    mistakes: Mistakes = ()
    extra: Mapping[str, Any] = field(default_factory=dict)


def join(messages: Sequence[str]) -> str:
    """The catalog ``messages`` in the student's language, joined with "; or ", each once."""
    text = ""
    for message in messages:
        hint = _(message)
        if not text:
            text = hint
        elif hint not in text:
            text = _("{hint}; or {other}").format(hint=text, other=hint)
    return text


def hints(mistakes: Mistakes) -> dict[float, str]:
    """Value -> hint in the student's language; mistakes that give the same value are joined
    (:func:`join`)."""
    return {float(value): join(messages) for value, messages in mistakes}


@functools.lru_cache(maxsize=1)
def _table() -> dict[str, list[dict[str, Any]]]:
    data: dict[str, list[dict[str, Any]]] = json.loads(TABLE.read_text(encoding="utf-8"))
    return data


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Mapping) and isinstance(b, Mapping):  # a dict of a case: any order
        return set(a) == set(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not (
            isinstance(a, bool) or isinstance(b, bool)):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=0.0)
    return bool(a == b)


def from_json(entry: Mapping[str, Any]) -> Expected:
    """One entry of the table (``value``, ``mistakes``, anything else is ``extra``)."""
    extra = {k: v for k, v in entry.items() if k not in ("case", "value", "mistakes")}
    return Expected(entry.get("value"), tuple((m[0], tuple(m[1])) for m in
                                              entry.get("mistakes", ())), extra)


def known(check: str) -> Callable[[Any], Expected]:
    """What ``check`` knows of a case: its entry in the table (:func:`lookup`)."""
    return functools.partial(lookup, check)


def lookup(check: str, case: Any) -> Expected:
    """The table's entry for ``check`` called on ``case``; ``ValueError`` for a call the
    notebook's visible tests do not make (the grader's hidden tests check those)."""
    for entry in _table().get(check, ()):
        if _same(entry["case"], case):
            return from_json(entry)
    raise ValueError(_("{check} knows the values of the notebook's own test calls only, and "
                       "{case} is not one of them; the grader checks your function on more "
                       "calls").format(check=check, case=repr(case)))
