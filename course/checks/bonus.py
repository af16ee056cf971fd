"""Launch and check the bonus kernel of notebook 7: GEMM with 2-D register tiling.

In the tiled kernel of notebook 3 each thread computes one element of C, so for every two
values it reads from shared memory it does one multiply-add. Register tiling gives each
thread a small TM×TN block of C, held in registers: per step along K it reads TM values of A
and TN of B from shared memory and does TM·TN multiply-adds with them. Shared-memory reads per
multiply-add fall from 2 to (TM+TN)/(TM·TN), 0.5 for 4×4, and global reads per FLOP fall with
the bigger block tile BM×BN, as in notebook 1's model.

The student's contract (:data:`CONTRACT`): ``make_gemm_register_tiled()`` returns a
``@cuda.jit`` kernel ``(A, B, C)`` that computes a BM×BN = 64×64 block of C per thread block,
stepping along K by BK = 8, each of its 16×16 threads computing TM×TN = 4×4 elements. The
course launches it with block (16, 16) and grid (ceil(N/64), ceil(M/64)); x ↔ columns,
y ↔ rows, as before. It must be right for every M, N, K ≥ 1.

:class:`RegisterTiling` describes any such configuration (the GPU ladder in
``scripts/gpu/bonus_ladder.py`` tries bigger ones), :func:`check_register_tiled` checks a
kernel with the guarded runs and diagnoses of :mod:`course.checks.gemm`, and :func:`sweep_model`
puts it into the tile sweep of :mod:`course.perf.sweep`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from course.checks.gemm import GemmCheckError, GemmReport, ShapeFailedError, not_written, run_cases
from course.gemm.instrument import instrumented_run, missing_barrier_hint
from course.gemm.launch import GemmInputError, GemmKernel, Launch, NotAKernelError, is_cuda_kernel
from course.gemm.launch import require_kernel as _require_kernel
from course.gemm.operands import Shape, random_operands
from course.perf.kernel_models import KernelModel
from course.runtime import backend
from course.runtime.i18n import _
from course.runtime.seeds import generator
from course.trust import gate, replay

__all__ = [
    "CONTRACT",
    "GPU_SHAPES",
    "SIM_SHAPES",
    "RegisterTiling",
    "check_register_tiled",
    "register_tiled",
    "sweep_model",
]


@dataclass(frozen=True)
class RegisterTiling:
    """Block tile BM×BN, step BK along K, TM×TN elements of C per thread."""

    bm: int = 64
    bn: int = 64
    bk: int = 8
    tm: int = 4
    tn: int = 4

    def __post_init__(self) -> None:
        for name in ("bm", "bn", "bk", "tm", "tn"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise GemmInputError(f"{name} must be a positive integer, got {value!r}")
        if self.bm % self.tm or self.bn % self.tn:
            raise GemmInputError(f"BM={self.bm} must be a multiple of TM={self.tm} and "
                                 f"BN={self.bn} of TN={self.tn}")
        if self.threads > 1024:
            raise GemmInputError(f"{self.threads} threads per block exceed 1024")

    @property
    def block(self) -> tuple[int, int]:
        """Threads per block as (x, y): BN/TN along columns, BM/TM along rows."""
        return self.bn // self.tn, self.bm // self.tm

    @property
    def threads(self) -> int:
        return (self.bn // self.tn) * (self.bm // self.tm)

    @property
    def smem_bytes(self) -> int:
        """Shared memory of one block: a BM×BK tile of A and a BK×BN tile of B, FP32."""
        return (self.bm + self.bn) * self.bk * 4

    def launch_for(self, M: int, N: int) -> Launch:
        """Block (BN/TN, BM/TM), grid (ceil(N/BN), ceil(M/BM))."""
        for name, v in (("M", M), ("N", N)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise GemmInputError(f"{name} must be a positive integer, got {v!r}")
        return Launch(grid=(math.ceil(N / self.bn), math.ceil(M / self.bm)), block=self.block)

    def reads(self, M: int, N: int, K: int) -> int:
        """Elements of A and B requested: whole BM×BK and BK×BN tiles, padding included."""
        blocks = math.ceil(M / self.bm) * math.ceil(N / self.bn)
        return blocks * math.ceil(K / self.bk) * self.bk * (self.bm + self.bn)

    def describe(self) -> str:
        """The tiling in words: block tile, BK, elements per thread, threads per block."""
        return _("{bm}×{bn} block tile, BK={bk}, {tm}×{tn} per thread, {threads} threads").format(
            bm=self.bm, bn=self.bn, bk=self.bk, tm=self.tm, tn=self.tn, threads=self.threads)

    def wrap(self, kernel: Any, name: str) -> GemmKernel:
        """A :class:`GemmKernel` that launches ``kernel`` with this configuration."""
        _require_kernel(kernel, name)
        return GemmKernel(name, kernel, self.launch_for, out_tile=self.bm, k_step=self.bk)


#: The configuration of the notebook's exercise.
CONTRACT = RegisterTiling(64, 64, 8, 4, 4)

#: Ragged shapes: M, N not multiples of 64, K not a multiple of 8, K below 8, 1×1×1. On the
#: simulator every block is 256 simulated threads, so there are few blocks per shape.
GPU_SHAPES: tuple[Shape, ...] = (
    (33, 20, 7), (64, 64, 64), (100, 37, 45), (130, 200, 17), (257, 129, 70),
    (5, 300, 33), (300, 3, 9), (129, 65, 1000), (1, 1, 1),
)
#: M ≠ N ≠ K first: on 1×1×1 several mistakes give the same 0, so it comes last.
SIM_SHAPES: tuple[Shape, ...] = ((70, 67, 19), (9, 130, 5), (1, 1, 1))


def register_tiled(factory: Callable[[], Any], config: RegisterTiling = CONTRACT,
                   name: str = "make_gemm_register_tiled()") -> GemmKernel:
    """Build ``factory()`` and wrap it with the launch of ``config``."""
    if not callable(factory) or is_cuda_kernel(factory):
        raise NotAKernelError(
            "make_gemm_register_tiled must be a plain Python function that takes no arguments "
            f"and returns a @cuda.jit kernel, got {type(factory).__name__}")
    kernel = factory()
    _require_kernel(kernel, name)
    return config.wrap(kernel, name)


@replay.replayable
def check_register_tiled(factory: Callable[[], Any],
                         shapes: Sequence[Shape] | backend.ByKind | None = None,
                         seed: int | None = None, quiet: bool = False,
                         config: RegisterTiling = CONTRACT) -> GemmReport:
    """Check ``make_gemm_register_tiled`` on ragged shapes; raise GemmCheckError if wrong.

    Each shape gets fresh random inputs, guard regions around A, B and C (a read past A or B
    poisons the result, a write past C is seen) and C poisoned with a marked NaN, then a
    float64 comparison with a diagnosis of what went wrong (see :mod:`course.checks.gemm`).
    """
    gate.begin_check("check_register_tiled")
    kind = backend.require_runnable()
    chosen = cast("Sequence[Shape] | None", backend.resolve(shapes))
    shapes = tuple(chosen if chosen is not None else GPU_SHAPES if kind == "gpu" else SIM_SHAPES)
    rng = generator(seed)
    try:
        gk = register_tiled(factory, config)
    except NotImplementedError:
        raise not_written("make_gemm_register_tiled") from None
    # The course's one check loop: guard regions, poisoned C, diagnosis; the K-tail hint uses
    # this kernel's step along K (BK), its edges the block tile (BM).
    try:
        worst = run_cases(gk, shapes, rng, block=config.bm, k_step=config.bk)
    except ShapeFailedError as failed:
        raise _watched(gk, failed, kind) from None
    report = GemmReport(f"make_gemm_register_tiled ({config.describe()})", shapes, kind, worst)
    if not quiet:
        print(report)
    return report


def _watched(gk: GemmKernel, failed: ShapeFailedError, kind: str) -> GemmCheckError:
    """Wrong values no known mistake explains: on the simulator, one watched run of the failing
    shape says whether a thread read a tile element nobody of its block stored, or went
    without a barrier; otherwise the failure as it is."""
    if failed.named or kind != "simulator":
        return failed
    A, B = random_operands(*failed.shape, np.random.default_rng(0))
    try:
        _C, report = instrumented_run(gk, A, B)
    except Exception:  # noqa: BLE001 - the student's kernel may raise anything: keep the failure
        return failed
    if len(report.missing_barriers) == 1:
        why = missing_barrier_hint(next(iter(report.missing_barriers)))
    elif report.races or report.uninitialised:
        why = (report.races or report.uninitialised)[0]
    else:
        return failed
    return GemmCheckError(_("{name}: wrong values for M, N, K = {shape}, and a watched run on "
                            "the simulator saw why: {why}").format(name=gk.name,
                                                                  shape=failed.shape, why=why))


def sweep_model(factory: Callable[[], Any], config: RegisterTiling = CONTRACT,
                assumed_regs: int = 64) -> Any:
    """The register-tiled kernel as a row of the tile sweep (its launch ignores the tile).

    Without a GPU the model assumes ``assumed_regs`` registers per thread: TM·TN
    accumulators, TM + TN fragment values and the addresses (64 is a round guess for 4×4).
    """
    built: list[GemmKernel] = []

    def gemm(tile: int) -> GemmKernel:
        if not built:  # one kernel for every row: compiled (or simulated) once
            built.append(register_tiled(factory, config))
        return built[0]

    return KernelModel(
        name="register tiled", gemm=gemm, threads=lambda tile: config.threads,
        static_smem=lambda tile: config.smem_bytes,
        reads=lambda M, N, K, tile: config.reads(M, N, K), tile_dependent=False,
        assumed_regs=assumed_regs)
