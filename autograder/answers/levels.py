"""Notebook 5's hierarchical-roofline rules: intensities per memory level and the bounding level.

A counter reading gives, for one launch, the bytes that went through each memory level (DRAM,
L2, L1). ``measured_intensities(flops, level_bytes)`` turns it into one intensity per level
(FLOPs over that level's bytes); ``bounding_level(flops, level_bytes, bandwidths_gbs,
peak_gflops)`` names the level whose traffic takes longest at its bandwidth — the lowest of the
roofs bandwidth × intensity — or ``"compute"`` when the arithmetic at the peak takes longer
than every level's traffic.

As in :mod:`autograder.answers.roofline`: for each call, the right value and the value each
typical mistake gives on the same arguments. The hidden tests call the ``check_*`` functions
here, which hand these values to ``course.checks.level_answers``' judging functions; the
visible tests read the same values from the release's table.

The tie rule: a level (or the arithmetic) whose time equals the longest to a relative 1e-9
is accepted too, so two answers count where two times are equal; the notebook's tests stay far
from ties (tests/test_level_answers.py proves it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from autograder.answers.mistakes import Mistake, mistaken_values
from course.checks import level_answers as visible
from course.checks.expected import Expected
from course.runtime.i18n import N_

#: the string ``bounding_level`` returns when the arithmetic takes longest (the checks' own).
COMPUTE = visible.COMPUTE

#: how close two times must be to count as a tie (relative).
TIE = 1e-9


# --- measured_intensities ----------------------------------------------------------------------

def level_intensity_model(flops: float, level_bytes: Mapping[str, float], level: str, *,
                          inverted: bool = False, gigabytes: bool = False,
                          gigaflops: bool = False, summed: bool = False) -> float:
    """FLOPs over ``level``'s bytes [FLOP/byte], or what a mistake makes of it."""
    moved = sum(level_bytes.values()) if summed else level_bytes[level]
    if gigabytes:
        moved = moved / 1e9
    work = flops / 1e9 if gigaflops else flops
    return moved / work if inverted else work / moved


INTENSITY_MISTAKES = (
    Mistake({"inverted": True}, N_("that is bytes per FLOP: a level's intensity is its FLOPs "
            "divided by its bytes (FLOP/byte), not bytes / FLOPs")),
    Mistake({"gigabytes": True}, N_("the bytes were counted in GB: an intensity is FLOPs / "
            "bytes, both as the counters give them, with no factor 1e9")),
    Mistake({"gigaflops": True}, N_("the FLOPs were counted in GFLOP: an intensity is FLOPs / "
            "bytes, both as the counters give them, with no factor 1e9")),
    Mistake({"summed": True}, N_("that divides by the bytes of all levels together: each "
            "level's intensity uses that level's bytes alone")),
)


def intensities_expected(case: tuple) -> Expected:
    """The right dict of a ``measured_intensities(flops, level_bytes)`` call and, level by
    level, the value and the named mistakes' values there (``extra["levels"]``)."""
    flops, level_bytes = case
    levels: dict[str, Any] = {}
    for name in level_bytes:
        args = (flops, level_bytes, name)
        levels[name] = {"value": level_intensity_model(*args),
                        "mistakes": [[v, list(h)] for v, h in mistaken_values(
                            level_intensity_model, args, INTENSITY_MISTAKES)]}
    return Expected({name: entry["value"] for name, entry in levels.items()}, (),
                    {"levels": levels})


# --- bounding_level ----------------------------------------------------------------------------

def level_times(flops: float, level_bytes: Mapping[str, float],
                bandwidths_gbs: Mapping[str, float], peak_gflops: float, *,
                multiplied: bool = False, memory_units: bool = False,
                compute_units: bool = False) -> tuple[dict[str, float], float]:
    """(seconds each level needs to move its bytes, seconds the arithmetic needs), or what a
    mistake makes of them."""
    per_gb = 1.0 if memory_units else 1e9
    times = {level: moved * bandwidths_gbs[level] * per_gb if multiplied
             else moved / (bandwidths_gbs[level] * per_gb)
             for level, moved in level_bytes.items()}
    return times, flops / (peak_gflops * (1.0 if compute_units else 1e9))


def bounding_model(flops: float, level_bytes: Mapping[str, float],
                   bandwidths_gbs: Mapping[str, float], peak_gflops: float, *,
                   most_bytes: bool = False, shortest: bool = False, no_peak: bool = False,
                   multiplied: bool = False, memory_units: bool = False,
                   compute_units: bool = False) -> str:
    """The level whose time is longest, or ``"compute"``; or a mistake's answer. (On an exact
    tie this returns the first of the levels in ``level_bytes``' order, then "compute"; the
    checks accept every tied answer, see :func:`accepted`.)"""
    if most_bytes:  # the most bytes is the lowest intensity: the same FLOPs over each
        return max(level_bytes, key=lambda level: level_bytes[level])
    times, compute = level_times(flops, level_bytes, bandwidths_gbs, peak_gflops,
                                 multiplied=multiplied, memory_units=memory_units,
                                 compute_units=compute_units)
    candidates = dict(times) if no_peak else {**times, COMPUTE: compute}
    pick = min if shortest else max
    return pick(candidates, key=lambda name: candidates[name])


_UNITS = N_("a unit slip: bandwidths are in GB/s and the peak in GFLOP/s, so a level needs "
            "bytes / (bandwidth × 1e9) seconds and the arithmetic flops / (peak × 1e9): scale "
            "both sides alike")

BOUNDING_MISTAKES = (
    Mistake({"most_bytes": True}, N_("that is the level with the most bytes (the lowest "
            "intensity), regardless of its bandwidth: a level's time is its bytes / its "
            "bandwidth, and a faster level can move more bytes in less time")),
    Mistake({"shortest": True}, N_("that is the shortest time (the highest roof): the bound "
            "is the level that takes longest, the lowest roof")),
    Mistake({"no_peak": True}, N_("the compute peak is missing: the arithmetic needs flops / "
            '(peak × 1e9) seconds, and when that is the longest the answer is "compute"')),
    Mistake({"multiplied": True}, N_("a level's time is its bytes divided by its bandwidth, "
            "not multiplied by it")),
    Mistake({"memory_units": True}, _UNITS),
    Mistake({"compute_units": True}, _UNITS),
)


def accepted(flops: float, level_bytes: Mapping[str, float],
             bandwidths_gbs: Mapping[str, float], peak_gflops: float) -> list[str]:
    """Every answer whose time is the longest (more than one only on a tie)."""
    times, compute = level_times(flops, level_bytes, bandwidths_gbs, peak_gflops)
    candidates = {**times, COMPUTE: compute}
    longest = max(candidates.values())
    return [name for name, t in candidates.items() if math.isclose(t, longest, rel_tol=TIE)]


def bounding_expected(case: tuple) -> Expected:
    """The right answer of a ``bounding_level`` call, the answers it accepts (ties), every
    time it quotes, and each named mistake's answer there with its hints (``extra["wrong"]``:
    ``[[answer, [hint, …]], …]``)."""
    flops, level_bytes, bandwidths_gbs, peak_gflops = case
    right = bounding_model(*case)
    ok = accepted(*case)
    wrong: list[list[Any]] = []
    for mistake in BOUNDING_MISTAKES:
        answer = bounding_model(*case, **mistake.toggles)
        if answer in ok:
            continue
        same = next((entry for entry in wrong if entry[0] == answer), None)
        if same is None:
            wrong.append([answer, [mistake.hint]])
        elif mistake.hint not in same[1]:
            same[1].append(mistake.hint)
    times, compute = level_times(*case)
    return Expected(right, (), {"accepted": ok, "times": times, "compute_time": compute,
                                "wrong": wrong})


# --- the hidden tests' checks ------------------------------------------------------------------

def check_measured_intensities(fn: Callable[..., Any],
                               cases: Sequence[tuple[float, Mapping[str, float]]]) -> None:
    """The hidden tests' check of ``measured_intensities(flops, level_bytes)``: any call."""
    visible.judge_measured_intensities(fn, cases, intensities_expected)


def check_bounding_level(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """The hidden tests' check of ``bounding_level(flops, level_bytes, bandwidths_gbs,
    peak_gflops)``: any call."""
    visible.judge_bounding_level(fn, cases, bounding_expected)
