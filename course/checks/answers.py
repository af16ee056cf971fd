"""Checks for numeric answers (arithmetic intensity, roofline formulas) with useful messages.

A test cell states the expected value and, optionally, the values that typical mistakes
produce, each with a hint. A student who counted FLOPs as M·N·K instead of 2·M·N·K is told
exactly that, not just "wrong".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from course.runtime.errors import not_written_message, not_written_yet
from course.runtime.i18n import _
from course.trust import gate


class AnswerError(AssertionError):
    """A formula returned the wrong value; the message says which call and, if known, why."""


def _as_float(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(
        value, "__float__"
    ):
        raise AnswerError(_("{what} returned {value} ({type}); return a number").format(
            what=what, value=repr(value), type=type(value).__name__))
    out = float(value)
    if not math.isfinite(out):
        raise AnswerError(_("{what} returned {value}; expected a finite number").format(
            what=what, value=out))
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
            raise AnswerError(_("{what} returned {value}: {hint}").format(
                what=what, value=f"{value:.6g}", hint=hint))
    raise AnswerError(_("{what} returned {value}, which is not right. Re-derive FLOPs and bytes "
                        "from the definitions above.").format(what=what, value=f"{value:.6g}"))


def expect_equal(got: Any, expected: Any, what: str, hint: str = "") -> None:
    """Raise :class:`AnswerError` unless ``got == expected`` (strings, labels)."""
    gate.begin_check("expect_equal")
    if got != expected:
        if hint:
            raise AnswerError(_("{what} returned {value}: {hint}").format(
                what=what, value=repr(got), hint=hint))
        raise AnswerError(_("{what} returned {value}").format(what=what, value=repr(got)))


def expect_value_error(fn: Callable[..., Any], *args: Any, what: str, **kwargs: Any) -> None:
    """Raise :class:`AnswerError` unless ``fn(*args, **kwargs)`` raises ValueError."""
    gate.begin_check("expect_value_error")
    try:
        fn(*args, **kwargs)
    except ValueError:
        return
    except Exception as exc:  # noqa: BLE001 - the student's function may raise anything
        if not_written_yet(exc):
            raise AnswerError(not_written_message(
                getattr(fn, "__name__", what),
                then=_("with your code and run its cell, then this one again."))) from None
        raise AnswerError(_("{what} raised {error}; raise ValueError instead").format(
            what=what, error=type(exc).__name__)) from None
    raise AnswerError(_("{what} did not raise ValueError; check the argument and raise "
                        "ValueError with a message naming it").format(what=what))
