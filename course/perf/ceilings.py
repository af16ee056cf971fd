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
really goes to DRAM. Every measurement uses :mod:`course.timing` (CUDA events, warm-up,
median, several launches per pair of events) and raises :class:`course.backend.NoGPUError`
on the simulator, which has no clock worth reading. :func:`ceilings_for_plot` returns the
measured roof on a GPU and the datasheet roof of ``course.devices.DEFAULT_SIMULATOR_DEVICE``
elsewhere, with a sentence that says which.

:func:`check_vector_add` (graded in notebook 05) checks the streaming kernel itself, on the
simulator or a GPU.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from course import backend, gate
from course.errors import not_written_yet
from course.roofline import Roof
from course.timing import Timing

__all__ = [
    "VECTOR_ADD_AI",
    "VECTOR_ADD_BLOCK",
    "STREAM_BLOCKS_PER_SM",
    "Ceiling",
    "MissingDependencyError",
    "VectorAddCheckError",
    "VectorAddReport",
    "ceilings_for_plot",
    "check_vector_add",
    "compare_with_datasheet",
    "check_copies",
    "check_grids",
    "copy_bytes",
    "copy_launches",
    "measure_bandwidth",
    "measure_copy_bandwidth",
    "measure_fp32_peak",
    "vector_add_bytes",
    "vector_add_launch",
]

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


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def vector_add_launch(n: int, sm_count: int | None = None) -> tuple[int, int]:
    """(blocks, threads per block) the course launches ``vector_add`` with over ``n`` elements.

    Blocks of 256 threads, as many as the elements need, but at most 32 per SM: on a big
    array every thread loops over several elements (the grid-stride loop). ``sm_count``
    defaults to this GPU's (1 on the simulator, which has no SMs to fill).
    """
    n = _positive_int("n", n)
    if sm_count is None:
        sm_count = backend.detect().sm_count or 1
    sm_count = _positive_int("sm_count", sm_count)
    return min(math.ceil(n / VECTOR_ADD_BLOCK), STREAM_BLOCKS_PER_SM * sm_count), VECTOR_ADD_BLOCK


def vector_add_bytes(n: int, bytes_per_element: int = 4) -> int:
    """Bytes c = a + b moves: read a, read b, write c."""
    return 3 * _positive_int("n", n) * bytes_per_element


def copy_bytes(n: int, bytes_per_element: int = 4) -> int:
    """Bytes a device-to-device copy of ``n`` elements moves: each read once, written once."""
    return 2 * _positive_int("n", n) * bytes_per_element


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
        text = (f"{self.what}: {self.value:,.0f} {self.unit} "
                f"(median {self.timing.median_ms:.3f} ms of {self.timing.repeats} runs)")
        return f"{text}; {self.note}" if self.note else text


# ------------------------------------------------------------------------- check_vector_add

#: sizes for the check: 1 element, around one block, and ragged multi-block sizes.
GPU_SIZES = (1, 255, 256, 257, 1000, 100_003, 2**20 + 7)
SIM_SIZES = (1, 257, 700)
#: guard elements on each side of every array: one whole block, so that a loop that runs one
#: step too far reads and writes only inside the guards on a GPU.
VECTOR_GUARD = VECTOR_ADD_BLOCK
#: blocks of the grid that calls the kernel with c = a: a stride that divides no size here.
ALIAS_BLOCKS = 3
LOOP_HINT = "for i in range(cuda.grid(1), c.size, cuda.gridsize(1))"


@dataclass(frozen=True)
class VectorAddReport:
    """What a passed check covered."""

    sizes: tuple[int, ...]
    backend: str

    def __str__(self) -> str:
        return (f"✓ vector_add is correct for n = {', '.join(f'{n:,}' for n in self.sizes)}, "
                f"on grids of 1 block, {ALIAS_BLOCKS} blocks and one thread per element "
                f"(blocks of {VECTOR_ADD_BLOCK} threads), and with c the same array as a "
                f"[{self.backend}]")


def check_grids(n: int) -> list[int]:
    """The grids (numbers of 256-thread blocks) the check launches over ``n`` elements.

    One block (every thread loops over many elements), three blocks (a stride that divides
    none of the sizes), and one thread per element (the loop runs at most once): a correct
    grid-stride kernel is right on all of them, whatever grid the course picks.
    """
    full = math.ceil(_positive_int("n", n) / VECTOR_ADD_BLOCK)
    return list(dict.fromkeys([1, ALIAS_BLOCKS, full]))


def _require_runnable() -> str:
    b = backend.detect()
    if not b.can_run_kernels:
        raise backend.NoGPUError(f"kernels cannot run here: {b.reason}. {backend.COLAB_HINT}")
    return b.kind


def _guarded_device(data: np.ndarray, fill: np.ndarray) -> tuple[Any, Any]:
    """A device buffer [guard | data | guard] and the view of its middle."""
    from numba import cuda

    dev = cuda.to_device(np.concatenate([fill, data, fill]))
    return dev, dev[VECTOR_GUARD:VECTOR_GUARD + data.size]


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" + ("" if count == 1 else "s")


def _grid_words(blocks: int) -> str:
    return f"{_plural(blocks, 'block')} of {VECTOR_ADD_BLOCK} threads"


def _diagnose(n: int, blocks: int, a: np.ndarray, b: np.ndarray, c: np.ndarray,
              wrote_outside: bool, changed_inputs: str) -> str | None:
    """What is wrong with c = a + b as computed on ``blocks`` blocks, or None if it is right."""
    from course.checks import C_POISON_BITS

    where = f"for n = {n:,} on {_grid_words(blocks)}"
    if wrote_outside:
        return (f"{where} your kernel wrote past the end of c: the loop must stop before "
                f"c.size, as `{LOOP_HINT}:` does")
    if changed_inputs:
        return f"{where} your kernel changed {changed_inputs}: only c is the output; read a " \
               "and b, write c"
    unwritten = c.view(np.uint32) == C_POISON_BITS
    grid = blocks * VECTOR_ADD_BLOCK
    if unwritten.all():
        if n == 1:
            return (f"{where} c[0] was never written: the loop must include i = 0 and run up "
                    f"to c.size, as `{LOOP_HINT}:` does, and store c[i] = a[i] + b[i] (the "
                    "arguments come in the order a, b, c)")
        return (f"{where} c was never written: does the kernel store c[i] = a[i] + b[i] for "
                f"every i of `{LOOP_HINT}:`? The arguments come in the order (a, b, c).")
    if unwritten.any():
        first = int(np.argmax(unwritten))
        count = int(unwritten.sum())
        if first == grid and count == n - grid:
            hint = (f"each thread handled one element, but the grid has only {grid:,} threads "
                    f"for {n:,} elements. Let every thread go on to i + cuda.gridsize(1), "
                    f"i + 2·cuda.gridsize(1), …, a grid-stride loop: `{LOOP_HINT}:`")
        elif first == VECTOR_ADD_BLOCK and count == n - first:
            hint = ("only the first block's elements were written: start at i = cuda.grid(1) "
                    "(= blockIdx.x·blockDim.x + threadIdx.x, which includes the block) and "
                    "step by cuda.gridsize(1), the threads of the whole grid")
        elif count == n - first:
            hint = (f"the last elements are missing: the loop must run up to c.size, as "
                    f"`{LOOP_HINT}:` does")
        else:
            hint = ("every element needs a thread: start at i = cuda.grid(1) and step by "
                    f"cuda.gridsize(1), `{LOOP_HINT}:`")
        verb = "was" if count == 1 else "were"
        return (f"{where}, {_plural(count, 'element')} of c (the first is c[{first}]) {verb} "
                f"never written (still NaN): {hint}")
    if not np.isfinite(c).all():
        i = int(np.argmax(~np.isfinite(c)))
        return (f"{where} c[{i}] = {c[i]} although a and b are finite: the kernel read "
                "outside a or b (the memory around them holds NaN)")
    a64, b64, c64 = a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)
    ref = a64 + b64
    tol = 2 * np.finfo(np.float32).eps * (np.abs(a64) + np.abs(b64)) + 1e-30
    bad = np.abs(c64 - ref) > tol
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    detail = (f"c[{i}] = {c[i]:.6g}, expected a[{i}] + b[{i}] = {ref[i]:.6g}; "
              f"{int(bad.sum()):,} of {n:,} wrong")
    guesses = {"a[i] − b[i]": a64 - b64, "a[i] · b[i]": a64 * b64, "a[i]": a64, "b[i]": b64,
               "2·a[i]": 2 * a64, "2·b[i]": 2 * b64}
    for what, values in guesses.items():
        if np.all(np.abs(c64 - values) <= 2 * np.finfo(np.float32).eps * np.abs(values) + 1e-30):
            return f"{where}: {detail}. Your kernel stores {what}; it should store a[i] + b[i]"
    return (f"{where}: {detail}. Each loop step should add the elements at its own index i: "
            "c[i] = a[i] + b[i]")


def _diagnose_aliased(n: int, a: np.ndarray, b: np.ndarray, got: np.ndarray) -> str | None:
    """With c the same array as a, every element must come out as a + b: added exactly once."""
    times = np.rint((got.astype(np.float64) - a) / b)  # b ≥ 0.25: how often b was added
    if np.all(times == 1) and np.array_equal(got, a + b):
        return None
    i = int(np.argmax(times != 1)) if np.any(times != 1) else int(np.argmax(got != a + b))
    where = f"for n = {n:,} on {_grid_words(ALIAS_BLOCKS)}, called with c the same array as a"
    if times[i] >= 2:
        return (f"{where}: c[{i}] got b[{i}] added {int(times[i])} times, so more than one "
                "thread handled that element. Each element needs exactly one thread: start at "
                "cuda.grid(1) and step by cuda.gridsize(1), the number of threads in the whole "
                f"grid (not blockDim.x, not 1): `{LOOP_HINT}:`")
    return (f"{where}: c[{i}] = {got[i]:.6g}, expected a[{i}] + b[{i}] = {a[i] + b[i]:.6g}. Each "
            "thread should read a[i] and b[i] and store c[i] at the same index i, once")


def _launch_checked(kernel: Any, blocks: int, n: int, *arrays: Any) -> None:
    """Launch the student's kernel; turn whatever it raises into a message with a hint."""
    from numba import cuda

    from course.launch import quiet_numba

    try:
        with quiet_numba():
            kernel[blocks, VECTOR_ADD_BLOCK](*arrays)
        cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - the student's kernel may raise anything
        if not_written_yet(exc):
            raise VectorAddCheckError("vector_add is not written yet: replace "
                                      "`raise NotImplementedError()` with your kernel") from None
        raise VectorAddCheckError(
            f"vector_add failed for n = {n:,} on {_grid_words(blocks)}: "
            f"{type(exc).__name__}: {exc}. An index out of range means that a thread went past "
            f"the end of the arrays: loop only while i < c.size, as `{LOOP_HINT}:` does."
        ) from None


def check_vector_add(kernel: Any, sizes: Sequence[int] | None = None, seed: int | None = None,
                     quiet: bool = False) -> VectorAddReport:
    """Check a grid-stride ``vector_add(a, b, c)`` kernel on ragged sizes; raise if it is wrong.

    Each size runs on the grids of :func:`check_grids` with fresh random float32 inputs; c
    starts as a marked NaN (an element never written is recognised as such), and every array
    sits between guard regions, so a store past the end of c (on a GPU, where nothing raises)
    or a change to a or b is caught. Then the kernel runs with c the same array as a: an
    element that two threads handle comes out as a + 2·b, which catches a wrong stride
    (blockDim.x, 1) even though its values would otherwise look right. Small sizes go first,
    so such a kernel fails before a large size could keep it busy for long.
    """
    gate.begin_check("check_vector_add")
    kind = _require_runnable()
    from course.checks import C_GUARD, C_POISON_BITS, INPUT_GUARD_BITS
    from course.launch import require_kernel

    require_kernel(kernel, "vector_add")
    sizes = tuple(sorted(_positive_int("size", n) for n in (sizes or (
        GPU_SIZES if kind == "gpu" else SIM_SIZES))))
    rng = np.random.default_rng(seed if seed is not None else int.from_bytes(os.urandom(8)))
    in_guard = np.full(VECTOR_GUARD, INPUT_GUARD_BITS, dtype=np.uint32).view(np.float32)
    c_guard = np.full(VECTOR_GUARD, C_GUARD, dtype=np.float32)
    poison_bits = np.uint32(C_POISON_BITS)
    for n in sizes:
        a = rng.uniform(-1, 1, n).astype(np.float32)
        b = rng.uniform(-1, 1, n).astype(np.float32)
        a_dev, da = _guarded_device(a, in_guard)
        b_dev, db = _guarded_device(b, in_guard)
        for blocks in check_grids(n):
            c_dev, dc = _guarded_device(np.full(n, poison_bits).view(np.float32), c_guard)
            _launch_checked(kernel, blocks, n, da, db, dc)
            flat_c = c_dev.copy_to_host()
            outside = np.concatenate([flat_c[:VECTOR_GUARD], flat_c[VECTOR_GUARD + n:]])
            changed = [name for name, dev, host in (("a", a_dev, a), ("b", b_dev, b))
                       if not np.array_equal(dev.copy_to_host()[VECTOR_GUARD:VECTOR_GUARD + n]
                                             .view(np.uint32), host.view(np.uint32))]
            problem = _diagnose(n, blocks, a, b, flat_c[VECTOR_GUARD:VECTOR_GUARD + n],
                                bool(np.any(outside != C_GUARD)), " and ".join(changed))
            if problem:
                raise VectorAddCheckError(f"vector_add: {problem}")
        if n > VECTOR_ADD_BLOCK:  # below one block no two threads can share an element
            x = rng.uniform(-1, 1, n).astype(np.float32)
            y = rng.uniform(0.25, 1, n).astype(np.float32)
            x_dev, dx = _guarded_device(x, in_guard)
            _, dy = _guarded_device(y, in_guard)
            _launch_checked(kernel, ALIAS_BLOCKS, n, dx, dy, dx)
            problem = _diagnose_aliased(n, x, y, x_dev.copy_to_host()[VECTOR_GUARD:
                                                                      VECTOR_GUARD + n])
            if problem:
                raise VectorAddCheckError(f"vector_add: {problem}")
    report = VectorAddReport(sizes, kind)
    if not quiet:
        print(report)
    return report


# --------------------------------------------------------------------------- measurements


#: launches queued between one pair of CUDA events for the streaming measurements: a launch
#: of 2²⁷ floats takes a few hundred microseconds, comparable with the host's cost of one
#: Python launch, which a single launch per pair of events would count (course.timing).
STREAM_BATCH = 10


def measure_bandwidth(vector_add_kernel: Any, n: int = STREAM_N, repeats: int = 20,
                      batch: int = STREAM_BATCH) -> Ceiling:
    """DRAM bandwidth [GB/s] reached by a ``vector_add(a, b, c)`` kernel over ``n`` floats.

    Bytes are reads plus writes, 3·n·4; the launch is :func:`vector_add_launch`'s.
    Every timed batch is verified (c poisoned before, c == a + b after), so a kernel that
    skips work cannot report an impossible bandwidth.
    """
    backend.require_gpu("Measuring bandwidth")
    from numba import cuda

    from course.launch import quiet_numba, require_kernel
    from course.timing import UnverifiedTimingError, time_launch
    from course.verify import exact_check

    require_kernel(vector_add_kernel, "vector_add")
    n = _positive_int("n", n)
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
        raise VectorAddCheckError(f"vector_add gave wrong results for n = {n:,} while it was "
                                  f"timed ({exc}): pass check_vector_add before measuring "
                                  "with it") from None
    return Ceiling("bandwidth of your vector_add", timing.gbs, "GB/s", timing,
                   f"{n:,} floats per array, 3·n·4 bytes per launch, {_grid_words(blocks)}")


def copy_launches(src: Any, dst: Any) -> dict[str, Any]:
    """The device-to-device copies of ``src`` into ``dst`` (Numba device arrays) to try.

    * the driver's copy (cudaMemcpy device to device, what ``copy_to_device`` calls);
    * a Numba copy kernel with vector add's launch shape;
    * CuPy's copy kernel (``cupy.copyto``), when CuPy imports.

    Which one is fastest depends on the GPU and the driver, so the copy ceiling is the best.
    """
    from course.launch import quiet_numba
    from course.stream_kernels import copy_kernel as kernel

    launches: dict[str, Any] = {"cudaMemcpy device to device": lambda: dst.copy_to_device(src)}
    blocks, threads = vector_add_launch(dst.size)

    def numba_copy() -> None:
        with quiet_numba():
            kernel[blocks, threads](src, dst)

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
    from numba import cuda

    host = np.random.default_rng(1).random(_positive_int("n", n), dtype=np.float32)
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
    from numba import cuda

    from course.timing import time_launches
    from course.verify import exact_check

    n = _positive_int("n", n)
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
    return Ceiling(f"device-to-device copy bandwidth ({best})", timings[best].gbs, "GB/s",
                   timings[best],
                   f"{n:,} floats, 2·n·4 bytes per copy; fastest of: {others} GB/s")


def _import_cupy() -> Any:
    """Import CuPy with TF32 off for float32 matmul; raise a clear error when it is missing."""
    before = os.environ.get("CUPY_TF32")
    os.environ["CUPY_TF32"] = "0"  # read by CuPy when a float32 matmul picks its compute type
    if before not in (None, "0") and "cupy" in sys.modules:
        raise RuntimeError("CuPy was imported with CUPY_TF32=" + before + ": restart the kernel "
                           "so that cuBLAS runs in plain FP32")
    try:
        import cupy
    except Exception as exc:  # noqa: BLE001 - ImportError, or a CUDA library mismatch
        raise MissingDependencyError(
            "measuring the FP32 peak needs CuPy (it calls cuBLAS), and it could not be "
            f"imported ({type(exc).__name__}: {exc}). Install the wheel for your CUDA "
            "version, e.g. `pip install cupy-cuda12x` (Colab has it preinstalled)."
        ) from None
    return cupy


def measure_fp32_peak(size: int = PEAK_GEMM_SIZE, repeats: int = 10, batch: int = 3
                      ) -> Ceiling:
    """FP32 rate [GFLOP/s] of cuBLAS SGEMM on ``size``³ with TF32 off (2·size³ FLOPs)."""
    backend.require_gpu("Measuring the FP32 peak")
    from course.timing import OutputCheck, time_launch

    size = _positive_int("size", size)
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
    return Ceiling(f"FP32 rate of cuBLAS SGEMM at {size}³ (TF32 off)", timing.gflops,
                   "GFLOP/s", timing)


# -------------------------------------------------------------------------------- the roof


def _simulator_roof() -> tuple[Roof, str]:
    from course.devices import DATASHEET, DEFAULT_SIMULATOR_DEVICE

    spec = DATASHEET[DEFAULT_SIMULATOR_DEVICE]
    roof = Roof(f"{spec.name} (datasheet)", spec.fp32_peak_gflops, spec.bandwidth_gbs)
    source = (f"No GPU here, so nothing can be measured: this is the datasheet roof of a "
              f"{spec.name}, Colab's free GPU ({spec.fp32_peak_gflops:,.0f} GFLOP/s FP32, "
              f"{spec.bandwidth_gbs:,.0f} GB/s), not a measurement of this machine.")
    return roof, source


def ceilings_for_plot(bandwidth: Ceiling | None = None, peak: Ceiling | None = None
                      ) -> tuple[Roof, str]:
    """The roof to draw, and one sentence saying where its numbers come from.

    On a GPU: the measured device-copy bandwidth and the measured cuBLAS FP32 rate (pass
    ceilings you already measured to reuse them). If CuPy is missing, the peak falls back to
    the datasheet, and the sentence says so. Without a GPU: the datasheet roof of
    ``course.devices.DEFAULT_SIMULATOR_DEVICE``.
    """
    b = backend.detect()
    if b.kind != "gpu":
        return _simulator_roof()
    from course.devices import lookup

    spec = lookup(b.device_name or "")
    bandwidth = bandwidth or measure_copy_bandwidth()
    words = [f"{bandwidth.what} {bandwidth.value_gbs:,.0f} GB/s"]
    if peak is None:
        try:
            peak = measure_fp32_peak()
        except MissingDependencyError as exc:
            if spec is None:
                raise MissingDependencyError(
                    f"{exc} course.devices has no datasheet peak for {b.device_name} either."
                ) from None
            peak_value = spec.fp32_peak_gflops
            words.append(f"the datasheet FP32 peak {peak_value:,.0f} GFLOP/s (CuPy is not "
                         "installed, so cuBLAS could not measure one)")
    if peak is not None:
        peak_value = peak.value_gflops
        words.append(f"the {peak.what} {peak_value:,.0f} GFLOP/s")
    # A short name: plot_roofline labels every point with "N% of <name> roof".
    roof = Roof("measured", peak_value, bandwidth.value_gbs)
    return roof, f"Measured on this {b.device_name}: {' and '.join(words)}."


def compare_with_datasheet(ceilings: Sequence[Ceiling], device_name: str) -> str:
    """A small table: each measured ceiling beside the datasheet number of its kind."""
    from course.devices import lookup

    spec = lookup(device_name)
    rows = [("ceiling", "measured", "datasheet", "measured / datasheet")]
    for c in ceilings:
        sheet = None
        if spec is not None:
            sheet = spec.bandwidth_gbs if c.unit == "GB/s" else spec.fp32_peak_gflops
        rows.append((c.what, f"{c.value:,.0f} {c.unit}",
                     "—" if sheet is None else f"{sheet:,.0f} {c.unit}",
                     "—" if sheet is None else f"{100 * c.value / sheet:.0f} %"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join([r[0].ljust(widths[0])] + [x.rjust(w) for x, w in
                                                  zip(r[1:], widths[1:], strict=True)])
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if spec is None:
        lines.append(f"(course.devices has no datasheet entry for {device_name})")
    else:
        lines.append(f"(datasheet: {spec.notes})")
    return "\n".join(lines)
