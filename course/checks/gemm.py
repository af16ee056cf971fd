"""Correctness checks for the GEMM kernels, with messages that say what to fix.

Every check draws fresh random float32 inputs, poisons C with a marked NaN before the launch
(so an element the kernel never wrote is recognised as such), and compares against a float64
reference with a tolerance scaled to each element's size (float32 rounding grows with
K · Σ|a·b|). Shapes include the ragged cases that break tiled kernels: M, N, K not multiples
of the tile, K smaller than the tile, 1×1×1, tall-skinny and wide.

The inputs, guard regions and the diagnosis of a wrong C are :mod:`course.gemm.operands`.
Tiled kernels are also run once on the simulator (in a separate process when the notebook has
a GPU), which stops at the first out-of-bounds index and watches barriers
(:mod:`course.gemm.inspection`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from course.checks.success_lines import PrintedReport
from course.gemm import inspection
from course.gemm.access import describe_access
from course.gemm.diagnosis import Seen, diagnose
from course.gemm.instrument import missing_barrier_hint
from course.gemm.launch import NAIVE_BLOCK, TILES, GemmKernel, check_operands, naive, tiled
from course.gemm.operands import (
    Access,
    GemmCheckError,
    Shape,
    random_operands,
    run_guarded,
)
from course.runtime import backend
from course.runtime.errors import not_written_message, not_written_yet
from course.runtime.i18n import _
from course.runtime.seeds import generator
from course.trust import gate, replay

#: Shapes for a real GPU and (scaled down) for the simulator, where every thread is
#: simulated in Python. K > tile in some simulator shapes, so a missing second barrier shows.
GPU_SHAPES: tuple[Shape, ...] = (
    (33, 20, 7), (64, 64, 64), (100, 37, 45), (5, 130, 33), (130, 3, 17), (17, 17, 100),
    (257, 129, 70), (1, 1, 1),
)
#: M ≠ N ≠ K first, larger than one block, so that a wrong kernel is first seen where causes
#: differ (on 1×1×1 a loop one short, an int accumulator and a skipped K step all give 0).
SIM_SHAPES: tuple[Shape, ...] = ((33, 20, 7), (19, 9, 37), (7, 40, 5), (40, 3, 11), (1, 1, 1))
#: the tile at which barriers are watched on the simulator (cheap, and K spans several tiles).
RACE_PROBE_TILE = 8
#: On the simulator, tiles of at least this size run one shape only (the smallest of the
#: default shapes, else the first one given): one such block is 1,024 simulated threads (about
#: 0.7 s), the kernel's code is the same at every tile, and the smaller tiles cover the ragged
#: edges. On a GPU every tile runs every shape.
SIM_BIG_TILE = 32


@dataclass(frozen=True)
class GemmReport(PrintedReport):
    """What a passed check covered."""

    kernel: str
    shapes: tuple[Shape, ...]
    backend: str
    max_rel_error: float

    def __str__(self) -> str:
        shapes = ", ".join(f"{m}×{n}×{k}" for m, n, k in self.shapes)
        return _("✓ {kernel} is correct on {count} shapes ({shapes}) [{backend}; max relative "
                 "error {error}]").format(kernel=self.kernel, count=len(self.shapes),
                                          shapes=shapes, backend=self.backend,
                                          error=f"{self.max_rel_error:.1e}")



def _default_shapes() -> tuple[Shape, ...]:
    return GPU_SHAPES if backend.detect().kind == "gpu" else SIM_SHAPES


def not_written(name: str) -> GemmCheckError:
    """The error for an answer that still raises NotImplementedError."""
    return GemmCheckError(not_written_message(name))


class ShapeFailedError(GemmCheckError):
    """A kernel failed on one shape (``shape``): the message says what was wrong there."""

    def __init__(self, message: str, shape: Shape, named: bool = True):
        super().__init__(message)
        self.shape = shape
        self.named = named  # whether the message names a cause (else: only what was seen)


def run_cases(gk: GemmKernel, shapes: Sequence[Shape], rng: np.random.Generator,
              block: int, k_step: int | None = None, naive_kernel: bool = False) -> float:
    """Run ``gk`` on every shape; raise GemmCheckError with a diagnosis on the first failure.

    Returns the worst relative error (Frobenius norm) of the shapes that passed.
    """
    worst = 0.0
    for M, N, K in shapes:
        A, B = random_operands(M, N, K, rng)
        seen: list[Access] = []
        try:
            C, outside = run_guarded(gk, A, B, seen=seen)
        except NotImplementedError:
            raise not_written(gk.name) from None
        except (IndexError, RuntimeError) as exc:
            if not_written_yet(exc):
                raise not_written(gk.name) from None
            raise ShapeFailedError(failed_message(gk, (M, N, K), exc, seen, block,
                                                  naive_kernel), (M, N, K)) from None

        def rerun(c0: np.ndarray, A: np.ndarray = A, B: np.ndarray = B
                  ) -> tuple[np.ndarray, bool | None]:
            return rerun_guarded(gk, A, B, c0)

        problem = diagnose(C, A, B, block, outside, k_step, naive=naive_kernel, rerun=rerun)
        if problem:
            raise ShapeFailedError(f"{gk.name}: {problem}", (M, N, K),
                                   named=not isinstance(problem, Seen))
        ref = A.astype(np.float64) @ B.astype(np.float64)
        denom = np.linalg.norm(ref) or 1.0
        worst = max(worst, float(np.linalg.norm(C - ref) / denom))
    return worst


def rerun_guarded(gk: GemmKernel, A: np.ndarray, B: np.ndarray, c0: np.ndarray
                  ) -> tuple[np.ndarray, bool | None]:
    """Run again with C starting as ``c0``: C, and whether A or B was read (None on a GPU)."""
    reads: list[int] = []
    watched = backend.detect().kind == "simulator"
    C = run_guarded(gk, A, B, c_init=c0, seen=[] if watched else None, reads=reads)[0]
    return C, bool(reads) if watched else None


def failed_message(gk: GemmKernel, shape: Shape, exc: BaseException, seen: list[Access],
                   out_tile: int, naive_kernel: bool) -> str:
    """A launch that raised: the access past an array's end the simulator saw, and what it
    tells; otherwise the error itself."""
    M, N, K = shape
    if not seen:
        return _("{name} failed for M={M}, N={N}, K={K}: {error}").format(
            name=gk.name, M=M, N=N, K=K, error=exc)
    block_dim = gk.launch_for(M, N).block
    return f"{gk.name}: " + describe_access(seen[0], shape, (block_dim[0], block_dim[1]),
                                            out_tile, naive_kernel)


def fixed_tile(factory: Callable[[int], Any], failed: ShapeFailedError, tile: int,
               tiles: Sequence[int], rng: np.random.Generator) -> GemmCheckError:
    """A tiled kernel wrong at ``tile`` in a way no known mistake explains: if it is right at
    another tile on the same shape, it does not follow ``tile`` everywhere, and that is the
    message; else the failure itself."""
    if failed.named:
        return failed
    for other in (t for t in tiles if t != tile and t < SIM_BIG_TILE):
        try:
            run_cases(tiled(factory, other), [failed.shape], rng, block=other, k_step=other)
        except GemmCheckError:
            continue
        return GemmCheckError(_("make_gemm_tiled({tile}) is wrong for M, N, K = {shape}, but "
                                "make_gemm_tiled({other}) is right there: the kernel does not "
                                "follow `tile` everywhere. Look for a fixed number where tile "
                                "belongs (a hard-coded 16?)").format(
                                    tile=tile, shape=failed.shape, other=other))
    return failed


def try_gemm(gk: GemmKernel, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Run a kernel once on A and B (a "try it" cell) and print one line about the result.

    The launch is the checks' own (guard regions, C poisoned with a marked NaN), so a kernel
    not written yet on a GPU, which runs and writes nothing, is named as such instead of
    printing garbage; what is wrong is the checks' own diagnosis. Exceptions propagate: wrap
    the call in :class:`course.runtime.errors.plain_errors` to see them as one line.
    """
    naive_kernel = gk.tile is None and gk.out_tile is None
    block = gk.out_tile or gk.tile or NAIVE_BLOCK
    k_step = gk.k_step or gk.tile
    M, N, K = check_operands(A, B)
    seen: list[Access] = []
    try:
        C, outside = run_guarded(gk, A, B, seen=seen)
    except IndexError as exc:
        if not seen:
            raise
        raise GemmCheckError(failed_message(gk, (M, N, K), exc, seen, block,
                                            naive_kernel)) from None
    problem = diagnose(C, A, B, block, outside, k_step, naive=naive_kernel,
                       rerun=lambda c0: rerun_guarded(gk, A, B, c0))
    print_try(gk.name, C, A, B, problem)
    return C


def print_try(name: str, C: np.ndarray, A: np.ndarray, B: np.ndarray, problem: str | None
              ) -> None:
    """The one line a try-it cell prints: ✓ with the largest difference, or ✗ and why."""
    M, K = A.shape
    N = B.shape[1]
    if problem is None:
        worst = float(np.abs(C - A.astype(np.float64) @ B.astype(np.float64)).max())
        print(_("✓ {name}: C = A·B for M={M}, N={N}, K={K}, largest difference from NumPy "
                "{worst}").format(name=name, M=M, N=N, K=K, worst=f"{worst:.1e}"))
    else:
        print(f"✗ {name}: {problem}")


@replay.replayable
def check_naive_gemm(kernel: Any, shapes: Sequence[Shape] | backend.ByKind | None = None,
                     seed: int | None = None, quiet: bool = False) -> GemmReport:
    """Check ``gemm_naive`` on ragged shapes; raise :class:`GemmCheckError` if it is wrong."""
    gate.begin_check("check_naive_gemm")
    kind = backend.require_runnable()
    gk = naive(kernel)
    shapes = tuple(cast("Sequence[Shape] | None", backend.resolve(shapes)) or _default_shapes())
    worst = run_cases(gk, shapes, generator(seed), block=NAIVE_BLOCK, naive_kernel=True)
    report = GemmReport("gemm_naive", shapes, kind, worst)
    if not quiet:
        print(report)
    return report


def _simulator_inspection(factory: Callable[[int], Any], tile: int, shape: Shape,
                          seed: int) -> dict[str, Any]:
    """Run the instrumented simulator pass (in-process, or in a simulator subprocess)."""
    return inspection.inspect_tiled(factory, tile, shape, seed)


@replay.replayable
def check_tiled_gemm(factory: Callable[[int], Any], tiles: Sequence[int] = TILES,
                     shapes: Sequence[Shape] | backend.ByKind | None = None,
                     seed: int | None = None, barrier_shape: Shape | None = None,
                     quiet: bool = False) -> GemmReport:
    """Check ``make_gemm_tiled`` for every tile on ragged shapes, barriers included."""
    gate.begin_check("check_tiled_gemm")
    kind = backend.require_runnable()
    rng = generator(seed)
    shapes = tuple(cast("Sequence[Shape] | None", backend.resolve(shapes)) or _default_shapes())
    worst = 0.0
    # Barriers first (a race can look like any other wrong value), watched on the simulator
    # at one small tile whatever tiles are checked: the kernel's code is the same for every
    # tile, and every thread is simulated in Python. K spans several tiles, so both
    # barriers matter.
    ptile = RACE_PROBE_TILE
    probe = barrier_shape or (ptile + 3, ptile + 1, 2 * ptile + 3)
    seen = _simulator_inspection(factory, ptile, probe, int(rng.integers(2**31)))
    if seen.get("error"):
        raise GemmCheckError(f"make_gemm_tiled({ptile}): {seen['error']}")
    missing = seen.get("missing_barriers") or []
    for key in ("races", "uninitialised"):
        if seen[key]:
            # a read before any store of its block, by a thread that went without a barrier,
            # is the barrier's doing, not missing padding
            problem = (missing_barrier_hint(missing[0])
                       if key == "uninitialised" and len(missing) == 1 else seen[key][0])
            raise GemmCheckError(_("make_gemm_tiled({tile}) for M, N, K = {shape}: {problem}"
                                   ).format(tile=ptile, shape=probe, problem=problem))
    one = (min(shapes, key=lambda s: s[0] * s[1] * s[2]),) if shapes == SIM_SHAPES else shapes[:1]
    big_tile_shapes = one if kind == "simulator" else shapes
    for tile in tiles:
        gk = tiled(factory, tile)
        try:
            worst = max(worst, run_cases(gk, big_tile_shapes if tile >= SIM_BIG_TILE else shapes,
                                            rng, block=tile, k_step=tile))
        except ShapeFailedError as failed:
            raise fixed_tile(factory, failed, tile, tiles, rng) from None
    covered = ", ".join(map(str, tiles))
    if kind == "simulator" and len(shapes) > 1 and any(t >= SIM_BIG_TILE for t in tiles):
        covered += _("; on the simulator tile {tile} on the {shape} shape only").format(
            tile=SIM_BIG_TILE, shape="×".join(map(str, one[0])))
    report = GemmReport(_("make_gemm_tiled (tiles {tiles})").format(tiles=covered), shapes,
                        kind, worst)
    if not quiet:
        print(report)
    return report
