"""GEMM operands and verdicts shared by every check and measurement: random inputs, NaN
poison and guard regions, a guarded launch, the float64 reference with its tolerance, and
:func:`diagnose`, which says in words what is wrong with a computed C.

On a real GPU an out-of-bounds access raises nothing, so the arrays live inside *guard
regions*: A and B are surrounded by NaN (a read past them poisons the result) and C by a
sentinel (a write past it changes the sentinel). C itself starts as a marked NaN, so an
element the kernel never wrote is recognised as such.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from course.gemm.launch import GemmKernel, check_operands
from course.runtime.i18n import _

Shape = tuple[int, int, int]

#: Unwritten-C marker and guard fill: quiet NaNs with payloads arithmetic never produces.
C_POISON_BITS = np.uint32(0x7FC0DEAD)
INPUT_GUARD_BITS = np.uint32(0x7FC0BEEF)
C_GUARD = np.float32(-12345.0)
GUARD = 64  # elements on each side


class GemmCheckError(AssertionError):
    """A kernel computed the wrong thing; the message says where and what to look at."""


def nan_with(bits: np.uint32, shape: tuple[int, ...]) -> np.ndarray:
    return np.full(shape, bits, dtype=np.uint32).view(np.float32)


def random_operands(M: int, N: int, K: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Fresh A (M×K) and B (K×N), uniform in [-1, 1), float32, C-contiguous."""
    A = rng.uniform(-1, 1, size=(M, K)).astype(np.float32)
    B = rng.uniform(-1, 1, size=(K, N)).astype(np.float32)
    return A, B


def _guarded(data: np.ndarray, fill: np.ndarray) -> tuple[Any, Any]:
    """A device buffer [guard | data | guard] and the 2-D view of its middle."""
    from numba import cuda

    flat = np.concatenate([fill, data.ravel(), fill])
    dev = cuda.to_device(flat)
    view = dev[GUARD:GUARD + data.size].reshape(data.shape)
    return dev, view


def run_guarded(gk: GemmKernel, A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, bool]:
    """Launch with guard regions; return C and whether anything outside C was written."""
    M, N, _k = check_operands(A, B)
    in_guard = nan_with(INPUT_GUARD_BITS, (GUARD,))
    _whole_a, dA = _guarded(A, in_guard)
    _whole_b, dB = _guarded(B, in_guard)
    c_dev, dC = _guarded(nan_with(C_POISON_BITS, (M, N)), np.full(GUARD, C_GUARD, np.float32))
    gk.launch(dA, dB, dC)
    flat = c_dev.copy_to_host()
    outside = np.concatenate([flat[:GUARD], flat[GUARD + M * N:]])
    return flat[GUARD:GUARD + M * N].reshape(M, N), bool(np.any(outside != C_GUARD))


def _box(mask: np.ndarray) -> str:
    rows, cols = np.nonzero(mask)
    return f"C[{rows.min()}:{rows.max() + 1}, {cols.min()}:{cols.max() + 1}]"


def reference_and_tolerance(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A·B in float64 and, per element, how far a correct float32 kernel may be from it.

    float32 rounding grows with K and with the size of the terms summed, Σ|a·b|, so the
    tolerance is max(1e-4, 4·K·eps32) · (|A|·|B|) + 1e-6: loose enough for any order of
    summation, tight enough that a dropped term or a wrong index shows.
    """
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    return a64 @ b64, tolerance_factor(A.shape[1]) * (np.abs(a64) @ np.abs(b64)) + 1e-6


def tolerance_factor(K: int) -> float:
    """The relative tolerance of :func:`reference_and_tolerance` for a sum of ``K`` terms."""
    return max(1e-4, 4 * K * float(np.finfo(np.float32).eps))


def diagnose(C: np.ndarray, A: np.ndarray, B: np.ndarray, block: int,
             wrote_outside: bool = False, k_step: int | None = None) -> str | None:
    """Explain what is wrong with C = A·B as computed by a kernel, or None if it is right.

    ``block`` is the kernel's output tile (edges of C); ``k_step`` its step along K (the
    tile for the shared-memory kernel, BK for the register-tiled one).
    """
    M, K = A.shape
    N = B.shape[1]
    size = f"M={M}, N={N}, K={K}"
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    ref, tol = reference_and_tolerance(A, B)

    if wrote_outside:
        return _("your kernel wrote outside C for {size}: test `row < M and col < N` before "
                 "the store (threads of the last partial block fall outside C)").format(size=size)
    unwritten = C.view(np.uint32) == C_POISON_BITS
    if unwritten.all():
        return _("C was never written for {size}: does the kernel store into C[row, col]? Is "
                 "the bounds test the right way round?").format(size=size)
    if unwritten.any():
        full_r, full_c = (M // block) * block, (N // block) * block
        edge = full_r > 0 and full_c > 0 and unwritten[:full_r, :full_c].sum() == 0
        hint = (_("only the last, partial blocks are missing: the grid must cover all of C "
                  "(ceil division) and the bounds test must let row < M, col < N through")
                if edge else _("check that row and col come from blockIdx·blockDim + threadIdx "
                               "and that the bounds test before the store uses M and N"))
        return _("{where} was never written (still NaN) for {size}: {hint}").format(
            where=_box(unwritten), size=size, hint=hint)
    if not np.isfinite(C).all():
        bad = ~np.isfinite(C)
        return _("{where} holds NaN/inf for {size}, although the inputs are finite: the kernel "
                 "read outside A or B (the memory around them holds NaN) or read a "
                 "shared-memory element nobody stored. Pad out-of-range tile elements with 0."
                 ).format(where=_box(bad), size=size)
    err = np.abs(C - ref)
    bad = err > tol
    if not bad.any():
        return None
    if M == N and np.all(np.abs(C - ref.T) <= tol.T):
        return _("C looks transposed for {size}: you computed C[col, row]. The contract maps "
                 "x to columns: col = blockIdx.x·blockDim.x + threadIdx.x, row uses y"
                 ).format(size=size)
    i, j = np.unravel_index(np.argmax(err - tol), err.shape)
    detail = _("e.g. C[{i}, {j}] = {got}, expected {want}; {bad} of {total} elements wrong, "
               "in {where}").format(i=i, j=j, got=f"{C[i, j]:.6g}", want=f"{ref[i, j]:.6g}",
                                    bad=bad.sum(), total=bad.size, where=_box(bad))
    step = k_step or block
    how_many = (_("ceil(K / tile) tiles") if k_step is None
                else _("ceil(K / {step}) steps").format(step=step))
    kf = (K // step) * step
    if kf < K and np.all(np.abs(C - a64[:, :kf] @ b64[:kf]) <= tol):
        return _("wrong values for {size} ({detail}): the last, partial step along K was "
                 "skipped — loop over {how_many} and zero-pad past K").format(
                     size=size, detail=detail, how_many=how_many)
    full_r, full_c = (M // block) * block, (N // block) * block
    if full_r and full_c and not bad[:full_r, :full_c].any() and (full_r < M or full_c < N):
        return _("wrong values for {size}, only in the last partial tiles ({detail}): tile "
                 "elements past M, N or K must be loaded as 0, not skipped or read out of "
                 "range").format(size=size, detail=detail)
    return _("wrong values for {size} ({detail}): compare your index arithmetic with the "
             "notes").format(size=size, detail=detail)
