"""Notebook 1's answer checks: each formula against its model and against named mistakes.

A test cell lists calls; for each, the check works out the right intensity from the model
below and, from the same model with one step done wrong, the value each typical mistake gives
(FLOPs halved, the write of C left out, elements instead of bytes, ...). A wrong answer that
equals one of those values is told which mistake it is; two mistakes that happen to give the
same value on a call are both named. The rules are the mistakes, so a test cell shows the calls
it makes and nothing else, and a new call needs no new numbers.

A case is the tuple of a call's positional arguments; one element more than the function's
sizes is ``bytes_per_element``, passed by keyword (``(1000, 8)`` calls
``ai_vector_add(1000, bytes_per_element=8)``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from course.checks.answers import expect_close
from course.runtime.i18n import N_, _
from course.trust import gate


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Mistake:
    """One typical mistake: the model's arguments that make it, and what to tell the student
    (in English, marked with ``N_`` for the catalog: translated where it is shown)."""

    toggles: dict[str, Any]
    hint: str


# --- the models, each with the switches its mistakes flip ----------------------------------

def vector_add_model(n: int, bpe: float = 4, *, flops: int = 1, arrays: int = 3,
                     in_bytes: bool = True, fixed_bpe: bool = False) -> float:
    """AI of c = a + b: ``flops`` per element over ``arrays`` arrays of n elements moved."""
    size = (4 if fixed_bpe else bpe) if in_bytes else 1
    return flops * n / (arrays * n * size)


def matmul_model(M: int, N: int, K: int, bpe: float = 4, *, flops: int = 2,
                 leave_out: str = "", in_bytes: bool = True, fixed_bpe: bool = False) -> float:
    """Ideal AI of C = A·B: each matrix moved once (``leave_out`` one of "A", "B", "C")."""
    matrices = {"A": M * K, "B": K * N, "C": M * N}
    elements = sum(size for name, size in matrices.items() if name != leave_out)
    size = (4 if fixed_bpe else bpe) if in_bytes else 1
    return flops * M * N * K / (elements * size)


def naive_model(M: int, N: int, K: int, bpe: float = 4, *, flops: int = 2,
                reads_per_k: int = 2, write_c: bool = True, in_bytes: bool = True,
                fixed_bpe: bool = False, ideal: bool = False) -> float:
    """Request-model AI of the naive kernel: every thread reads K of A and K of B, writes 1."""
    if ideal:
        return matmul_model(M, N, K, bpe, fixed_bpe=fixed_bpe)
    elements = M * N * (reads_per_k * K + (1 if write_c else 0))
    size = (4 if fixed_bpe else bpe) if in_bytes else 1
    return flops * M * N * K / (elements * size)


def tiled_model(M: int, N: int, K: int, tile: int, bpe: float = 4, *, flops: int = 2,
                tiles_per_step: int = 2, write_c: bool = True, round_up: bool = True,
                useful_only: bool = False, in_bytes: bool = True, fixed_bpe: bool = False,
                naive: bool = False) -> float:
    """Request-model AI of the tiled kernel: whole tile×tile tiles of A and B per block and
    step (ceil(M/T)·ceil(N/T) blocks, ceil(K/T) steps), C written once."""
    if naive:
        return naive_model(M, N, K, bpe, fixed_bpe=fixed_bpe)
    count = _ceil if round_up else (lambda a, b: a // b)
    if useful_only:
        reads = 2 * M * N * K / tile
    else:
        blocks = count(M, tile) * count(N, tile)
        reads = blocks * count(K, tile) * tiles_per_step * tile * tile
    elements = reads + (M * N if write_c else 0)
    size = (4 if fixed_bpe else bpe) if in_bytes else 1
    return flops * M * N * K / (elements * size)


# --- the mistakes ----------------------------------------------------------------------------

_HARD_WIRED = Mistake({"fixed_bpe": True}, N_("bytes_per_element is ignored (4 is hard-wired)"))
_DOT_FLOPS = (N_("the FLOPs are half what they should be: every step of the dot product is a "
              "multiply and an add, 2·M·N·K in all"))
_MISSING_MATRIX = (N_("one of the three matrices is missing from the bytes: A (M×K) and B (K×N) "
                   "are read once, C (M×N) is written once"))

VECTOR_ADD_MISTAKES = (
    Mistake({"arrays": 2}, N_("you counted the reads of a and b but not the write of c")),
    Mistake({"in_bytes": False},
            N_("bytes_per_element is missing: multiply the element count by it")),
    Mistake({"flops": 2}, N_("c = a + b is one addition per element, not two")),
    _HARD_WIRED,
)

MATMUL_MISTAKES = (
    Mistake({"flops": 1}, _DOT_FLOPS),
    Mistake({"leave_out": "A"}, _MISSING_MATRIX),
    Mistake({"leave_out": "B"}, _MISSING_MATRIX),
    Mistake({"leave_out": "C"}, _MISSING_MATRIX),
    Mistake({"in_bytes": False},
            N_("bytes_per_element is missing: you counted elements, not bytes")),
    _HARD_WIRED,
)

NAIVE_MISTAKES = (
    Mistake({"flops": 1},
            N_("the FLOPs are half what they should be: 2·M·N·K (a multiply and an add per step)")),
    Mistake({"write_c": False},
            N_("the bytes leave out the write of C: each thread stores its one element")),
    Mistake({"reads_per_k": 1}, N_("each thread reads K elements of A AND K of B, not K in all")),
    Mistake({"in_bytes": False}, N_("bytes_per_element is missing: you counted elements")),
    Mistake({"ideal": True}, N_("that is the ideal model (each matrix moved once); the request "
            "model counts what every thread asks for")),
    _HARD_WIRED,
)

TILED_MISTAKES = (
    Mistake({"flops": 1}, N_("the FLOPs are half what they should be: 2·M·N·K")),
    Mistake({"write_c": False}, N_("the bytes leave out the write of C (M·N elements, once)")),
    Mistake({"tiles_per_step": 1},
            N_("each step loads a tile of A AND a tile of B: 2·T·T elements per block and step")),
    Mistake({"useful_only": True}, N_("you counted only the useful elements (2·M·N·K/T); the "
            "model counts whole T×T tiles, padding included: ceil(M/T)·ceil(N/T) blocks × "
            "ceil(K/T) steps")),
    Mistake({"round_up": False},
            N_("partial tiles are missing: round the numbers of blocks and steps UP (ceil), "
               "not down")),
    Mistake({"in_bytes": False}, N_("bytes_per_element is missing")),
    Mistake({"naive": True}, N_("that is the naive kernel's model, not the tiled one's")),
    _HARD_WIRED,
)


def mistaken_values(model: Callable[..., float], args: Sequence[Any],
                    mistakes: Sequence[Mistake]) -> dict[float, str]:
    """Value -> hint for each mistake whose value on ``args`` differs from the right one.

    Mistakes that give the same value are joined with "; or ", so each is named. The hints
    are in the student's language.
    """
    right = model(*args)
    out: dict[float, str] = {}
    for mistake in mistakes:
        try:
            wrong = model(*args, **mistake.toggles)
        except ZeroDivisionError:
            continue
        if math.isclose(wrong, right, rel_tol=1e-9):
            continue
        same = next((v for v in out if math.isclose(v, wrong, rel_tol=1e-9)), None)
        hint = _(mistake.hint)
        if same is None:
            out[wrong] = hint
        elif hint not in out[same]:
            out[same] = _("{hint}; or {other}").format(hint=out[same], other=hint)
    return out


def _check(fn: Callable[..., Any], name: str, sizes: int, model: Callable[..., float],
           mistakes: Sequence[Mistake], cases: Sequence[tuple]) -> None:
    gate.begin_check(f"check {name}")
    for case in cases:
        if len(case) not in (sizes, sizes + 1):
            raise ValueError(f"a case of {name} has {sizes} sizes and an optional "
                             f"bytes_per_element, got {case!r}")
        shown = ", ".join(repr(x) for x in case[:sizes])
        if len(case) > sizes:
            got = fn(*case[:sizes], bytes_per_element=case[sizes])
            shown += f", bytes_per_element={case[sizes]!r}"
        else:
            got = fn(*case)
        expect_close(got, model(*case), f"{name}({shown})",
                     mistakes=mistaken_values(model, case, mistakes))


def check_ai_vector_add(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """Check ``ai_vector_add`` on each ``(n[, bytes_per_element])``."""
    _check(fn, "ai_vector_add", 1, vector_add_model, VECTOR_ADD_MISTAKES, cases)


def check_ai_matmul(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """Check ``ai_matmul`` on each ``(M, N, K[, bytes_per_element])``."""
    _check(fn, "ai_matmul", 3, matmul_model, MATMUL_MISTAKES, cases)


def check_ai_gemm_naive(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """Check ``ai_gemm_naive`` on each ``(M, N, K[, bytes_per_element])``."""
    _check(fn, "ai_gemm_naive", 3, naive_model, NAIVE_MISTAKES, cases)


def check_ai_gemm_tiled(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """Check ``ai_gemm_tiled`` on each ``(M, N, K, tile[, bytes_per_element])``."""
    _check(fn, "ai_gemm_tiled", 4, tiled_model, TILED_MISTAKES, cases)
