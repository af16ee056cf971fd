"""The CUDA C write-up's experiment, rerun with your kernels: naive vs tiled GEMM at 1024³.

The write-up timed two FP32 GEMM kernels at M = N = K = 1024:

* a naive kernel, one thread per element of C, 16×16 blocks;
* a shared-memory tiled kernel with TILE = 32;

on integer-valued inputs ``A[i] = (i % 13) − 6`` and ``B[i] = (i % 7) − 3`` (``i`` the flat,
row-major index), averaging 50 launches with CUDA events. It measured 2.9437 ms and 2.5054 ms
(tiled / naive = 0.8511×) and a maximum difference of exactly 0 between the two results.

:func:`run_writeup_experiment` repeats that with the student's ``gemm_naive`` and
``make_gemm_tiled`` (launched as the course contract says, :mod:`course.gemm.launch`), timed
with the course's one timing helper (:func:`course.perf.timing.time_launches`), and adds two
references the write-up did not have: cuBLAS through CuPy (TF32 off, so it is an FP32
comparison) and NumPy on the CPU (the SYCL write-up's closing question: can a hand-written GPU
kernel beat NumPy?).

The CUDA C track runs the same experiment, with the same inputs, rows and table, on the
student's ``GEMM_NAIVE_CUDA`` and ``GEMM_TILED_CUDA`` (:mod:`course.perf.cuda_experiment`);
:mod:`course.notebooks.tracks` picks the track a student did.

The table and the figure of a result are :mod:`course.perf.experiment_report`.

Timings need a real GPU; on the simulator :func:`run_writeup_experiment` raises
:class:`course.runtime.backend.NoGPUError`. :func:`check_writeup_correctness` runs the same
kernels on the same kind of inputs without timing them, on a GPU or on the simulator (at a small
size there).

Why the difference is exactly 0: every input is a small integer, so every product and every
partial sum is an integer of magnitude at most 18·K (6·3 per term). For K ≤ 932,067 that is
below 2²⁴, and every integer below 2²⁴ is exact in float32: no addition ever rounds, so the
order of the additions (which differs between kernels and libraries) cannot change the result.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from course.gemm.launch import matmul, naive, quiet_numba, tiled
from course.perf.timing import time_launches
from course.perf.verify import exact_check
from course.runtime import backend
from course.runtime.errors import MissingAnswerError, explain, not_written_yet
from course.runtime.i18n import _

__all__ = [
    "WRITEUP_RESULTS",
    "ExperimentResult",
    "Row",
    "WriteupNumbers",
    "check_writeup_correctness",
    "exact_product",
    "max_abs_diff",
    "numpy_row",
    "run_writeup_experiment",
    "writeup_inputs",
    "smoke_test",
]

#: names of the rows, also used by the table and the chart.
NAIVE = "naive"
NUMPY = "NumPy"
CUBLAS = "cuBLAS (CuPy, TF32 off)"


def tiled_name(tile: int) -> str:
    return f"tiled (tile {tile})"


@dataclass(frozen=True)
class WriteupNumbers:
    """What the write-up measured (CUDA C, FP32; the GPU is not named in the write-up)."""

    size: int = 1024
    iters: int = 50
    tile: int = 32
    naive_block: int = 16
    naive_ms: float = 2.9437
    tiled_ms: float = 2.5054
    tiled_over_naive: float = 0.8511
    max_abs_diff: float = 0.0

    @property
    def flops(self) -> float:
        return 2.0 * self.size**3

    @property
    def naive_gflops(self) -> float:
        return self.flops / (self.naive_ms * 1e6)

    @property
    def tiled_gflops(self) -> float:
        return self.flops / (self.tiled_ms * 1e6)


WRITEUP_RESULTS = WriteupNumbers()


@dataclass(frozen=True)
class Row:
    """One implementation's result. ``avg_ms``/``gflops`` are None when it was not timed."""

    name: str
    where: str  # "GPU" or "CPU"
    avg_ms: float | None
    gflops: float | None
    max_abs_diff: float  # largest |C - exact A·B| over all elements

    @property
    def timed(self) -> bool:
        return self.avg_ms is not None


@dataclass(frozen=True)
class ExperimentResult:
    """Everything one run of the experiment produced."""

    size: int
    iters: int
    tile: int
    device: str
    rows: tuple[Row, ...]
    max_abs_diff_tiled_vs_naive: float  # the write-up's own comparison
    notes: tuple[str, ...] = ()

    def row(self, name: str) -> Row:
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"no row named {name!r}; rows are {[r.name for r in self.rows]}")

    @property
    def timed(self) -> bool:
        return any(r.timed for r in self.rows)

    @property
    def tiled_over_naive(self) -> float | None:
        """Tiled time / naive time, as the write-up reports it (below 1: tiled is faster)."""
        naive_ms = self.row(NAIVE).avg_ms
        tiled_ms = self.row(tiled_name(self.tile)).avg_ms
        if naive_ms is None or tiled_ms is None:
            return None
        return tiled_ms / naive_ms


# ---------------------------------------------------------------------------------- inputs


def _size(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def writeup_inputs(M: int, N: int, K: int) -> tuple[np.ndarray, np.ndarray]:
    """The write-up's inputs: A (M×K) with A[i] = (i % 13) − 6, B (K×N) with B[i] = (i % 7) − 3.

    ``i`` runs over the flat row-major index, so ``A[r, c]`` is ``((r·K + c) % 13) − 6``.
    Both float32 and C-contiguous, ready for the GEMM kernels.
    """
    M, N, K = _size("M", M), _size("N", N), _size("K", K)
    A = ((np.arange(M * K, dtype=np.int64) % 13) - 6).astype(np.float32).reshape(M, K)
    B = ((np.arange(K * N, dtype=np.int64) % 7) - 3).astype(np.float32).reshape(K, N)
    return A, B


def exact_product(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """A·B in float64: exact for the write-up's inputs (integers far below 2⁵³)."""
    return A.astype(np.float64) @ B.astype(np.float64)


def max_abs_diff(C: np.ndarray, ref: np.ndarray) -> float:
    """Largest |C − ref| over all elements (NaN when C holds a NaN)."""
    return float(np.max(np.abs(C.astype(np.float64) - ref)))


# ---------------------------------------------------------------------------------- kernels


def _gemm_kernels(gemm_naive: Any, make_gemm_tiled: Callable[[int], Any], tile: int):
    return naive(gemm_naive), tiled(make_gemm_tiled, tile)


def smoke_test(gemm_naive: Any, make_gemm_tiled: Callable[[int], Any], tile: int = 4) -> None:
    """Run both kernels on a 1×1×1 product (2 · 3 = 6); say plainly if one is not written yet.

    Raises :class:`course.runtime.errors.MissingAnswerError` when an answer still raises
    ``NotImplementedError``, fails on the 1×1×1 product (in one line, from
    :func:`course.runtime.errors.explain`) or gives a wrong one (on a GPU, an unwritten kernel
    compiles and silently does nothing).
    """

    A = np.full((1, 1), 2.0, dtype=np.float32)
    B = np.full((1, 1), 3.0, dtype=np.float32)
    where = {NAIVE: "gemm_naive (notebook 2)", "tiled": "make_gemm_tiled (notebook 3)"}
    build = {NAIVE: lambda: naive(gemm_naive), "tiled": lambda: tiled(make_gemm_tiled, tile)}
    for key in (NAIVE, "tiled"):
        try:
            C = matmul(build[key](), A, B)
        except Exception as exc:
            if not_written_yet(exc):
                raise MissingAnswerError(_(
                    "{name} is not written yet: finish that notebook, save it, and run this "
                    "cell again").format(name=where[key])) from None
            raise MissingAnswerError(_("{problem} Pass that notebook's tests first.").format(
                problem=explain(exc, where[key]))) from None
        if C[0, 0] != 6.0:
            raise MissingAnswerError(_("{name} computes {value} for the 1×1×1 product 2 · 3: "
                                       "pass that notebook's tests first").format(
                name=where[key], value=repr(C[0, 0])))


def check_writeup_correctness(gemm_naive: Any, make_gemm_tiled: Callable[[int], Any],
                           size: int = 48, tile: int = 32) -> ExperimentResult:
    """Run both kernels (and NumPy) once on the write-up's inputs at ``size``³; time nothing.

    Works on a GPU and on the simulator (keep ``size`` small there: every GPU thread is
    simulated in Python). Every row's ``max_abs_diff`` should be exactly 0.
    """

    size = _size("size", size)
    b = backend.detect()
    if not b.can_run_kernels:
        raise backend.NoGPUError(_("kernels cannot run here: {reason}. {hint}").format(
            reason=b.reason, hint=_(backend.COLAB_HINT)))
    gk_naive, gk_tiled = _gemm_kernels(gemm_naive, make_gemm_tiled, tile)
    A, B = writeup_inputs(size, size, size)
    ref = exact_product(A, B)
    C_naive = matmul(gk_naive, A, B)
    C_tiled = matmul(gk_tiled, A, B)
    rows = (
        Row(NAIVE, "GPU", None, None, max_abs_diff(C_naive, ref)),
        Row(tiled_name(tile), "GPU", None, None, max_abs_diff(C_tiled, ref)),
        Row(NUMPY, "CPU", None, None, max_abs_diff(A @ B, ref)),
    )
    device = (b.device_name or "GPU") if b.kind == "gpu" else "Numba CUDA simulator"
    return ExperimentResult(size, 0, tile, device, rows, max_abs_diff(C_tiled, C_naive))


def numpy_row(A: np.ndarray, B: np.ndarray, ref: np.ndarray, runs: int = 3) -> Row:
    """NumPy's ``A @ B`` on the CPU: median of ``runs`` timings after one warm-up (the result
    of which is compared with ``ref``), with ``time.perf_counter``."""
    runs = _size("numpy_runs", runs)
    C_cpu = A @ B  # warm-up (and the result we check)
    samples = []
    for _i in range(runs):
        start = time.perf_counter()
        A @ B
        samples.append((time.perf_counter() - start) * 1e3)
    cpu_ms = statistics.median(samples)
    flops = 2.0 * A.shape[0] * A.shape[1] * B.shape[1]
    return Row(NUMPY, "CPU", cpu_ms, flops / (cpu_ms * 1e6), max_abs_diff(C_cpu, ref))


def _cupy_module() -> tuple[Any | None, str]:
    """Import CuPy with TF32 off for float32 matmul; (None, why) when it is unusable."""
    # CuPy reads CUPY_TF32 the first time a float32 matmul asks for its compute type; "0" (its
    # default, set here explicitly) keeps cuBLAS on plain FP32 arithmetic, like our kernels.
    os.environ["CUPY_TF32"] = "0"
    try:
        import cupy  # optional, heavy: imported when used (import course stays light)
    except Exception as exc:  # noqa: BLE001 - ImportError, or a CUDA library mismatch
        return None, _("cuBLAS row skipped: CuPy could not be imported ({error})").format(
            error=type(exc).__name__)
    return cupy, ""


def run_writeup_experiment(gemm_naive: Any, make_gemm_tiled: Callable[[int], Any],
                        size: int = 1024, iters: int = 50, tile: int = 32, *,
                        trials: int = 5, numpy_runs: int = 3, cublas: bool = True
                        ) -> ExperimentResult:
    """Time naive, tiled, cuBLAS and NumPy at ``size``³ on the write-up's inputs (GPU only).

    Like the write-up, a timing is ``iters`` back-to-back launches between two CUDA events,
    divided by ``iters``: the average time per launch. That is repeated ``trials`` times
    (interleaved between the implementations, after one untimed warm-up batch) and the
    median is reported. NumPy runs on the CPU and is timed with ``time.perf_counter``
    (median of ``numpy_runs`` after one warm-up).
    """
    b = backend.require_gpu("The write-up experiment's timings")
    from numba import cuda

    size, iters = _size("size", size), _size("iters", iters)
    trials, numpy_runs = _size("trials", trials), _size("numpy_runs", numpy_runs)
    gk_naive, gk_tiled = _gemm_kernels(gemm_naive, make_gemm_tiled, tile)
    A, B = writeup_inputs(size, size, size)
    ref = exact_product(A, B)
    expected = ref.astype(np.float32)  # exact: integer sums far below 2^24
    flops = 2.0 * size**3
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    devices: dict[str, Any] = {}
    launches: dict[str, Callable[[], None]] = {}
    for name, gk in ((NAIVE, gk_naive), (tiled_name(tile), gk_tiled)):
        dC = cuda.device_array((size, size), dtype=np.float32)
        gk.launch(dA, dB, dC)  # compiles the kernel before the clock starts
        devices[name] = dC
        cfg = gk.launch_for(size, size)

        def batch(kernel=gk.kernel, cfg=cfg, dC=dC) -> None:
            with quiet_numba():
                for _i in range(iters):
                    kernel[cfg.grid, cfg.block](dA, dB, dC)

        launches[name] = batch

    notes: list[str] = []
    if cublas:
        cupy, why = _cupy_module()
        if cupy is None:
            notes.append(why)
        else:
            try:
                cA, cB = cupy.asarray(A), cupy.asarray(B)
                cC = cupy.empty((size, size), dtype=cupy.float32)
                cupy.matmul(cA, cB, out=cC)
                devices[CUBLAS] = cuda.as_cuda_array(cC)

                def cublas_batch(cA=cA, cB=cB, cC=cC) -> None:
                    for _i in range(iters):
                        cupy.matmul(cA, cB, out=cC)

                launches[CUBLAS] = cublas_batch
            except Exception as exc:  # noqa: BLE001 - report and carry on without cuBLAS
                notes.append(_("cuBLAS row skipped: {error}").format(
                    error=f"{type(exc).__name__}: {exc}"))

    # Every timed batch starts from a poisoned C and must leave the exact product.
    checks = {name: exact_check(dev, expected, _("C from {name}").format(name=name))
              for name, dev in devices.items()}
    timings = time_launches(launches, repeats=trials, warmup=1, checks=checks)
    outputs = {name: dev.copy_to_host() for name, dev in devices.items()}
    rows = []
    for name, t in timings.items():
        avg = t.median_ms / iters
        rows.append(Row(name, "GPU", avg, flops / (avg * 1e6), max_abs_diff(outputs[name], ref)))

    rows.append(numpy_row(A, B, ref, numpy_runs))
    return ExperimentResult(size, iters, tile, b.device_name or "GPU", tuple(rows),
                            max_abs_diff(outputs[tiled_name(tile)], outputs[NAIVE]),
                            tuple(notes))
