"""Measured ceilings of the GPU in front of you: memory bandwidth and FP32 peak.

A datasheet roof is what the vendor promises; the roof a kernel actually meets is lower
(clocks under load, DRAM refresh and protocol overhead, power limits). So notebook 05 measures
the two numbers of the roofline model on the student's GPU:

* **bandwidth** with the student's own streaming kernel ``vector_add(a, b, c)``: n FLOPs for
  3·n·4 bytes (read a, read b, write c), a grid-stride loop launched with 256-thread blocks,
  at most 32 per SM (:func:`vector_add_launch`); and, as the reference a streaming kernel
  should come close to, the fastest of three device-to-device copies (2·n·4 bytes: every
  byte read once and written once);
* **FP32 peak** with cuBLAS (CuPy's ``matmul``) on a large square product with TF32 off, so
  that it is plain FP32 arithmetic like our kernels.

Inputs are far larger than any L2 cache (2²⁷ floats = 512 MiB per array), so the traffic
really goes to DRAM. Every measurement uses :mod:`course.perf.timing` (CUDA events, warm-up,
median, several launches per pair of events) and raises :class:`course.runtime.backend.NoGPUError`
on the simulator, which has no clock worth reading. :func:`ceilings_for_plot` returns the
measured roof on a GPU and the datasheet roof of ``course.runtime.devices.DEFAULT_SIMULATOR_DEVICE``
elsewhere, with a sentence that says which.

The graded check of the streaming kernel itself is :mod:`course.checks.vector_add`; the roof
drawn from these numbers is :mod:`course.perf.roof`.
"""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import cuda

from course.gemm.launch import quiet_numba, require_kernel
from course.gemm.stream_kernels import copy_kernel
from course.perf.timing import (
    OutputCheck,
    Timing,
    UnverifiedTimingError,
    time_launch,
    time_launches,
)
from course.perf.verify import exact_check
from course.runtime import backend
from course.runtime.i18n import _, ngettext

#: threads per block for ``vector_add``.
VECTOR_ADD_BLOCK = 256
#: the course launches at most this many blocks per SM for a stream; a grid-stride loop lets
#: each thread take several elements. On the H200, 8 and 32 blocks per SM streamed equally
#: fast, and 6 % faster than one element per thread (docs/results-gpu.md).
STREAM_BLOCKS_PER_SM = 32
#: FLOP/byte of c = a + b in FP32: one addition per 12 bytes moved.
VECTOR_ADD_AI = 1 / 12
#: default elements per array: 2²⁷ floats = 512 MiB, far beyond any L2 cache.
STREAM_N = 2**27
#: default size of the square cuBLAS product that measures the FP32 peak.
PEAK_GEMM_SIZE = 8192


class MissingDependencyError(RuntimeError):
    """A measurement needs a library that is not installed (CuPy for cuBLAS)."""


class VectorAddCheckError(AssertionError):
    """``vector_add`` computed the wrong thing; the message says where and what to fix."""


def positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def vector_add_launch(n: int, sm_count: int | None = None) -> tuple[int, int]:
    """(blocks, threads per block) the course launches ``vector_add`` with over ``n`` elements.

    Blocks of 256 threads, as many as the elements need, but at most 32 per SM: on a big
    array every thread loops over several elements (the grid-stride loop). ``sm_count``
    defaults to this GPU's (1 on the simulator, which has no SMs to fill).
    """
    n = positive_int("n", n)
    if sm_count is None:
        sm_count = backend.detect().sm_count or 1
    sm_count = positive_int("sm_count", sm_count)
    return min(math.ceil(n / VECTOR_ADD_BLOCK), STREAM_BLOCKS_PER_SM * sm_count), VECTOR_ADD_BLOCK


def grid_words(blocks: int) -> str:
    """"3 blocks of 256 threads": a vector-add grid in words."""
    return ngettext("{count} block of {threads} threads", "{count} blocks of {threads} threads",
                    blocks).format(count=f"{blocks:,}", threads=VECTOR_ADD_BLOCK)


def vector_add_bytes(n: int, bytes_per_element: int = 4) -> int:
    """Bytes c = a + b moves: read a, read b, write c."""
    return 3 * positive_int("n", n) * bytes_per_element


def copy_bytes(n: int, bytes_per_element: int = 4) -> int:
    """Bytes a device-to-device copy of ``n`` elements moves: each read once, written once."""
    return 2 * positive_int("n", n) * bytes_per_element


@dataclass(frozen=True)
class Ceiling:
    """One measured ceiling: a bandwidth [GB/s] or a compute rate [GFLOP/s], and its timing."""

    what: str
    value: float
    unit: str  # "GB/s" or "GFLOP/s"
    timing: Timing
    note: str = ""

    @property
    def value_gbs(self) -> float:
        if self.unit != "GB/s":
            raise ValueError(f"{self.what} is a compute rate ({self.unit}), not a bandwidth")
        return self.value

    @property
    def value_gflops(self) -> float:
        if self.unit != "GFLOP/s":
            raise ValueError(f"{self.what} is a bandwidth ({self.unit}), not a compute rate")
        return self.value

    def __str__(self) -> str:
        text = _("{what}: {value:,.0f} {unit} (median {median_ms:.3f} ms of {repeats} "
                 "runs)").format(what=self.what, value=self.value, unit=self.unit,
            median_ms=self.timing.median_ms, repeats=self.timing.repeats)
        return f"{text}; {self.note}" if self.note else text


# --------------------------------------------------------------------------- measurements


#: launches queued between one pair of CUDA events for the streaming measurements: a launch
#: of 2²⁷ floats takes a few hundred microseconds, comparable with the host's cost of one
#: Python launch, which a single launch per pair of events would count (course.perf.timing).
STREAM_BATCH = 10


def measure_bandwidth(vector_add_kernel: Any, n: int = STREAM_N, repeats: int = 20,
                      batch: int = STREAM_BATCH) -> Ceiling:
    """DRAM bandwidth [GB/s] reached by a ``vector_add(a, b, c)`` kernel over ``n`` floats.

    Bytes are reads plus writes, 3·n·4; the launch is :func:`vector_add_launch`'s.
    Every timed batch is verified (c poisoned before, c == a + b after), so a kernel that
    skips work cannot report an impossible bandwidth.
    """
    backend.require_gpu("Measuring bandwidth")
    require_kernel(vector_add_kernel, "vector_add")
    n = positive_int("n", n)
    rng = np.random.default_rng(0)
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    da, db = cuda.to_device(a), cuda.to_device(b)
    dc = cuda.device_array(n, dtype=np.float32)
    blocks, threads = vector_add_launch(n)

    def run() -> None:
        with quiet_numba():
            vector_add_kernel[blocks, threads](da, db, dc)

    try:  # every timed batch starts from NaN in c and must leave a + b
        timing = time_launch(run, "vector add", repeats=repeats, flops=float(n),
                             nbytes=float(vector_add_bytes(n)), batch=batch,
                             check=exact_check(dc, a + b, "c"))
    except UnverifiedTimingError as exc:
        raise VectorAddCheckError(_(
            "vector_add gave wrong results for n = {n} while it was timed ({error}): pass "
            "check_vector_add before measuring with it").format(n=f"{n:,}", error=exc)) from None
    return Ceiling(_("bandwidth of your vector_add"), timing.gbs, "GB/s", timing,
                   _("{n} floats per array, 3·n·4 bytes per launch, {grid}").format(
                       n=f"{n:,}", grid=grid_words(blocks)))


def copy_launches(src: Any, dst: Any) -> dict[str, Any]:
    """The device-to-device copies of ``src`` into ``dst`` (Numba device arrays) to try.

    * the driver's copy (cudaMemcpyDeviceToDevice, what ``copy_to_device`` calls);
    * a Numba copy kernel with vector add's launch shape;
    * CuPy's copy kernel (``cupy.copyto``), when CuPy imports.

    Which one is fastest depends on the GPU and the driver, so the copy ceiling is the best.
    """

    launches: dict[str, Any] = {"cudaMemcpyDeviceToDevice": lambda: dst.copy_to_device(src)}
    blocks, threads = vector_add_launch(dst.size)

    def numba_copy() -> None:
        with quiet_numba():
            copy_kernel[blocks, threads](src, dst)

    launches["Numba copy kernel"] = numba_copy
    try:
        cupy = _import_cupy()
    except MissingDependencyError:
        return launches
    c_src, c_dst = cupy.asarray(src), cupy.asarray(dst)  # views of the same memory
    launches["CuPy copy kernel"] = lambda: cupy.copyto(c_dst, c_src)
    return launches


def check_copies(n: int = 4099) -> None:
    """Run every copy of :func:`copy_launches` once on ``n`` floats; raise if one is wrong.

    A copy that did not copy would report a bandwidth of nothing at all.
    """
    host = np.random.default_rng(1).random(positive_int("n", n), dtype=np.float32)
    src, dst = cuda.to_device(host), cuda.device_array_like(host)
    zeros = np.zeros_like(host)
    for name, launch in copy_launches(src, dst).items():
        dst.copy_to_device(zeros)  # what the previous copy left must not count
        launch()
        cuda.synchronize()
        if not np.array_equal(dst.copy_to_host(), host):
            raise RuntimeError(f"the {name} did not copy its input: the copy bandwidth "
                               "cannot be measured on this setup")


def measure_copy_bandwidth(n: int = STREAM_N, repeats: int = 20,
                           batch: int = STREAM_BATCH) -> Ceiling:
    """Device-to-device copy bandwidth [GB/s] of ``n`` floats (2·n·4 bytes per copy).

    Times every copy of :func:`copy_launches`, interleaved, and returns the fastest; its note
    lists them all. The copy is the reference a streaming kernel is held against.
    """
    backend.require_gpu("Measuring copy bandwidth")

    n = positive_int("n", n)
    check_copies()
    host = np.random.default_rng(1).random(n, dtype=np.float32)
    src = cuda.to_device(host)
    launches, checks = {}, {}
    for name in copy_launches(src, cuda.device_array(1, dtype=np.float32)):
        dst = cuda.device_array(n, dtype=np.float32)  # one each: every copy is verified
        launches[name] = copy_launches(src, dst)[name]
        checks[name] = exact_check(dst, host, f"the {name}'s destination")
    timings = time_launches(launches, repeats=repeats, nbytes=float(copy_bytes(n)),
                            batch=batch, checks=checks)
    best = max(timings, key=lambda name: timings[name].gbs)
    others = ", ".join(f"{name} {t.gbs:,.0f}" for name, t in timings.items())
    return Ceiling(_("device-to-device copy bandwidth ({best})").format(best=best),
                   timings[best].gbs, "GB/s", timings[best],
                   _("{n} floats, 2·n·4 bytes per copy; fastest of: {others} GB/s").format(
                       n=f"{n:,}", others=others))


def _import_cupy() -> Any:
    """Import CuPy with TF32 off for float32 matmul; raise a clear error when it is missing."""
    before = os.environ.get("CUPY_TF32")
    os.environ["CUPY_TF32"] = "0"  # read by CuPy when a float32 matmul picks its compute type
    if before not in (None, "0") and "cupy" in sys.modules:
        raise RuntimeError("CuPy was imported with CUPY_TF32=" + before + ": restart the kernel "
                           "so that cuBLAS runs in plain FP32")
    try:
        import cupy  # optional, heavy: imported when used (import course stays light)
    except Exception as exc:  # noqa: BLE001 - ImportError, or a CUDA library mismatch
        raise MissingDependencyError(_(
            "measuring the FP32 peak needs CuPy (it calls cuBLAS), and it could not be "
            "imported ({error}). Install the wheel for your CUDA version, e.g. `pip install "
            "cupy-cuda12x` (Colab has it preinstalled).").format(
                error=f"{type(exc).__name__}: {exc}")) from None
    return cupy


def measure_fp32_peak(size: int = PEAK_GEMM_SIZE, repeats: int = 10, batch: int = 3
                      ) -> Ceiling:
    """FP32 rate [GFLOP/s] of cuBLAS SGEMM on ``size``³ with TF32 off (2·size³ FLOPs)."""
    backend.require_gpu("Measuring the FP32 peak")

    size = positive_int("size", size)
    cupy = _import_cupy()
    rng = cupy.random.default_rng(0)
    A = rng.random((size, size), dtype=cupy.float32)
    B = rng.random((size, size), dtype=cupy.float32)
    C = cupy.empty((size, size), dtype=cupy.float32)
    # Verified on 64 random rows against float64 on the GPU (the library, not student code:
    # a sample is enough, and the whole product in float64 is slow on a T4).
    rows = cupy.asarray(np.random.default_rng(2).choice(size, min(64, size), replace=False))
    a64 = A[rows].astype(cupy.float64)
    expected = a64 @ B.astype(cupy.float64)
    tol = max(1e-4, 4 * size * float(np.finfo(np.float32).eps)) * (
        cupy.abs(a64) @ cupy.abs(B.astype(cupy.float64))) + 1e-6

    def check() -> str | None:
        bad = int((~(cupy.abs(C[rows] - expected) <= tol)).sum())
        return f"{bad} of {expected.size} sampled elements wrong" if bad else None

    timing = time_launch(lambda: cupy.matmul(A, B, out=C), f"cuBLAS SGEMM {size}³",
                         repeats=repeats, flops=2.0 * size**3, batch=batch,
                         check=OutputCheck(lambda: C.fill(cupy.nan), check))
    return Ceiling(_("FP32 rate of cuBLAS SGEMM at {size}³ (TF32 off)").format(size=size),
                   timing.gflops, "GFLOP/s", timing)


