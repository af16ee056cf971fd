"""Notebook 5's rules: the roofline formulas, each with the switches its mistakes flip.

As in :mod:`autograder.answers.intensity`: for each call, the right value and the value each
typical mistake gives on the same arguments (peak and bandwidth swapped, the maximum instead of
the minimum, no cap at the peak, ...). The hidden tests call the ``check_*`` functions here,
which hand these values to ``course.checks.roofline_answers``' judging functions; the visible
tests read the same values from the release's table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from autograder.answers.mistakes import Mistake, mistaken_values
from course.checks import roofline_answers as visible
from course.checks.expected import Expected
from course.runtime.i18n import N_

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


def _side(ai: float, peak: float, bandwidth: float) -> str:
    """Where ``ai`` lies against the ridge, as the checks' messages say it."""
    if bandwidth * ai < peak:
        return "below"
    return "at" if math.isclose(bandwidth * ai, peak) else "above"


def ridge_expected(case: tuple) -> Expected:
    peak, bandwidth = case
    return Expected(ridge_model(peak, bandwidth),
                    tuple(mistaken_values(ridge_model, (peak, bandwidth), RIDGE_MISTAKES)))


def roof_expected(case: tuple) -> Expected:
    ai, peak, bandwidth = case
    return Expected(roof_model(ai, peak, bandwidth),
                    tuple(mistaken_values(roof_model, (ai, peak, bandwidth), ROOF_MISTAKES)),
                    {"side": _side(ai, peak, bandwidth)})


def bound_expected(case: tuple) -> Expected:
    ai, peak, bandwidth = case
    right = bound_model(ai, peak, bandwidth)
    ridge = ridge_model(peak, bandwidth)
    wrong = "compute" if right == "memory" else "memory"
    hints = [m.hint for m in BOUND_MISTAKES
             if bound_model(ai, peak, bandwidth, **m.toggles) == wrong]
    where = "below" if ai < ridge else "at" if ai == ridge else "above"
    return Expected(right, (), {"ridge": ridge, "where": where, "hints": hints})


def array_elements(intensities: Sequence[float], peak: float, bandwidth: float
                   ) -> list[dict[str, Any]]:
    """Each element's entry of an ``attainable_gflops`` call on an array of intensities."""
    out = []
    for ai in intensities:
        entry = roof_expected((float(ai), peak, bandwidth))
        out.append({"ai": float(ai), "value": entry.value,
                    "mistakes": [[v, list(h)] for v, h in entry.mistakes]})
    return out


def check_critical_ai(fn: Callable[..., Any], cases: Sequence[tuple[float, float]]) -> None:
    """Check ``critical_ai(peak_gflops, bandwidth_gbs)`` on each case, any call."""
    visible.judge_critical_ai(fn, cases, ridge_expected)


def check_attainable(fn: Callable[..., Any], cases: Sequence[tuple[float, float, float]]) -> None:
    """Check ``attainable_gflops(ai, peak_gflops, bandwidth_gbs)`` on single intensities."""
    visible.judge_attainable(fn, cases, roof_expected)


def check_attainable_array(fn: Callable[..., Any], intensities: Sequence[float], peak: float,
                           bandwidth: float) -> None:
    """Check ``attainable_gflops`` on an array of intensities, element by element, any call."""
    visible.judge_attainable_array(fn, intensities, peak, bandwidth,
                                   lambda ai: roof_expected((ai, peak, bandwidth)))


def check_bound(fn: Callable[..., Any], cases: Sequence[tuple[float, float, float]]) -> None:
    """Check ``bound(ai, peak_gflops, bandwidth_gbs)`` on each case, any call."""
    visible.judge_bound(fn, cases, bound_expected)
