"""Notebook 6's graded occupancy exercise: a student's blocks-per-SM and occupancy predictions
against the occupancy model the sweep uses (:mod:`course.gemm.occupancy`).

A wrong answer is recomputed with one rule of the model left out at a time (the register
file's quarters, registers allocated per warp in units, the shared memory reserved per block
and its allocation unit, the cap on resident blocks, whole warps); the message names the rule
whose omission gives the student's number.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, TypedDict

from course.gemm.occupancy import ARCH_LIMITS, theoretical_occupancy
from course.runtime.errors import not_written_message
from course.runtime.i18n import N_, _
from course.trust import gate


class OccupancyPredictionError(AssertionError):
    """A student's blocks-per-SM or occupancy prediction disagrees with the model."""


Case = tuple[tuple[int, int], int, int, int]


def _blocks_variant(cc: tuple[int, int], threads: int, regs: int, smem: int, *,
                    quarters: bool = True, reg_rounding: bool = True, reserved: bool = True,
                    smem_rounding: bool = True, block_cap: bool = True,
                    warp_ceil: bool = True, per_thread_regs: bool = False) -> int:
    """Blocks per SM by the occupancy rules, with one rule optionally left out (for hints)."""
    lim = ARCH_LIMITS[cc]
    warps = math.ceil(threads / 32) if warp_ceil else max(threads // 32, 1)
    counts = [lim.max_warps_per_sm // warps]
    if per_thread_regs:
        counts.append(lim.regs_per_sm // max(regs * threads, 1))
    elif regs:
        per_warp = regs * 32
        if reg_rounding:
            per_warp = -(-per_warp // lim.reg_alloc_unit) * lim.reg_alloc_unit
        if quarters:
            q = lim.regs_per_sm // lim.reg_sub_partitions
            counts.append((q // per_warp) * lim.reg_sub_partitions // warps)
        else:
            counts.append(lim.regs_per_sm // (per_warp * warps))
    alloc = smem + (lim.smem_reserved_per_block if reserved else 0)
    if smem_rounding:
        alloc = -(-alloc // lim.smem_alloc_unit) * lim.smem_alloc_unit
    if alloc:
        counts.append(lim.smem_per_sm // alloc)
    if block_cap:
        counts.append(lim.max_blocks_per_sm)
    return min(counts)


class _Rules(TypedDict, total=False):
    """Which of :func:`_blocks_variant`'s rules a hint leaves out (the rest stay as they are)."""

    quarters: bool
    reg_rounding: bool
    reserved: bool
    smem_rounding: bool
    block_cap: bool
    warp_ceil: bool
    per_thread_regs: bool


_MISTAKES: tuple[tuple[_Rules, str], ...] = (
    ({"reserved": False}, N_("the 1 KiB the driver reserves per block is missing: on sm_80 and "
     "newer every block takes its shared memory + 1024 B")),
    ({"smem_rounding": False}, N_("shared memory is allocated in units (256 B on sm_75, 128 B on "
     "sm_80+): round each block's bytes up before dividing")),
    ({"quarters": False}, N_("the register file is split into 4 quarters, one per warp scheduler, "
     "and a warp's registers come from one quarter: count warps per quarter first")),
    ({"reg_rounding": False}, N_("registers are allocated per warp in units of 256: round "
     "regs·32 up to a multiple of 256")),
    ({"per_thread_regs": True}, N_("registers go per warp (rounded up to 256) from one of 4 "
     "quarters, not per thread from one pool")),
    ({"block_cap": False}, N_("there is also a cap on resident blocks per SM (16 on sm_75, 32 "
     "on sm_80/sm_90)")),
    ({"warp_ceil": False}, N_("a block takes whole warps: round threads/32 up")),
)


def _validated_cases(cases: Sequence[Case]) -> list[Case]:
    out: list[Case] = []
    for case in cases:
        given, threads, regs, smem = case
        cc = tuple(int(x) for x in given)
        if cc not in ARCH_LIMITS:
            raise ValueError(f"no occupancy limits for {cc}")
        out.append(((cc[0], cc[1]), int(threads), int(regs), int(smem)))
    return out


def _call(fn: Callable[..., Any], case: Case, name: str) -> Any:
    try:
        return fn(*case)
    except NotImplementedError:
        raise OccupancyPredictionError(
            not_written_message(name, then=_("with your code"))) from None


def _explain(case: Case, got: Any) -> str:
    correct = theoretical_occupancy(*case).blocks_per_sm
    for toggles, hint in _MISTAKES:
        try:
            alt = _blocks_variant(*case, **toggles)
        except (ZeroDivisionError, ValueError):
            continue
        if alt != correct and got == alt:
            return _(hint)
    return _("work through each limit (warps, registers, shared memory, the block cap) and take "
             "the smallest")


def check_blocks_per_sm_prediction(fn: Callable[..., Any], cases: Sequence[Case],
                                   quiet: bool = False) -> None:
    """Compare ``predict_blocks_per_sm(cc, threads, regs, smem)`` with the occupancy model."""
    gate.begin_check("check_blocks_per_sm_prediction")
    for case in _validated_cases(cases):
        occ = theoretical_occupancy(*case)
        got = _call(fn, case, "predict_blocks_per_sm")
        what = f"predict_blocks_per_sm({case[0]}, {case[1]}, {case[2]}, {case[3]})"
        if isinstance(got, bool) or not isinstance(got, int) and not (
                hasattr(got, "__index__")):
            raise OccupancyPredictionError(_("{what} returned {value}: return a whole number of "
                                             "blocks (an int; use // to divide)").format(
                what=what, value=repr(got)))
        if int(got) != occ.blocks_per_sm:
            raise OccupancyPredictionError(_("{what} returned {value}, which is not right: "
                                             "{hint}.").format(what=what, value=got,
                                                               hint=_explain(case, int(got))))
    if not quiet:
        print(_("✓ predict_blocks_per_sm agrees with the occupancy model on {count} cases").format(
            count=len(cases)))


def check_occupancy_prediction(fn: Callable[..., Any], cases: Sequence[Case],
                               quiet: bool = False) -> None:
    """Compare ``predict_occupancy(cc, threads, regs, smem)`` (0..1) with the model."""
    gate.begin_check("check_occupancy_prediction")
    for case in _validated_cases(cases):
        occ = theoretical_occupancy(*case)
        got = _call(fn, case, "predict_occupancy")
        what = f"predict_occupancy({case[0]}, {case[1]}, {case[2]}, {case[3]})"
        try:
            value = float(got)
        except (TypeError, ValueError):
            raise OccupancyPredictionError(_("{what} returned {value}: return a number between 0 "
                                             "and 1").format(what=what, value=repr(got))) from None
        if math.isclose(value, occ.occupancy, rel_tol=1e-9, abs_tol=1e-9):
            continue
        lim = ARCH_LIMITS[case[0]]
        if math.isclose(value, 100 * occ.occupancy, rel_tol=1e-9):
            hint = _("that is a percentage: return a fraction between 0 and 1")
        elif math.isclose(value, occ.blocks_per_sm * case[1] / (lim.max_warps_per_sm * 32),
                          rel_tol=1e-9):
            hint = _("you counted threads; count whole warps (a block of 48 threads takes 2 "
                     "warps)")
        elif math.isclose(value, occ.blocks_per_sm / lim.max_blocks_per_sm, rel_tol=1e-9):
            hint = _("occupancy counts warps, not blocks: resident warps / max warps per SM")
        else:
            hint = _("occupancy = (blocks per SM × warps per block) / max warps per SM")
        raise OccupancyPredictionError(_("{what} returned {value}, expected a different value: "
                                         "{hint}").format(what=what, value=repr(got), hint=hint))
    if not quiet:
        print(_("✓ predict_occupancy agrees with the occupancy model on {count} cases").format(
            count=len(cases)))


