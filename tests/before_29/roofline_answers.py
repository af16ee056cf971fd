"""Notebook 5's answer checks: the roofline formulas against named mistakes derived by rule.

As in :mod:`course.checks.intensity_answers`: for each call a test cell lists, the check
computes the right value and the value each typical mistake gives on the same arguments (peak
and bandwidth swapped, the maximum instead of the minimum, no cap at the peak, ...), and a
wrong answer equal to one of them is told which mistake it is. A case is
``(peak_gflops, bandwidth_gbs)`` for ``critical_ai`` and ``(ai, peak_gflops, bandwidth_gbs)``
for ``attainable_gflops``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from course.checks.answers import AnswerError, expect_close
from course.checks.intensity_answers import Mistake, mistaken_values
from course.runtime.i18n import N_, _
from course.trust import gate
from course.trust.code_policy import DisallowedCodeError
from course.trust.kernel_source import bundle_from_objects

#: the machine of the visible tests, whose ridge a hard-wired answer would return.
T4_PEAK_GFLOPS, T4_BANDWIDTH_GBS = 8141.0, 320.0


def ridge_model(peak: float, bandwidth: float, *, swapped: bool = False,
                multiplied: bool = False, t4: bool = False) -> float:
    """The ridge point peak / bandwidth [FLOP/byte], or what a mistake makes of it."""
    if t4:
        peak, bandwidth = T4_PEAK_GFLOPS, T4_BANDWIDTH_GBS
    if multiplied:
        return peak * bandwidth
    return bandwidth / peak if swapped else peak / bandwidth


def roof_model(ai: float, peak: float, bandwidth: float, *, swapped: bool = False,
               maximum: bool = False, uncapped: bool = False, peak_slope: bool = False,
               divided: bool = False, none_kept: bool = False,
               peak_twice: bool = False) -> float:
    """min(peak, bandwidth × ai) [GFLOP/s], or what a mistake makes of it."""
    if swapped:
        peak, bandwidth = bandwidth, peak
    if peak_slope:
        return peak * ai
    memory = bandwidth / ai if divided else bandwidth * ai
    if uncapped:
        return memory
    if none_kept:  # e.g. `<` for one roof and `>` for the other: at the ridge neither
        return 0.0
    if peak_twice:  # e.g. `<=` for one roof and `>=` for the other: at the ridge both
        return 2 * peak
    return max(peak, memory) if maximum else min(peak, memory)


_SWAPPED = (N_("peak and bandwidth are swapped: the memory roof is bandwidth_gbs × ai, the cap is "
            "peak_gflops"))

RIDGE_MISTAKES = (
    Mistake({"swapped": True}, N_("peak and bandwidth are swapped: the ridge is peak / bandwidth "
            "(GFLOP/s ÷ GB/s = FLOP/byte)")),
    Mistake({"multiplied": True}, N_("the ridge is where bandwidth × AI = peak, so AI = peak / "
            "bandwidth: divide, do not multiply")),
    Mistake({"t4": True}, N_("that is the T4's ridge: use the arguments, not fixed numbers")),
)

ROOF_MISTAKES = (
    Mistake({"maximum": True}, N_("that is the higher of the two roofs: the limit is the lower "
            "one, min(peak, bandwidth × ai), not the maximum")),
    Mistake({"uncapped": True}, N_("above the ridge the peak caps the result: min(peak, "
            "bandwidth × ai), not bandwidth × ai alone")),
    Mistake({"swapped": True}, _SWAPPED),
    Mistake({"peak_slope": True}, N_("the memory roof is bandwidth × ai, not peak × ai (and the "
            "result never exceeds the peak)")),
    Mistake({"divided": True}, N_("the memory roof is bandwidth × ai, not bandwidth / ai")),
    Mistake({"none_kept": True}, N_("no roof was kept: where a strict `<` selects one roof, a "
            "`>=` must select the other, so that one term is always kept (look at the ridge)")),
    Mistake({"peak_twice": True}, N_("twice the peak: both terms were kept where one belongs "
            "(at the ridge the two roofs are equal); where a strict `<` selects one roof, a "
            "`>=` must select the other")),
)


def check_critical_ai(fn: Callable[..., Any], cases: Sequence[tuple[float, float]]) -> None:
    """Check ``critical_ai(peak_gflops, bandwidth_gbs)`` on each case."""
    gate.begin_check("check_critical_ai")
    for peak, bandwidth in cases:
        expect_close(fn(peak, bandwidth), ridge_model(peak, bandwidth),
                     f"critical_ai({peak!r}, {bandwidth!r})",
                     mistakes=mistaken_values(ridge_model, (peak, bandwidth), RIDGE_MISTAKES))


def check_attainable(fn: Callable[..., Any], cases: Sequence[tuple[float, float, float]]) -> None:
    """Check ``attainable_gflops(ai, peak_gflops, bandwidth_gbs)`` on single intensities."""
    gate.begin_check("check_attainable")
    for ai, peak, bandwidth in cases:
        side = _("{call}, below the ridge") if bandwidth * ai < peak else (
            _("{call}, at the ridge") if math.isclose(bandwidth * ai, peak)
            else _("{call}, above the ridge"))
        expect_close(fn(ai, peak, bandwidth), roof_model(ai, peak, bandwidth),
                     side.format(call=f"attainable_gflops({ai:.6g}, {peak!r}, {bandwidth!r})"),
                     mistakes=mistaken_values(roof_model, (ai, peak, bandwidth), ROOF_MISTAKES))


def check_attainable_array(fn: Callable[..., Any], intensities: Sequence[float], peak: float,
                           bandwidth: float) -> None:
    """Check that ``attainable_gflops`` takes a NumPy array of intensities and answers element
    by element, in code the grader can rebuild (no ``min``/``if`` on an array)."""
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
        expect_close(value, roof_model(x, peak, bandwidth),
                     _("attainable_gflops(ai, {peak}, {bandwidth}) at ai = {ai}").format(
                         peak=repr(peak), bandwidth=repr(bandwidth), ai=f"{x:.4g}"),
                     mistakes=mistaken_values(roof_model, (x, peak, bandwidth), ROOF_MISTAKES))
    try:
        bundle_from_objects({"attainable_gflops": fn})  # what the grader rebuilds
    except DisallowedCodeError as exc:
        raise AnswerError(_("{error} For arrays, combine comparisons and arithmetic, which "
                            "work element by element (section 4)").format(error=exc)) from None


def bound_model(ai: float, peak: float, bandwidth: float, *, inclusive: bool = False,
                inverted: bool = False, t4: bool = False) -> str:
    """"memory" if ai < peak / bandwidth (strictly), else "compute"; or a mistake's answer."""
    ridge = ridge_model(peak, bandwidth, t4=t4)
    below = ai <= ridge if inclusive else ai < ridge
    return "memory" if below != inverted else "compute"


BOUND_MISTAKES = (
    Mistake({"inclusive": True}, N_('"memory" only when ai < critical_ai (strictly): at the ridge '
            'itself the answer is "compute"')),
    Mistake({"inverted": True}, N_("the sides are swapped: below the ridge the memory roof is the "
            'lower one ("memory"), above it the peak ("compute")')),
    Mistake({"t4": True}, N_("use the arguments (through critical_ai), not the T4's ridge")),
)


def check_bound(fn: Callable[..., Any], cases: Sequence[tuple[float, float, float]]) -> None:
    """Check ``bound(ai, peak_gflops, bandwidth_gbs)`` on each case: the string, the side of
    the ridge, and the ridge itself (which counts as "compute")."""
    gate.begin_check("check_bound")
    for ai, peak, bandwidth in cases:
        right = bound_model(ai, peak, bandwidth)
        got = fn(ai, peak, bandwidth)
        if got == right:
            continue
        ridge = ridge_model(peak, bandwidth)
        where = (N_("{ai} FLOP/byte is below this machine's ridge") if ai < ridge else
                 N_("{ai} FLOP/byte is exactly at this machine's ridge") if ai == ridge else
                 N_("{ai} FLOP/byte is above this machine's ridge"))
        hints = [_(m.hint) for m in BOUND_MISTAKES
                 if bound_model(ai, peak, bandwidth, **m.toggles) not in (right, None)
                 and got == bound_model(ai, peak, bandwidth, **m.toggles)]
        if got not in ("memory", "compute"):
            hints = [_('return exactly the string "memory" or "compute"')]
        message = _("{call} returned {value}: {where} ({peak} / {bandwidth} = {ridge}), so the "
                    "answer is {right}").format(
            call=f"bound({ai:.6g}, {peak!r}, {bandwidth!r})", value=repr(got),
            where=_(where).format(ai=f"{ai:.6g}"), peak=f"{peak:g}", bandwidth=f"{bandwidth:g}",
            ridge=f"{ridge:.6g}", right=repr(right))
        if hints:
            joined = hints[0]
            for hint in hints[1:]:
                joined = _("{hint}; or {other}").format(hint=joined, other=hint)
            message = _("{message}; {hint}").format(message=message, hint=joined)
        raise AnswerError(message)
