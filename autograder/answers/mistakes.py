"""A typical mistake as a switch of a model, and the values the mistakes give at one call."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Mistake:
    """One typical mistake: the model's arguments that make it, and what to tell the student
    (in English, marked with ``N_`` for the catalog: translated where it is shown)."""

    toggles: dict[str, Any]
    hint: str


def mistaken_values(model: Callable[..., float], args: Sequence[Any],
                    mistakes: Sequence[Mistake]) -> list[tuple[float, list[str]]]:
    """``(value, [hint, …])`` for each value a mistake gives on ``args`` that differs from the
    right one, in the mistakes' order; mistakes that give the same value share its entry, so
    each is named (:func:`course.checks.expected.hints` joins them)."""
    right = model(*args)
    out: list[tuple[float, list[str]]] = []
    for mistake in mistakes:
        try:
            wrong = model(*args, **mistake.toggles)
        except ZeroDivisionError:
            continue
        if math.isclose(wrong, right, rel_tol=1e-9):
            continue
        same = next((entry for entry in out if math.isclose(entry[0], wrong, rel_tol=1e-9)),
                    None)
        if same is None:
            out.append((wrong, [mistake.hint]))
        else:
            same[1].append(mistake.hint)
    return out
