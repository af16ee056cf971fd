"""Is the tiled CUDA C kernel really faster? The Numba track's measurement, for CUDA C.

The same design as :mod:`course.checks.speedup`: a fresh process receives only the kernels' source
(here plain CUDA C strings), compiles them with CuPy into its own empty kernel cache, checks
each once with guards, and times the student's tiled kernel (TILE 32), the student's naive
kernel and, when the grader supplies it, the course's reference naive kernel, interleaved on
the same inputs. The verdict is a ratio of medians from that one run; a naive kernel that calls
``printf`` (seen in the PTX NVRTC compiles it to) or overruns the budget is left out as in the
Numba track (:mod:`course.checks.speedup_baseline`).

The threshold is the CUDA C track's own. CUDA C kernels are compiled by NVRTC with 32-bit
index arithmetic and full optimisation, so the naive kernel is already ~4× faster than
Numba's, and tiling gains far less: on an H200 (CuPy 14, docs/gpu-notes), tile 32 ran 1.75× the
speed of the naive kernel at 1024³ and 1.67× at 2048³, tile 16 1.5×, while a "tiled" kernel
that reads A and B from global memory in its inner loop ran at 0.92–0.95×. The bar sits at the
geometric middle of the fake kernel's best and a correct tile-32 kernel's worst ratio; the
distributions over ≥ 20 runs from ``scripts/gpu/cudac.py`` confirm or move it
(docs/cuda-c-track.md).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import numpy as np

from course.checks import speedup_baseline
from course.checks.cuda_gemm import watch
from course.checks.speedup import (
    REFERENCE_ENV,
    NotMeasuredError,
    SpeedupCheckError,
    SpeedupReport,
    gpu_timing_budget,
    judge,
    report_from,
)
from course.gemm import device_print
from course.gemm.cudac import gpu
from course.gemm.cudac.launch import CudaGemm
from course.gemm.cudac.source import NAIVE, TILED, compile_kernel
from course.gemm.diagnosis import diagnose
from course.gemm.operands import C_GUARD, C_POISON_BITS, INPUT_GUARD_BITS, random_operands
from course.perf.budget import TimingBudgetExceeded
from course.perf.timing import time_launches
from course.perf.verify import OutputCheck, UnverifiedTimingError, cupy_reference
from course.runtime import gpulock
from course.runtime.i18n import _
from course.runtime.seeds import fresh_seed
from course.trust import gate, runner

SPEEDUP_THRESHOLD_CUDA = 1.25
SPEEDUP_SIZE = 2048
SPEEDUP_TILE = 32
SPEEDUP_REPEATS = 20
#: the key of the course's reference naive CUDA C kernel in the grader's reference file
REFERENCE_KEY = "GEMM_NAIVE_CUDA"


def speedup_cuda_task(*, tiled_source: str, naive_source: str,
                       reference_source: str | None = None, size: int, tile: int,
                       repeats: int, seed: int, time_own_naive: bool = True) -> dict[str, Any]:
    """Child-process side: compile with CuPy, check each kernel once, time them
    (``time_own_naive=False``: the student's naive kernel is checked, not timed; see
    :mod:`course.checks.speedup_baseline`)."""

    if not isinstance(tiled_source, str) or not isinstance(naive_source, str):
        return {"error": "the kernels must be CUDA C strings"}
    gemms = {"tiled": CudaGemm(TILED, tiled_source, tile),
             "own naive": CudaGemm(NAIVE, naive_source)}
    if isinstance(reference_source, str):
        gemms["reference naive"] = CudaGemm(NAIVE, reference_source)
    timed = speedup_baseline.timed(gemms, time_own_naive)
    kernels = {name: gpu.raw_kernel(g.source, g.spec, g.tile) for name, g in gemms.items()}
    rng = np.random.default_rng(seed)
    A, B = random_operands(97, 61, 75, rng)
    for name, gk in gemms.items():  # a fast wrong kernel must not pass
        cfg = gk.launch_for(97, 61)
        C, outside = gpu.run_guarded(kernels[name], A, B, cfg.grid, cfg.block,
                                     c_poison_bits=int(C_POISON_BITS),
                                     input_guard_bits=int(INPUT_GUARD_BITS),
                                     c_guard=float(C_GUARD))
        problem = diagnose(C, A, B, gk.block, outside, naive=gk.tile is None, cuda_c=True)
        if problem:
            return {"error": _("{name} kernel is not correct: {problem}").format(
                name=_(name), problem=problem)}
    cp = gpu.cupy_module()
    A, B = random_operands(size, size, size, rng)
    # Everything but the timed launches happens first, sharing the GPU (compiles, copies, the
    # reference product); other graders then wait for this timing's launches only.
    _warm_cupy(cp, A, B)
    count_bad = gpu.count_bad_kernel()
    launches: dict[str, Callable[[], None]] = {}
    checks: dict[str, OutputCheck] = {}
    with gpulock.shared_launch():
        dA, dB = cp.asarray(A), cp.asarray(B)
        ref, tol = cupy_reference(cp, dA, dB)
        outputs = {name: cp.empty((size, size), cp.float32) for name in timed}
        cp.cuda.Device().synchronize()
    n = np.int32(size)
    for name, gk in timed.items():
        cfg = gk.launch_for(size, size)
        dC = outputs[name]  # each kernel its own output, verified

        def launch(kernel=kernels[name], cfg=cfg, dC=dC) -> None:
            kernel(cfg.grid, cfg.block, (n, n, n, dA, dB, dC))

        launches[name] = launch
        checks[name] = _output_check(cp, count_bad, A, B, ref, tol, dC, gk.block,
                                     gk.tile is None)
    try:
        with gpulock.exclusive():  # other graders' kernels must not share the GPU meanwhile
            timings = time_launches(launches, repeats=repeats, checks=checks,
                                    clock=gpu.CupyEventClock(),
                                    budget=gpu_timing_budget(list(launches), size))
    except TimingBudgetExceeded as exc:
        return {"error": str(exc), "overran": exc.kernel}
    except UnverifiedTimingError as exc:
        return {"error": _("the {problem} The correctness tests use small shapes; a speedup "
                           "only counts for launches that computed C = A·B at the timed size, "
                           "{size}³").format(problem=exc, size=size)}
    return {"ms": {k: t.median_ms for k, t in timings.items()}, "device": gpu.device_name(),
            "verified": True}


def _warm_cupy(cp: Any, A: np.ndarray, B: np.ndarray) -> None:
    """Run what the set-up and the checks ask of CuPy once on 2×2 arrays: CuPy compiles each
    elementwise kernel at its first use (NVRTC: a fraction of a second of CPU each, in this
    process's empty cache), and that must not happen while this timing holds the GPU. The
    launches themselves take microseconds."""
    small = [cp.asarray(np.ascontiguousarray(m[:2, :2])) for m in (A, B)]
    cupy_reference(cp, *small)
    cp.empty(4, cp.float32).view(cp.uint32).fill(np.uint32(C_POISON_BITS))
    cp.zeros(1, cp.uint64).fill(0)
    cp.cuda.Device().synchronize()


def _output_check(cp: Any, count_bad: Any, A: np.ndarray, B: np.ndarray, ref: Any, tol: Any,
                  dC: Any, block: int, naive: bool = False) -> OutputCheck:
    """Poison ``dC`` before each timed sample; after it, count on the device the elements that
    are not within tolerance of the float64 reference (NaN never is)."""
    bad = cp.zeros(1, cp.uint64)
    size = np.int64(dC.size)
    grid = (max(1, min(1024, (dC.size + 255) // 256)),)

    def poison() -> None:
        dC.view(cp.uint32).fill(np.uint32(C_POISON_BITS))

    def check() -> str | None:
        bad.fill(0)
        count_bad(grid, (256,), (dC, ref, tol, size, bad))
        wrong = int(bad.get()[0])
        if not wrong:
            return None
        M, K = A.shape
        why = diagnose(cp.asnumpy(dC), A, B, block, naive=naive, cuda_c=True)
        return (f"{wrong:,} of {dC.size:,} elements of C are not A·B at M={M}, "
                f"N={B.shape[1]}, K={K}" + (f": {why}" if why else ""))

    return OutputCheck(poison, check)


def _reference_source() -> str | None:
    path = os.environ.get(REFERENCE_ENV)
    if not path:
        return None
    with open(path) as fh:
        value = json.load(fh).get(REFERENCE_KEY)
    return value if isinstance(value, str) else None


def measure_speedup_cuda(tiled_source: Any, naive_source: Any, *, size: int = SPEEDUP_SIZE,
                         tile: int = SPEEDUP_TILE, repeats: int = SPEEDUP_REPEATS
                         ) -> SpeedupReport:
    """Time TILE-32 vs naive in a fresh GPU process; raise NotMeasuredError without a GPU."""

    gate.begin_check("measure_speedup_cuda")
    if not gpu.available():
        raise NotMeasuredError(_(
            "speedup not measured: this machine has no GPU with CuPy. It is measured when the "
            "notebook runs on a GPU; it is never counted as passed without one."))
    naive_prints = device_print.ptx_prints(compile_kernel(naive_source, NAIVE).result.ptx)
    # A deterministic look on the CPU runner first: a kernel with a barrier race can pass or
    # fail a GPU run by luck, and the same submission must always get the same verdict.
    seen = watch(tiled_source, 8, (11, 9, 19), fresh_seed())
    found = seen.problems or seen.races or seen.uninitialised
    problem = found[0] if found else None
    if problem:
        raise SpeedupCheckError(_("no speedup points yet: gemm_tiled (TILE=8) is not correct "
                                  "({problem}); fix the correctness tests first").format(
                                      problem=problem))
    tiled_prints = device_print.ptx_prints(compile_kernel(tiled_source, TILED, tile).result.ptx)
    reference = _reference_source()
    job = {"task": "speedup_cuda", "bundles": {},
           "tiled_source": tiled_source, "naive_source": naive_source,
           "reference_source": reference, "size": size, "tile": tile,
           "repeats": repeats, "seed": fresh_seed()}
    out, untimed, tiled_hint = speedup_baseline.run_speedup_job(
        job, has_reference=reference is not None,
        naive_prints=naive_prints, tiled_prints=tiled_prints, call="printf", size=size)
    if out.get("error"):
        raise SpeedupCheckError(_("no speedup points: {why}").format(why=out["error"]))
    return report_from(out, size, tile, SPEEDUP_THRESHOLD_CUDA, untimed=untimed,
                       tiled_hint=tiled_hint)


def check_speedup_cuda(tiled_source: Any, naive_source: Any, **kwargs: Any) -> SpeedupReport:
    """Pass if the TILE-32 kernel beats the naive one by the CUDA C threshold."""
    return judge(measure_speedup_cuda(tiled_source, naive_source, **kwargs))
