"""Notebook 5's answer checks: the roofline formulas against named mistakes.

As in :mod:`course.checks.intensity_answers`: for each call a visible test cell makes, the
release stored the right value and the value each typical mistake gives on the same arguments
(peak and bandwidth swapped, the maximum instead of the minimum, no cap at the peak, ...) in
``expected_answers.json``, and a wrong answer equal to one of them is told which mistake it is.
The rules for any call are the grader's (``autograder.answers.roofline``); its hidden tests
pass them to the same functions here, so both speak alike. A case is
``(peak_gflops, bandwidth_gbs)`` for ``critical_ai`` and ``(ai, peak_gflops, bandwidth_gbs)``
for ``attainable_gflops`` and ``bound``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from course.checks import expected
from course.checks.answers import AnswerError, expect_close
from course.runtime.i18n import N_, _
from course.trust import gate
from course.trust.code_policy import DisallowedCodeError
from course.trust.kernel_source import bundle_from_objects

Known = Callable[[tuple], expected.Expected]

#: where an intensity lies against the machine's ridge, as the checks' messages say it
#: (``side`` of an attainable_gflops entry and ``where`` of a bound entry).
SIDES = {"below": N_("{call}, below the ridge"), "at": N_("{call}, at the ridge"),
         "above": N_("{call}, above the ridge")}
WHERE = {"below": N_("{ai} FLOP/byte is below this machine's ridge"),
         "at": N_("{ai} FLOP/byte is exactly at this machine's ridge"),
         "above": N_("{ai} FLOP/byte is above this machine's ridge")}


def judge_critical_ai(fn: Callable[..., Any], cases: Sequence[tuple[float, float]],
                      known: Known) -> None:
    """``critical_ai(peak_gflops, bandwidth_gbs)`` on each case against ``known``."""
    gate.begin_check("check_critical_ai")
    for peak, bandwidth in cases:
        entry = known((peak, bandwidth))
        expect_close(fn(peak, bandwidth), float(entry.value),
                     f"critical_ai({peak!r}, {bandwidth!r})",
                     mistakes=expected.hints(entry.mistakes))


def judge_attainable(fn: Callable[..., Any], cases: Sequence[tuple[float, float, float]],
                     known: Known) -> None:
    """``attainable_gflops(ai, peak_gflops, bandwidth_gbs)`` on single intensities."""
    gate.begin_check("check_attainable")
    for ai, peak, bandwidth in cases:
        entry = known((ai, peak, bandwidth))
        side = _(SIDES[entry.extra["side"]])
        expect_close(fn(ai, peak, bandwidth), float(entry.value),
                     side.format(call=f"attainable_gflops({ai:.6g}, {peak!r}, {bandwidth!r})"),
                     mistakes=expected.hints(entry.mistakes))


def judge_attainable_array(fn: Callable[..., Any], intensities: Sequence[float], peak: float,
                           bandwidth: float, known: Callable[[float], expected.Expected]
                           ) -> None:
    """``attainable_gflops`` on a NumPy array of intensities, element by element (``known``
    gives each element's entry), in code the grader can rebuild (no ``min``/``if`` on an
    array)."""
    gate.begin_check("check_attainable_array")
    ai = np.array(intensities, dtype=float)
    call = _("attainable_gflops(an array of {count} intensities, {peak}, {bandwidth})").format(
        count=ai.size, peak=repr(peak), bandwidth=repr(bandwidth))
    try:
        got = fn(ai, peak, bandwidth)
    except ValueError as exc:
        raise AnswerError(_(
            "{call} raised ValueError ({error}). It works for one number but not for an array: "
            "min(x, y) and `if x < y:` need single numbers. Use arithmetic and comparisons, "
            "which work element by element (see section 4)").format(call=call, error=exc)
        ) from None
    if np.shape(got) != ai.shape:
        raise AnswerError(_("{call} returned {value}; return an array with one limit per "
                            "intensity").format(call=call, value=repr(got)))
    for x, value in zip(ai, np.asarray(got), strict=True):
        entry = known(float(x))
        expect_close(value, float(entry.value),
                     _("attainable_gflops(ai, {peak}, {bandwidth}) at ai = {ai}").format(
                         peak=repr(peak), bandwidth=repr(bandwidth), ai=f"{x:.4g}"),
                     mistakes=expected.hints(entry.mistakes))
    try:
        bundle_from_objects({"attainable_gflops": fn})  # what the grader rebuilds
    except DisallowedCodeError as exc:
        raise AnswerError(_("{error} For arrays, combine comparisons and arithmetic, which "
                            "work element by element (section 4)").format(error=exc)) from None


def judge_bound(fn: Callable[..., Any], cases: Sequence[tuple[float, float, float]],
                known: Known) -> None:
    """``bound(ai, peak_gflops, bandwidth_gbs)`` on each case: the string, the side of the
    ridge, and the ridge itself (which counts as "compute"). An entry's ``value`` is the right
    string; ``ridge`` and ``where`` are quoted; ``hints`` are the mistakes that give the other
    string."""
    gate.begin_check("check_bound")
    for ai, peak, bandwidth in cases:
        entry = known((ai, peak, bandwidth))
        right = entry.value
        got = fn(ai, peak, bandwidth)
        if got == right:
            continue
        wrong = "compute" if right == "memory" else "memory"
        hints = list(entry.extra["hints"]) if got == wrong else []
        if got not in ("memory", "compute"):
            hints = [N_('return exactly the string "memory" or "compute"')]
        message = _("{call} returned {value}: {where} ({peak} / {bandwidth} = {ridge}), so the "
                    "answer is {right}").format(
            call=f"bound({ai:.6g}, {peak!r}, {bandwidth!r})", value=repr(got),
            where=_(WHERE[entry.extra["where"]]).format(ai=f"{ai:.6g}"), peak=f"{peak:g}",
            bandwidth=f"{bandwidth:g}", ridge=f"{entry.extra['ridge']:.6g}",
            right=repr(right))
        if hints:
            message = _("{message}; {hint}").format(message=message, hint=expected.join(hints))
        raise AnswerError(message)


def check_critical_ai(fn: Callable[..., Any], cases: Sequence[tuple[float, float]]) -> None:
    """Check ``critical_ai(peak_gflops, bandwidth_gbs)`` on each case of the notebook."""
    judge_critical_ai(fn, cases, expected.known("check_critical_ai"))


def check_attainable(fn: Callable[..., Any], cases: Sequence[tuple[float, float, float]]) -> None:
    """Check ``attainable_gflops(ai, peak_gflops, bandwidth_gbs)`` on single intensities."""
    judge_attainable(fn, cases, expected.known("check_attainable"))


def check_attainable_array(fn: Callable[..., Any], intensities: Sequence[float], peak: float,
                           bandwidth: float) -> None:
    """Check that ``attainable_gflops`` takes a NumPy array of intensities and answers element
    by element, in code the grader can rebuild (no ``min``/``if`` on an array)."""
    entry = expected.lookup("check_attainable_array", (tuple(intensities), peak, bandwidth))
    elements = {float(e["ai"]): expected.from_json(e) for e in entry.extra["elements"]}
    judge_attainable_array(fn, intensities, peak, bandwidth, lambda x: elements[x])


def check_bound(fn: Callable[..., Any], cases: Sequence[tuple[float, float, float]]) -> None:
    """Check ``bound(ai, peak_gflops, bandwidth_gbs)`` on each case of the notebook: the string,
    the side of the ridge, and the ridge itself (which counts as "compute")."""
    judge_bound(fn, cases, expected.known("check_bound"))
