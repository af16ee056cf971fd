"""Checks for numeric answers (arithmetic intensity, roofline formulas) with useful messages.

A test cell states the expected value and, optionally, the values that typical mistakes
produce, each with a hint. A student who counted FLOPs as M·N·K instead of 2·M·N·K is told
exactly that, not just "wrong".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from course.trust import gate


class AnswerError(AssertionError):
    """A formula returned the wrong value; the message says which call and, if known, why."""


def _as_float(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(
        value, "__float__"
    ):
        raise AnswerError(f"{what} returned {value!r} ({type(value).__name__}); return a number")
    out = float(value)
    if not math.isfinite(out):
        raise AnswerError(f"{what} returned {out}; expected a finite number")
    return out


def expect_close(got: Any, expected: float, what: str, *, rel: float = 1e-6,
                 mistakes: Mapping[float, str] | None = None) -> None:
    """Raise :class:`AnswerError` unless ``got`` ≈ ``expected`` (relative tolerance)."""
    gate.begin_check("expect_close")
    value = _as_float(got, what)
    if math.isclose(value, expected, rel_tol=rel, abs_tol=1e-12):
        return
    for wrong, hint in (mistakes or {}).items():
        if math.isclose(value, wrong, rel_tol=rel, abs_tol=1e-12):
            raise AnswerError(f"{what} returned {value:.6g}: {hint}")
    raise AnswerError(f"{what} returned {value:.6g}, which is not right. Re-derive FLOPs and "
                      "bytes from the definitions above.")


def expect_equal(got: Any, expected: Any, what: str, hint: str = "") -> None:
    """Raise :class:`AnswerError` unless ``got == expected`` (strings, labels)."""
    gate.begin_check("expect_equal")
    if got != expected:
        raise AnswerError(f"{what} returned {got!r}" + (f": {hint}" if hint else ""))


def expect_value_error(fn: Callable[..., Any], *args: Any, what: str, **kwargs: Any) -> None:
    """Raise :class:`AnswerError` unless ``fn(*args, **kwargs)`` raises ValueError."""
    gate.begin_check("expect_value_error")
    try:
        fn(*args, **kwargs)
    except ValueError:
        return
    except Exception as exc:  # noqa: BLE001 - the student's function may raise anything
        raise AnswerError(f"{what} raised {type(exc).__name__}; raise ValueError instead") from None
    raise AnswerError(f"{what} did not raise ValueError; check the argument and raise "
                      "ValueError with a message naming it")
