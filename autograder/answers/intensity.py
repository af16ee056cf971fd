"""Notebook 1's rules: the intensity models, each with the switches its mistakes flip.

For each call a test cell makes, the right intensity comes from the model and, from the same
model with one step done wrong, the value each typical mistake gives (FLOPs halved, the write
of C left out, elements instead of bytes, ...). The rules are the mistakes, so a test cell shows
the calls it makes and nothing else, and a new call needs no new numbers. The hidden tests call
the ``check_*`` functions here; the visible ones call ``course.checks``' twins, which read the
same values from the release's table (:mod:`autograder.answers.table`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from autograder.answers.mistakes import Mistake, mistaken_values
from course.checks import intensity_answers as visible
from course.checks.expected import Expected
from course.runtime.i18n import N_


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


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


#: each check: the function's number of sizes, its model and its mistakes.
RULES: dict[str, tuple[str, int, Callable[..., float], Sequence[Mistake]]] = {
    "check_ai_vector_add": ("ai_vector_add", 1, vector_add_model, VECTOR_ADD_MISTAKES),
    "check_ai_matmul": ("ai_matmul", 3, matmul_model, MATMUL_MISTAKES),
    "check_ai_gemm_naive": ("ai_gemm_naive", 3, naive_model, NAIVE_MISTAKES),
    "check_ai_gemm_tiled": ("ai_gemm_tiled", 4, tiled_model, TILED_MISTAKES),
}


def expected(check: str, case: tuple) -> Expected:
    """The right value of ``check``'s function on ``case`` and each named mistake's value."""
    _, _, model, mistakes = RULES[check]
    return Expected(model(*case), tuple(mistaken_values(model, case, mistakes)))


def _check(check: str, fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    name, sizes, _, _ = RULES[check]
    visible.check_formula(fn, name, sizes, cases, lambda case: expected(check, case))


def check_ai_vector_add(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """Check ``ai_vector_add`` on each ``(n[, bytes_per_element])``, any call."""
    _check("check_ai_vector_add", fn, cases)


def check_ai_matmul(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """Check ``ai_matmul`` on each ``(M, N, K[, bytes_per_element])``, any call."""
    _check("check_ai_matmul", fn, cases)


def check_ai_gemm_naive(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """Check ``ai_gemm_naive`` on each ``(M, N, K[, bytes_per_element])``, any call."""
    _check("check_ai_gemm_naive", fn, cases)


def check_ai_gemm_tiled(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """Check ``ai_gemm_tiled`` on each ``(M, N, K, tile[, bytes_per_element])``, any call."""
    _check("check_ai_gemm_tiled", fn, cases)
