"""GEMM operands and verdicts shared by every check and measurement: random inputs, NaN
poison and guard regions, a guarded launch, the float64 reference with its tolerance, and
:class:`Access`, an access past an array's end as the simulator saw it (what is wrong with
a computed C, in words, is :mod:`course.gemm.diagnosis`).

On a real GPU an out-of-bounds access raises nothing, so the arrays live inside *guard
regions*: A and B are surrounded by NaN (a read past them poisons the result) and C by a
sentinel (a write past it changes the sentinel). C itself starts as a marked NaN, so an
element the kernel never wrote is recognised as such.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from course.gemm.launch import GemmKernel, check_operands
from course.runtime.simulator import current_simulated_thread

Shape = tuple[int, int, int]


@dataclass(frozen=True)
class Access:
    """One access past an array's end: which array, the index asked for (a tuple in Numba, a
    flat index in CUDA C), read or write, and the thread (x, y) and block (x, y) that made it."""

    array: str
    index: tuple[int, ...] | int
    write: bool
    thread: tuple[int, int]
    block: tuple[int, int]

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


def _guarded(data: np.ndarray, fill: np.ndarray, name: str = "",
             seen: list[Access] | None = None, reads: list[int] | None = None
             ) -> tuple[Any, Any]:
    """A device buffer [guard | data | guard] and the 2-D view of its middle; on the
    simulator, with ``seen``, a view that notes an access past its end before it raises."""
    from numba import cuda

    flat = np.concatenate([fill, data.ravel(), fill])
    dev = cuda.to_device(flat)
    view = dev[GUARD:GUARD + data.size].reshape(data.shape)
    if seen is not None and hasattr(view, "_ary"):  # the simulator's FakeCUDAArray
        view = _watched(view, name, seen, reads)
    return dev, view


def _watched(view: Any, name: str, seen: list[Access], reads: list[int] | None) -> Any:
    """A simulator array that notes the first access past its end: the array, the index and
    the thread (the simulator's own error names neither the array nor the element); and, with
    ``reads``, that it was read."""
    def note(idx: Any, write: bool) -> None:
        if not seen:
            t = current_simulated_thread()
            index = tuple(int(i) for i in idx) if isinstance(idx, tuple) else int(idx)
            thread = tuple(getattr(t, "threadIdx", (0, 0, 0)))
            block = tuple(getattr(t, "blockIdx", (0, 0, 0)))
            seen.append(Access(name, index, write, (int(thread[0]), int(thread[1])),
                               (int(block[0]), int(block[1]))))

    class Watched(type(view)):  # type: ignore[misc]
        def __getitem__(self, idx: Any) -> Any:
            try:
                value = super().__getitem__(idx)
            except IndexError:
                note(idx, False)
                raise
            if reads is not None and not reads:
                reads.append(1)
            return value

        def __setitem__(self, idx: Any, value: Any) -> None:
            try:
                super().__setitem__(idx, value)
            except IndexError:
                note(idx, True)
                raise

    return Watched(view._ary)


def run_guarded(gk: GemmKernel, A: np.ndarray, B: np.ndarray, c_init: np.ndarray | None = None,
                seen: list[Access] | None = None, reads: list[int] | None = None
                ) -> tuple[np.ndarray, bool]:
    """Launch with guard regions; return C and whether anything outside C was written.

    C starts as the marked NaN, or as ``c_init``; on the simulator an access past the end of
    A, B or C is noted in ``seen`` (when given) before the simulator raises IndexError, and
    a read of A or B in ``reads`` (when given with ``seen``).
    """
    M, N, _k = check_operands(A, B)
    in_guard = nan_with(INPUT_GUARD_BITS, (GUARD,))
    _whole_a, dA = _guarded(A, in_guard, "A", seen, reads)
    _whole_b, dB = _guarded(B, in_guard, "B", seen, reads)
    start = nan_with(C_POISON_BITS, (M, N)) if c_init is None else c_init.astype(np.float32)
    c_dev, dC = _guarded(start, np.full(GUARD, C_GUARD, np.float32), "C", seen)
    gk.launch(dA, dB, dC)
    flat = c_dev.copy_to_host()
    outside = np.concatenate([flat[:GUARD], flat[GUARD + M * N:]])
    return flat[GUARD:GUARD + M * N].reshape(M, N), bool(np.any(outside != C_GUARD))


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
