"""Correctness and traffic checks for the CUDA C kernels, as strict as the Numba track's.

The same rules as :mod:`course.checks.gemm` and :mod:`course.checks.traffic`, with the same
messages: fresh random inputs, ragged shapes, C poisoned with a marked NaN, a float64 reference
with a tolerance scaled to each element. Where the kernel runs:

* **On a GPU** (CuPy present): through ``cupy.RawKernel``, with A and B inside NaN guard
  regions and C inside a sentinel (:mod:`course.gemm.cudac.gpu`).
* **Without one**: on the course's CPU runner (:mod:`course.gemm.cudac.cpu`), which stops nothing
  but reports every out-of-bounds index exactly, with the thread and the source line.

Barriers and memory traffic are always judged on the CPU runner, GPU or not: it runs the
threads of a block in a fixed order and sees every shared-memory access, so a missing
``__syncthreads()`` fails every time instead of now and then, and it counts every element of
A and B the kernel reads — a measurement, not a search of the source text.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from course.checks.gemm import (
    GPU_SHAPES,
    RACE_PROBE_TILE,
    GemmCheckError,
    GemmReport,
    ShapeFailedError,
    print_try,
)
from course.checks.speedup import NotMeasuredError
from course.checks.traffic import TrafficCheckError, TrafficReport, judge_reads
from course.gemm.cudac import cpu, gpu, nvrtc
from course.gemm.cudac.launch import CudaGemm, naive, tiled, where
from course.gemm.cudac.source import NAIVE, TILED, KernelSpec
from course.gemm.diagnosis import Seen, diagnose
from course.gemm.launch import TILES
from course.gemm.operands import C_GUARD, C_POISON_BITS, INPUT_GUARD_BITS, random_operands
from course.gemm.reads import naive_reads, tiled_reads
from course.runtime.errors import not_written_message
from course.runtime.i18n import _
from course.runtime.seeds import fresh_seed, generator
from course.trust import gate, replay

Shape = tuple[int, int, int]

#: On the CPU runner every access goes through a hook, so shapes stay moderate; they keep the
#: awkward cases (1×1×1, K below and above the tile, tall, wide, nothing a multiple of 16).
#: M ≠ N ≠ K first (on 1×1×1 several mistakes give the same 0, so it comes last).
CPU_SHAPES: tuple[Shape, ...] = ((33, 20, 7), (19, 9, 37), (7, 40, 5), (40, 3, 11), (37, 35, 45),
                                 (1, 1, 1))


class CheckNotRunError(NotMeasuredError):
    """The check needs a tool this machine lacks (NVRTC, a C++ compiler): never a pass or a
    fail, and the grade table says so."""


_Built = TypeVar("_Built")  # what a build gives: a compiled CudaGemm or a CPU runner


def _wrap(spec: KernelSpec, build: Callable[[], _Built]) -> _Built:
    """Compile (NVRTC) through ``build``; turn 'not written' and missing tools into their
    course errors."""
    try:
        return build()
    except NotImplementedError:
        raise GemmCheckError(not_written_message(
            spec.variable, _("the placeholder lines `# YOUR CODE HERE` and "
                             "`raise NotImplementedError()` inside the string"),
            _("with your CUDA C"))) from None
    except (nvrtc.NvrtcUnavailableError, cpu.CpuRunnerUnavailableError) as exc:
        raise CheckNotRunError(_("{name} could not be checked here: {why}").format(
            name=spec.variable, why=exc)) from None


def _where() -> str:
    try:
        return where()
    except cpu.CpuRunnerUnavailableError as exc:
        raise CheckNotRunError(_("CUDA C kernels cannot run here: {why}").format(why=exc)
                               ) from None


def run_guarded(gk: CudaGemm, A: np.ndarray, B: np.ndarray, c_init: np.ndarray | None = None
                ) -> tuple[np.ndarray, bool, list[str]]:
    """One launch with guards and poison (or C starting as ``c_init``): C, whether anything
    outside C was written, and the problems the CPU runner saw (always empty on a GPU, which
    cannot see them)."""
    cfg = gk.launch_for(A.shape[0], B.shape[1])
    if _where() == "gpu":
        kernel = gpu.raw_kernel(gk.source, gk.spec, gk.tile)
        C, outside = gpu.run_guarded(kernel, A, B, cfg.grid, cfg.block,
                                     c_poison_bits=int(C_POISON_BITS),
                                     input_guard_bits=int(INPUT_GUARD_BITS),
                                     c_guard=float(C_GUARD), c_init=c_init)
        return C, outside, []
    try:
        run = cpu.run(cpu.build(gk.source, gk.spec, gk.tile), A, B, cfg.grid, cfg.block,
                      c_init=c_init)
    except cpu.CpuBuildError as exc:
        raise GemmCheckError(str(exc)) from None
    return run.C, run.wrote_outside, run.problems


def _rerun(gk: CudaGemm, A: np.ndarray, B: np.ndarray, c0: np.ndarray
           ) -> tuple[np.ndarray, bool | None]:
    """Run again with C starting as ``c0``: C, and whether A or B was read (None on a GPU)."""
    if _where() == "gpu":
        return run_guarded(gk, A, B, c_init=c0)[0], None
    cfg = gk.launch_for(A.shape[0], B.shape[1])
    run = cpu.run(cpu.build(gk.source, gk.spec, gk.tile), A, B, cfg.grid, cfg.block, c_init=c0)
    return run.C, run.reads_a + run.reads_b > 0


def run_cases(gk: CudaGemm, shapes: Sequence[Shape], rng: np.random.Generator) -> float:
    """Run ``gk`` on every shape; raise GemmCheckError on the first failure; the worst error."""
    worst = 0.0
    for M, N, K in shapes:
        A, B = random_operands(M, N, K, rng)
        try:
            C, outside, problems = run_guarded(gk, A, B)
        except TimeoutError as exc:
            raise ShapeFailedError(f"{gk.name}: {exc}", (M, N, K), named=False) from None
        if problems:
            raise ShapeFailedError(f"{gk.name}: {problems[0]}", (M, N, K))

        def rerun(c0: np.ndarray, A: np.ndarray = A, B: np.ndarray = B
                  ) -> tuple[np.ndarray, bool | None]:
            return _rerun(gk, A, B, c0)

        problem = diagnose(C, A, B, gk.block, outside, gk.tile, naive=gk.tile is None,
                           rerun=rerun, cuda_c=True)
        if problem:
            raise ShapeFailedError(f"{gk.name}: {problem}", (M, N, K),
                                   named=not isinstance(problem, Seen))
        ref = A.astype(np.float64) @ B.astype(np.float64)
        worst = max(worst, float(np.linalg.norm(C - ref) / (np.linalg.norm(ref) or 1.0)))
    return worst


def try_gemm_cuda(gk: CudaGemm, A: Any, B: Any) -> np.ndarray:
    """Run a CUDA C kernel once on A and B (a "try it" cell) and print one line about the
    result, with the checks' launch (guards, C poisoned) and their diagnosis; returns C."""
    A, B = np.ascontiguousarray(A, np.float32), np.ascontiguousarray(B, np.float32)
    try:
        C, outside, problems = run_guarded(gk, A, B)
    except TimeoutError as exc:
        raise GemmCheckError(f"{gk.name}: {exc}") from None
    if problems:
        raise GemmCheckError(f"{gk.name}: {problems[0]}")
    problem = diagnose(C, A, B, gk.block, outside, gk.tile, naive=gk.tile is None,
                       rerun=lambda c0: _rerun(gk, A, B, c0), cuda_c=True)
    print_try(gk.name, C, A, B, problem)
    return C


def _default_shapes() -> tuple[Shape, ...]:
    return GPU_SHAPES if _where() == "gpu" else CPU_SHAPES


def _label() -> str:
    return "GPU, CuPy RawKernel" if _where() == "gpu" else "CPU runner"


@replay.replayable
def check_naive_gemm_cuda(source: Any, shapes: Sequence[Shape] | None = None,
                          seed: int | None = None, quiet: bool = False) -> GemmReport:
    """Check ``GEMM_NAIVE_CUDA`` on ragged shapes; raise :class:`GemmCheckError` if wrong."""
    gate.begin_check("check_naive_gemm_cuda")
    gk = _wrap(NAIVE, lambda: naive(source))
    shapes = tuple(shapes or _default_shapes())
    report = GemmReport("gemm_naive (CUDA C)", shapes, _label(), run_cases(gk, shapes,
                                                                             generator(seed)))
    if not quiet:
        print(report)
    return report


def watch(source: Any, tile: int, shape: Shape, seed: int) -> cpu.CpuRun:
    """One instrumented run of ``GEMM_TILED_CUDA`` on the CPU runner (GPU or not)."""
    gk = _wrap(TILED, lambda: tiled(source, tile))
    A, B = random_operands(*shape, np.random.default_rng(seed))
    cfg = gk.launch_for(shape[0], shape[1])
    try:
        return cpu.run(_wrap(TILED, lambda: cpu.build(gk.source, TILED, tile)), A, B,
                       cfg.grid, cfg.block)
    except cpu.CpuBuildError as exc:
        raise GemmCheckError(str(exc)) from None
    except TimeoutError as exc:
        raise GemmCheckError(f"{gk.name}: {exc}") from None


def _fixed_tile(source: Any, failed: ShapeFailedError, tile: int, tiles: Sequence[int],
                rng: np.random.Generator) -> GemmCheckError:
    """As :func:`course.checks.gemm.fixed_tile`: wrong at ``tile`` in a way no known mistake
    explains, right at another tile on the same shape."""
    if failed.named:
        return failed
    for other in (t for t in tiles if t != tile):
        try:
            run_cases(_wrap(TILED, functools.partial(tiled, source, other)), [failed.shape], rng)
        except GemmCheckError:
            continue
        return GemmCheckError(_("gemm_tiled (TILE={tile}) is wrong for M, N, K = {shape}, but "
                                "gemm_tiled (TILE={other}) is right there: the kernel does not "
                                "follow TILE everywhere. Look for a fixed number where TILE "
                                "belongs (a hard-coded 16?)").format(
                                    tile=tile, shape=failed.shape, other=other))
    return failed


@replay.replayable
def check_tiled_gemm_cuda(source: Any, tiles: Sequence[int] = TILES,
                          shapes: Sequence[Shape] | None = None, seed: int | None = None,
                          barrier_shape: Shape | None = None, quiet: bool = False
                          ) -> GemmReport:
    """Check ``GEMM_TILED_CUDA`` for every tile on ragged shapes, barriers included."""
    gate.begin_check("check_tiled_gemm_cuda")
    rng = generator(seed)
    shapes = tuple(shapes or _default_shapes())
    # Barriers first (a race can look like any other wrong value), watched on the CPU runner
    # at one small tile whose K spans several tiles, so both barriers matter.
    ptile = RACE_PROBE_TILE
    probe = barrier_shape or (ptile + 3, ptile + 1, 2 * ptile + 3)
    seen = watch(source, ptile, probe, int(rng.integers(2**31)))
    for found in (seen.problems, seen.races, seen.uninitialised):
        if found:
            raise GemmCheckError(_("gemm_tiled (TILE={tile}) for M, N, K = {shape}: {problem}"
                                   ).format(tile=ptile, shape=probe, problem=found[0]))
    worst = 0.0
    for tile in tiles:
        gk = _wrap(TILED, functools.partial(tiled, source, tile))
        try:
            worst = max(worst, run_cases(gk, shapes, rng))
        except ShapeFailedError as failed:
            raise _fixed_tile(source, failed, tile, tiles, rng) from None
    report = GemmReport(f"gemm_tiled (CUDA C, TILE {', '.join(map(str, tiles))})", shapes,
                        _label(), worst)
    if not quiet:
        print(report)
    return report


@replay.replayable
def check_traffic_cuda(source: Any, tile: int = 16, shape: Shape | None = None,
                       quiet: bool = False) -> TrafficReport:
    """Count ``GEMM_TILED_CUDA``'s reads of A and B at ``TILE=tile``; fail if too many."""
    gate.begin_check("check_traffic_cuda")
    M, N, K = shape or (tile + 3, tile + 1, 2 * tile + 3)
    seen = watch(source, tile, (M, N, K), fresh_seed())
    # Races are the correctness check's business (as in the Numba track): a kernel with a
    # missing barrier still has a tiled kernel's traffic. An access outside the arrays or a
    # crash leaves nothing to count.
    problem = seen.problems[0] if seen.problems else None
    if problem:
        raise TrafficCheckError(_("{kernel} could not be counted: {why}").format(
            kernel=f"gemm_tiled (TILE={tile})", why=problem))
    report = judge_reads(f"gemm_tiled (TILE={tile})", tile, (M, N, K),
                         seen.reads_a + seen.reads_b)
    if not quiet:
        print(report)
    return report
