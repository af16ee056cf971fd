"""The CUDA C write-up's experiment with the student's CUDA C kernels: naive vs tiled at 1024³.

The same experiment as :mod:`course.perf.experiment` (same inputs, ``A[i] = (i % 13) − 6`` and
``B[i] = (i % 7) − 3``; same table and chart), for students of the CUDA C track: their
``GEMM_NAIVE_CUDA`` and ``GEMM_TILED_CUDA`` strings, compiled with NVRTC and launched through
CuPy's ``RawKernel`` with the course contract's shapes (:mod:`course.gemm.cudac.launch`).

* :func:`check_writeup_correctness_cuda` runs both kernels once on the write-up's inputs and
  compares each result with the exact product: on a GPU at 1024³ with TILE 32, as the
  write-up did; without one on the course's CPU runner at 100³ with TILE 32 (100 is not a
  multiple of 32, so the tiles' edges and a last, partial step along K are exercised), where
  an index out of range or a missing barrier is reported with its line instead of a number.
* :func:`run_writeup_experiment_cuda` times them as the write-up did (50 back-to-back launches
  between two CUDA events, divided by 50), beside cuBLAS (CuPy's ``matmul``, TF32 off) and
  NumPy on the CPU, through the course's one timing helper
  (:func:`course.perf.timing.time_launches`) with CuPy's events. Every timed batch is verified:
  C is poisoned before it and must equal the exact product after it
  (:func:`course.perf.verify.exact_array_check`). Timings need a GPU with CuPy; without one it
  raises :class:`course.runtime.backend.NoGPUError` and never makes a number up.
* :func:`time_gemm_cuda` times one kernel the same way for the tile sweep of notebook 6.

Every input is a small integer and every partial sum stays below 2²⁴, so a correct kernel's
result is exact in float32 whatever order it adds in: max |naive − tiled| must be 0.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from course.gemm.cudac import cpu, gpu, nvrtc
from course.gemm.cudac.launch import CudaGemm, naive, tiled
from course.gemm.cudac.source import CudaCompileError, CudaSourceError
from course.gemm.operands import C_GUARD, C_POISON_BITS, INPUT_GUARD_BITS, GemmCheckError
from course.perf.experiment import (
    CUBLAS,
    NAIVE,
    NUMPY,
    ExperimentResult,
    Row,
    exact_product,
    max_abs_diff,
    numpy_row,
    tiled_name,
    writeup_inputs,
)
from course.perf.timing import Clock, Timing, time_launches
from course.perf.verify import UnverifiedTimingError, exact_array_check
from course.runtime.backend import NoGPUError
from course.runtime.errors import MissingAnswerError
from course.runtime.i18n import N_, _

__all__ = [
    "CPU_SIZE",
    "GPU_ONLY",
    "check_writeup_correctness_cuda",
    "run_writeup_experiment_cuda",
    "smoke_test_cuda",
    "time_gemm_cuda",
    "timed_rows",
]

#: M = N = K on the CPU runner: not a multiple of 32, small enough for a second or so.
CPU_SIZE = 100
GPU_ONLY = N_("The experiment's timings need a GPU with CuPy: on the CPU runner every memory "
              "access goes through the course's hooks, so a time there would say nothing about "
              "a GPU. On Colab, pick a T4 runtime.")
#: the experiment table's note on whose kernels it ran.
TRACK_NOTE = N_("CUDA C track: GEMM_NAIVE_CUDA and GEMM_TILED_CUDA")
_WHERE = {NAIVE: "GEMM_NAIVE_CUDA (notebook 2c)", "tiled": "GEMM_TILED_CUDA (notebook 3c)"}


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _device() -> str:
    if gpu.available():
        return _("{gpu}, CUDA C through CuPy's RawKernel").format(gpu=gpu.device_name())
    return _("the course's CPU runner (CUDA C compiled by g++; no GPU)")


def run_once(gk: CudaGemm, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """C = A·B from one launch of ``gk`` with the contract's shape, on the GPU (A, B inside NaN
    guards, C poisoned) or on the CPU runner; raise :class:`GemmCheckError` naming the first
    problem seen (a write outside C; on the CPU runner also an index out of range, a race on
    shared memory or a read of an unwritten tile element, with their lines)."""
    M, N = A.shape[0], B.shape[1]
    cfg = gk.launch_for(M, N)
    if gpu.available():
        C, outside = gpu.run_guarded(gpu.raw_kernel(gk.source, gk.spec, gk.tile), A, B,
                                     cfg.grid, cfg.block, c_poison_bits=int(C_POISON_BITS),
                                     input_guard_bits=int(INPUT_GUARD_BITS),
                                     c_guard=float(C_GUARD))
        if outside:
            raise GemmCheckError(_("{name} wrote outside C for M={M}, N={N}, K={K}: a missing "
                                   "bounds test before the store").format(
                name=gk.name, M=M, N=N, K=A.shape[1]))
        return C
    try:
        run = cpu.run(cpu.build(gk.source, gk.spec, gk.tile), A, B, cfg.grid, cfg.block)
    except cpu.CpuRunnerUnavailableError:
        raise  # no C++ compiler here: not the kernel's fault
    except (cpu.CpuBuildError, TimeoutError, RuntimeError) as exc:  # RuntimeError: no report
        raise GemmCheckError(f"{gk.name}: {exc}") from None
    seen = run.problems + run.races + run.uninitialised
    if seen:
        raise GemmCheckError(f"{gk.name}: {seen[0]}")
    return run.C


def smoke_test_cuda(naive_source: Any, tiled_source: Any, tile: int = 4) -> None:
    """Compile both strings and run each on a 1×1×1 product (2 · 3 = 6).

    Raises :class:`course.runtime.errors.MissingAnswerError` in a line or two when a string is still
    the release's placeholder, does not compile, cannot run here (no NVRTC, no C++ compiler
    and no GPU), or computes something else.
    """

    A = np.full((1, 1), 2.0, dtype=np.float32)
    B = np.full((1, 1), 3.0, dtype=np.float32)
    build = {NAIVE: lambda: naive(naive_source), "tiled": lambda: tiled(tiled_source, tile)}
    for key, where in _WHERE.items():
        try:
            C = run_once(build[key](), A, B)
        except NotImplementedError:
            raise MissingAnswerError(_(
                "{name} is not written yet: finish that notebook, save it, and run this cell "
                "again").format(name=where)) from None
        except (nvrtc.NvrtcUnavailableError, cpu.CpuRunnerUnavailableError) as exc:
            raise MissingAnswerError(_("CUDA C kernels cannot run here: {why}").format(
                why=exc)) from None
        except (CudaCompileError, CudaSourceError, GemmCheckError) as exc:
            first = "\n".join(str(exc).splitlines()[:3])
            raise MissingAnswerError(f"{where}: {first}\n" + _("Pass that notebook's tests "
                                                               "first.")) from None
        if C[0, 0] != 6.0:
            raise MissingAnswerError(_("{name} computes {value} for the 1×1×1 product 2 · 3: "
                                       "pass that notebook's tests first").format(
                name=where, value=repr(float(C[0, 0]))))


def check_writeup_correctness_cuda(naive_source: Any, tiled_source: Any, size: int | None = None,
                                tile: int = 32) -> ExperimentResult:
    """Run both kernels (and NumPy) once on the write-up's inputs at ``size``³; time nothing.

    ``size`` defaults to 1024 on a GPU and :data:`CPU_SIZE` on the CPU runner. Every row's
    ``max_abs_diff`` should be exactly 0; a problem the CPU runner sees raises
    :class:`GemmCheckError` with its line.
    """
    size = _positive("size", size if size is not None else
                     (1024 if gpu.available() else CPU_SIZE))
    gk_naive, gk_tiled = naive(naive_source), tiled(tiled_source, tile)
    A, B = writeup_inputs(size, size, size)
    ref = exact_product(A, B)
    C_naive, C_tiled = run_once(gk_naive, A, B), run_once(gk_tiled, A, B)
    where = "GPU" if gpu.available() else "CPU runner"
    rows = (Row(NAIVE, where, None, None, max_abs_diff(C_naive, ref)),
            Row(tiled_name(tile), where, None, None, max_abs_diff(C_tiled, ref)),
            Row(NUMPY, "CPU", None, None, max_abs_diff(A @ B, ref)))
    return ExperimentResult(size, 0, tile, _device(), rows, max_abs_diff(C_tiled, C_naive),
                            (_(TRACK_NOTE),))


def timed_rows(launches: Mapping[str, Callable[[], None]], outputs: Mapping[str, Any],
               expected: Any, ref: np.ndarray, *, iters: int, trials: int, flops: float,
               clock: Clock) -> list[Row]:
    """Time each batch of ``iters`` launches ``trials`` times (interleaved, one untimed warm-up
    batch), every batch verified exactly; one row per launch, per-launch medians.

    ``outputs[name]`` is the array ``launches[name]`` writes and ``expected`` the exact
    product, both in one array module (CuPy on a GPU; NumPy works too, which is how the
    verification is tested without one). A batch that leaves anything else raises
    :class:`course.perf.verify.UnverifiedTimingError`. ``flops`` is per launch.
    """
    checks = {name: exact_array_check(outputs[name], expected,
                                      _("C from {name}").format(name=name))
              for name in launches}
    timings = time_launches(dict(launches), repeats=trials, warmup=1, checks=checks,
                            clock=clock)
    rows = []
    for name, t in timings.items():
        avg = t.median_ms / iters
        host = outputs[name].get() if hasattr(outputs[name], "get") else outputs[name]
        rows.append(Row(name, "GPU", avg, flops / (avg * 1e6) if avg > 0 else None,
                        max_abs_diff(np.asarray(host), ref)))
    return rows


def _kernel_batch(gk: CudaGemm, dA: Any, dB: Any, dC: Any, size: int, iters: int
                  ) -> Callable[[], None]:
    """``iters`` launches of ``gk`` at size³ writing dC (compiled and run once first, so
    that neither NVRTC nor the module load is inside the clock)."""
    kernel = gpu.raw_kernel(gk.source, gk.spec, gk.tile)
    cfg = gk.launch_for(size, size)
    args = (np.int32(size), np.int32(size), np.int32(size), dA, dB, dC)
    kernel(cfg.grid, cfg.block, args)

    def batch() -> None:
        for _i in range(iters):
            kernel(cfg.grid, cfg.block, args)

    return batch


def _inputs_unchanged(cp: Any, dA: Any, dB: Any, A: np.ndarray, B: np.ndarray) -> None:
    for name, dev, host in (("A", dA, A), ("B", dB, B)):
        if not bool(cp.array_equal(dev, cp.asarray(host))):
            raise UnverifiedTimingError(f"the timed kernels wrote into {name}, which is an "
                                        "input: a kernel must only read A and B")


def run_writeup_experiment_cuda(naive_source: Any, tiled_source: Any, size: int = 1024,
                             iters: int = 50, tile: int = 32, *, trials: int = 5,
                             numpy_runs: int = 3, cublas: bool = True) -> ExperimentResult:
    """Time naive, tiled, cuBLAS and NumPy at ``size``³ on the write-up's inputs (GPU only).

    A timing is ``iters`` back-to-back launches between two CUDA events, divided by
    ``iters``, as in the write-up; it is repeated ``trials`` times, interleaved between the
    implementations after one warm-up batch, and the median is reported. NumPy is timed on
    the CPU (median of ``numpy_runs``).
    """
    if not gpu.available():
        raise NoGPUError(_(GPU_ONLY))
    size, iters = _positive("size", size), _positive("iters", iters)
    trials = _positive("trials", trials)
    # cuBLAS in FP32, like the kernels: CuPy reads this before its first float32 matmul.
    os.environ["CUPY_TF32"] = "0"
    cp = gpu.cupy_module()
    gk_naive, gk_tiled = naive(naive_source), tiled(tiled_source, tile)
    A, B = writeup_inputs(size, size, size)
    ref = exact_product(A, B)
    expected = cp.asarray(ref.astype(np.float32))  # exact: integer sums far below 2^24
    dA, dB = cp.asarray(A), cp.asarray(B)
    launches: dict[str, Callable[[], None]] = {}
    outputs: dict[str, Any] = {}
    for name, gk in ((NAIVE, gk_naive), (tiled_name(tile), gk_tiled)):
        outputs[name] = cp.empty((size, size), cp.float32)
        launches[name] = _kernel_batch(gk, dA, dB, outputs[name], size, iters)
    notes = [_(TRACK_NOTE)]
    if cublas:
        try:
            dC = cp.empty((size, size), cp.float32)
            cp.matmul(dA, dB, out=dC)

            def cublas_batch(dC: Any = dC) -> None:
                for _i in range(iters):
                    cp.matmul(dA, dB, out=dC)

            outputs[CUBLAS], launches[CUBLAS] = dC, cublas_batch
        except Exception as exc:  # noqa: BLE001 - report and carry on without cuBLAS
            notes.append(_("cuBLAS row skipped: {error}").format(
                error=f"{type(exc).__name__}: {exc}"))
    rows = timed_rows(launches, outputs, expected, ref, iters=iters, trials=trials,
                      flops=2.0 * size**3, clock=gpu.CupyEventClock())
    _inputs_unchanged(cp, dA, dB, A, B)
    rows.append(numpy_row(A, B, ref, numpy_runs))
    diff = max_abs_diff(outputs[tiled_name(tile)].get(), outputs[NAIVE].get().astype(np.float64))
    return ExperimentResult(size, iters, tile, _device(), tuple(rows), diff, tuple(notes))


def time_gemm_cuda(gk: CudaGemm, size: int, repeats: int = 10) -> Timing:
    """Median time of one launch of ``gk`` at size³ (GPU only), every launch verified.

    The tile sweep's timing for CUDA C kernels: the write-up's integer inputs, so the check
    after every timed launch is exact (see :func:`timed_rows`); CUDA events through CuPy.
    """
    if not gpu.available():
        raise NoGPUError("Timing a CUDA C kernel needs a GPU with CuPy")
    size, repeats = _positive("size", size), _positive("repeats", repeats)
    cp = gpu.cupy_module()
    A, B = writeup_inputs(size, size, size)
    expected = cp.asarray(exact_product(A, B).astype(np.float32))
    dA, dB = cp.asarray(A), cp.asarray(B)
    dC = cp.empty((size, size), cp.float32)
    launch = _kernel_batch(gk, dA, dB, dC, size, 1)
    check = exact_array_check(dC, expected, _("C from {name}").format(name=gk.name))
    timing = time_launches({gk.name: launch}, repeats=repeats, warmup=3, flops=2.0 * size**3,
                           checks={gk.name: check}, clock=gpu.CupyEventClock())[gk.name]
    _inputs_unchanged(cp, dA, dB, A, B)
    return timing
