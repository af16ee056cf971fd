"""Notebook 5's hierarchical-roofline checks: intensities per memory level and the bounding
level, against named mistakes.

As in :mod:`course.checks.roofline_answers`: for each call a visible test cell makes, the
release stored the right answer and what each typical mistake gives on the same arguments
(bytes over FLOPs, GB instead of bytes, the level with the most bytes, the shortest time, the
peak left out, ...) in ``expected_answers.json``, and a wrong answer equal to one of them is
told which mistake it is. The rules for any call are the grader's
(``autograder.answers.levels``); its hidden tests pass them to the same functions here, so
both speak alike. A case is ``(flops, level_bytes)`` for ``measured_intensities`` and
``(flops, level_bytes, bandwidths_gbs, peak_gflops)`` for ``bounding_level``, the dicts keyed
by level name.

The student's function gets a copy of each dict, so an answer that changes its argument
cannot change what is checked next.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from course.checks import expected
from course.checks.answers import AnswerError, expect_close
from course.runtime.i18n import _
from course.trust import gate

Known = Callable[[tuple], expected.Expected]

#: the string bounding_level returns when the arithmetic takes longest.
COMPUTE = "compute"


def _levels(values: Mapping[str, Any]) -> str:
    """A dict of numbers as a call shows it, briefly: ``{'DRAM': 6.4e+07, 'L2': 2e+09}``."""
    return "{" + ", ".join(f"{key!r}: {value:.6g}" for key, value in values.items()) + "}"


def _keys(values: Any) -> str:
    return ", ".join(repr(key) for key in values)


def judge_measured_intensities(fn: Callable[..., Any],
                               cases: Sequence[tuple[float, Mapping[str, float]]],
                               known: Known) -> None:
    """``measured_intensities(flops, level_bytes)`` on each case: a dict (any mapping) with
    exactly ``level_bytes``' keys, in any order, each value FLOPs / that level's bytes."""
    gate.begin_check("check_measured_intensities")
    for flops, level_bytes in cases:
        entry = known((flops, level_bytes))
        call = f"measured_intensities({flops:.6g}, {_levels(level_bytes)})"
        got = fn(flops, dict(level_bytes))
        if not isinstance(got, Mapping):
            raise AnswerError(_("{call} returned {value} ({type}); return a dict with one "
                                "intensity per level, keyed like level_bytes").format(
                call=call, value=repr(got), type=type(got).__name__))
        if set(got) != set(level_bytes) or len(got) != len(level_bytes):
            raise AnswerError(_("{call} returned a dict with the keys {got}; return one "
                                "intensity per level, with the keys of level_bytes: {want}"
                                ).format(call=call, got=_keys(got), want=_keys(level_bytes)))
        levels = entry.extra["levels"]
        for level in level_bytes:
            one = expected.from_json(levels[level])
            expect_close(got[level], float(one.value), f"{call}[{level!r}]",
                         mistakes=expected.hints(one.mistakes))


def _kind_hint(got: Any, names: Sequence[str]) -> str | None:
    """What is wrong with an answer that is no level's name and not "compute", or None."""
    if isinstance(got, Mapping):
        return _("return one name (a string), not a dict")
    if isinstance(got, (int, float)) or hasattr(got, "__float__"):
        return _('return the name of the level (a string) or "compute", not a number')
    if not isinstance(got, str):
        return _('return one string: a key of level_bytes or "compute"')
    spelled = next((name for name in (*names, COMPUTE)
                    if name.strip().lower() == got.strip().lower()), None)
    if spelled is not None and got not in (*names, COMPUTE):
        return _("spell it exactly as the key is spelled: {name}").format(name=repr(spelled))
    if got not in (*names, COMPUTE):
        return _('return one of the keys of level_bytes ({names}) or "compute"').format(
            names=_keys(names))
    return None


def judge_bounding_level(fn: Callable[..., Any], cases: Sequence[tuple], known: Known) -> None:
    """``bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops)`` on each case: the
    name of the level whose time is longest, or "compute". An entry's ``value`` is the right
    answer, ``accepted`` every answer that counts (more than one only on a tie), ``times`` and
    ``compute_time`` are quoted, and ``wrong`` gives each named mistake's answer and hints."""
    gate.begin_check("check_bounding_level")
    for flops, level_bytes, bandwidths_gbs, peak_gflops in cases:
        entry = known((flops, level_bytes, bandwidths_gbs, peak_gflops))
        got = fn(flops, dict(level_bytes), dict(bandwidths_gbs), peak_gflops)
        if isinstance(got, str) and got in entry.extra["accepted"]:
            continue
        call = (f"bounding_level({flops:.6g}, {_levels(level_bytes)}, "
                f"{_levels(bandwidths_gbs)}, {peak_gflops:g})")
        times = {**entry.extra["times"], COMPUTE: entry.extra["compute_time"]}
        seconds = ", ".join(f"{name} {t:.3g}" for name, t in times.items())
        message = _("{call} returned {value}, but the longest time is that of {right} "
                    "(seconds: {times})").format(call=call, value=repr(got),
                                                 right=repr(entry.value), times=seconds)
        hint = _kind_hint(got, list(level_bytes))
        if hint is None:
            named: list[str] = next((list(hints) for answer, hints in entry.extra["wrong"]
                                     if answer == got), [])
            hint = expected.join(named) if named else None
        if hint is None:
            hint = _("a level's time is its bytes / (bandwidth × 1e9), the arithmetic's "
                     "flops / (peak × 1e9); return the name of the longest")
        raise AnswerError(_("{message}; {hint}").format(message=message, hint=hint))


def check_measured_intensities(fn: Callable[..., Any],
                               cases: Sequence[tuple[float, Mapping[str, float]]]) -> None:
    """Check ``measured_intensities(flops, level_bytes)`` on each case of the notebook."""
    judge_measured_intensities(fn, cases, expected.known("check_measured_intensities"))


def check_bounding_level(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """Check ``bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops)`` on each case
    of the notebook."""
    judge_bounding_level(fn, cases, expected.known("check_bounding_level"))
