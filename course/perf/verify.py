"""Verify what timed launches computed, on the device, cheaply enough to do it every time.

A timing is only a measurement if the launches being timed did the work. The correctness
checks run small shapes; a kernel can be right there and lazy at the timed size (return at
once when K ≥ 1000, skip the last blocks, compute only the first launch). So every timed
sample is verified (:class:`course.perf.timing.OutputCheck`):

* before the sample, the kernel's output is overwritten with a marked NaN (a device-to-device
  copy from a poison buffer, outside the clock);
* after it, a small kernel counts the elements that are not within tolerance of a float64
  reference — the course's usual tolerance, scaled to K and to the size of the terms
  (:func:`course.gemm.operands.reference_and_tolerance`); NaN never passes;
* at the end, A and B must be unchanged (a kernel could otherwise leave itself notes there).

The reference is computed once per timing, on the GPU in float64 through CuPy when it is
there (seconds of CPU at 4096³ otherwise), else with NumPy on the host.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from course.gemm.diagnosis import diagnose
from course.gemm.launch import compile_for, quiet_numba
from course.gemm.operands import (
    C_POISON_BITS,
    reference_and_tolerance,
    tolerance_factor,
)
from course.runtime import backend
from course.runtime.i18n import _


class UnverifiedTimingError(AssertionError):
    """A timed kernel's output, at the timed size, was not what it should be."""


@dataclass(frozen=True)
class OutputCheck:
    """How to verify one timed kernel: ``poison`` its output before a timed sample (outside
    the clock), then ``check`` what the sample's launches left — None when right, else a
    sentence that says what is wrong."""

    poison: Callable[[], None]
    check: Callable[[], str | None]


_kernels: dict[str, Any] = {}


def _count_kernel() -> Any:
    """``count_bad(C, ref, tol, out)``: out[0] += number of C elements not within tol."""
    if "count" not in _kernels:
        from numba import cuda

        @cuda.jit
        def count_bad(C, ref, tol, out):
            n = C.shape[1]
            start = cuda.grid(1)
            step = cuda.gridsize(1)
            for i in range(start, C.size, step):
                r = i // n
                c = i - r * n
                if not abs(C[r, c] - ref[r, c]) <= tol[r, c]:
                    cuda.atomic.add(out, 0, 1)

        _kernels["count"] = count_bad
    return _kernels["count"]


def _launch_shape(elements: int) -> tuple[int, int]:
    """A grid-stride launch: many threads on a GPU, few on the simulator (simulated in Python)."""

    if backend.detect().kind != "gpu":
        return 1, 32
    return max(1, min(1024, (elements + 255) // 256)), 256


def cupy_reference(cp: Any, dA: Any, dB: Any) -> tuple[Any, Any]:
    """:func:`course.gemm.operands.reference_and_tolerance` on the device, in float64 CuPy arrays
    (``cp`` is the cupy module; ``dA``, ``dB`` CuPy arrays)."""
    a64, b64 = dA.astype(cp.float64), dB.astype(cp.float64)
    tol = tolerance_factor(dA.shape[1]) * (cp.abs(a64) @ cp.abs(b64)) + 1e-6
    return a64 @ b64, tol


def device_reference(A: np.ndarray, B: np.ndarray, dA: Any, dB: Any) -> tuple[Any, Any]:
    """The float64 product and tolerance of :func:`reference_and_tolerance`, as float32 device
    arrays (computed on the GPU with CuPy when possible)."""
    from numba import cuda

    if backend.detect().kind == "gpu":
        try:
            import cupy  # optional, heavy: imported when used (import course stays light)

            ref, tol = cupy_reference(cupy, cupy.asarray(dA), cupy.asarray(dB))
            return (cuda.as_cuda_array(ref.astype(cupy.float32)),
                    cuda.as_cuda_array(tol.astype(cupy.float32)))
        except ImportError:
            pass
    ref64, tol64 = reference_and_tolerance(A, B)
    return cuda.to_device(ref64.astype(np.float32)), cuda.to_device(tol64.astype(np.float32))


def warm_reference() -> None:
    """Run :func:`device_reference` once on 2×2 arrays: CuPy compiles each elementwise kernel
    it uses at its first call (NVRTC, a fraction of a second of CPU each), and a speedup timing
    wants that done before it holds the GPU lock. The launches take microseconds."""
    from numba import cuda

    small = np.ones((2, 2), dtype=np.float32)
    device_reference(small, small, cuda.to_device(small), cuda.to_device(small))
    cuda.synchronize()


class GemmVerifier:
    """Device copies of A and B, their reference product, and checks for timed outputs."""

    def __init__(self, A: np.ndarray, B: np.ndarray):
        from numba import cuda

        self.A, self.B = A, B
        self.dA, self.dB = cuda.to_device(A), cuda.to_device(B)
        self.ref, self.tol = device_reference(A, B, self.dA, self.dB)
        M, N = A.shape[0], B.shape[1]
        poison = np.full((M, N), C_POISON_BITS, dtype=np.uint32).view(np.float32)
        self.poison = cuda.to_device(poison)
        self.count = cuda.to_device(np.zeros(1, dtype=np.int64))

    def bad_elements(self, dC: Any) -> int:
        """How many elements of ``dC`` are not within tolerance of the reference."""
        from numba import cuda

        self.count.copy_to_device(np.zeros(1, dtype=np.int64))
        grid, block = _launch_shape(dC.size)
        with quiet_numba():
            _count_kernel()[grid, block](dC, self.ref, self.tol, self.count)
        cuda.synchronize()
        return int(self.count.copy_to_host()[0])

    def compile_check(self, dC: Any) -> None:
        """Compile the counting kernel for ``dC`` now, not at the first check (see
        :func:`course.gemm.launch.compile_for`)."""
        compile_for(_count_kernel(), (dC, self.ref, self.tol, self.count))

    def output_check(self, dC: Any, block: int = 16, naive: bool = False) -> OutputCheck:
        """Poison ``dC`` before a sample; after it, explain what is wrong (None when right)."""

        def poison() -> None:
            dC.copy_to_device(self.poison)

        def check() -> str | None:
            bad = self.bad_elements(dC)
            if bad == 0:
                return None
            M, K = self.A.shape
            N = self.B.shape[1]
            why = diagnose(dC.copy_to_host(), self.A, self.B, block, naive=naive)
            what = _("{bad} of {total} elements of C are not A·B at M={M}, N={N}, K={K}").format(
                bad=f"{bad:,}", total=f"{M * N:,}", M=M, N=N, K=K)
            return f"{what}: {why}" if why else what

        return OutputCheck(poison, check)

    def inputs_changed(self) -> str | None:
        """None if A and B on the device still hold their inputs, else what changed."""
        for name, host, dev in (("A", self.A, self.dA), ("B", self.B, self.dB)):
            if not np.array_equal(dev.copy_to_host(), host, equal_nan=True):
                return _("the timed kernels wrote into {name}, which is an input: a kernel "
                         "must only read A and B").format(name=name)
        return None


def exact_check(dev_out: Any, expected: np.ndarray, what: str,
                poison: Callable[[], None] | None = None) -> OutputCheck:
    """An :class:`OutputCheck` for outputs that must equal ``expected`` exactly (vector add,
    copies): poison with NaN, then compare on the host."""
    from numba import cuda

    nan = cuda.to_device(np.full(expected.shape, np.nan, dtype=expected.dtype))

    def default_poison() -> None:
        dev_out.copy_to_device(nan)

    def check() -> str | None:
        got = dev_out.copy_to_host()
        wrong = ~(got == expected)
        if not wrong.any():
            return None
        first = int(np.argmax(wrong.ravel()))
        return _("{bad} of {total} elements of {what} are wrong, e.g. element {first} is "
                 "{got}, expected {want}").format(
            bad=f"{int(wrong.sum()):,}", total=f"{expected.size:,}", what=what, first=first,
            got=repr(got.ravel()[first]), want=repr(expected.ravel()[first]))

    return OutputCheck(poison or default_poison, check)


def exact_array_check(out: Any, expected: Any, what: str) -> OutputCheck:
    """An :class:`OutputCheck` for a NumPy or CuPy array that must equal ``expected`` exactly.

    ``out`` and ``expected`` live in the same array module (both CuPy on a GPU, both NumPy on
    the CPU runner), so the comparison runs where the data is and only a count comes back.
    Before a sample ``out`` is filled with the course's marked NaN (C_POISON_BITS, the same
    value the correctness checks use), so an element the timed launches did not write fails
    and is named as unwritten. Meant for integer-valued inputs whose every partial sum is
    exact in float32 (the write-up experiment's), where any correct kernel gives bit-for-bit the
    expected result.
    """
    if tuple(out.shape) != tuple(expected.shape):
        raise ValueError(f"{what}: output shape {tuple(out.shape)} differs from the expected "
                         f"{tuple(expected.shape)}")
    if out.dtype != np.float32:
        raise ValueError(f"{what}: expected a float32 array, got {out.dtype}")

    def poison() -> None:
        out.view(np.uint32).fill(C_POISON_BITS)

    def check() -> str | None:
        wrong = out != expected  # NaN never equals anything, so poison left behind is wrong
        bad = int(wrong.sum())
        if bad == 0:
            return None
        first = int(wrong.ravel().argmax())
        cols = out.shape[1] if out.ndim == 2 else out.size
        r, c = divmod(first, cols)
        got = out.ravel()[first:first + 1]
        unwritten = int((got.view(np.uint32) == C_POISON_BITS).sum()) == 1
        value = (_("never written (still the poison NaN)") if unwritten
                 else repr(float(got[0])))
        return _("{bad} of {total} elements of {what} are wrong, e.g. [{r}, {c}] is {value}, "
                 "expected {want}").format(bad=f"{bad:,}", total=f"{out.size:,}", what=what,
                                           r=r, c=c, value=value,
                                           want=repr(float(expected.ravel()[first])))

    return OutputCheck(poison, check)
