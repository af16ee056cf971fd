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
from course.gemm.launch import NAIVE_BLOCK, TILES, GemmKernel, check_operands, naive, tiled
from course.gemm.operands import (
    C_POISON_BITS,
    GemmCheckError,
    Shape,
    diagnose,
    random_operands,
    run_guarded,
)
from course.runtime import backend
from course.runtime.errors import not_written_message, not_written_yet
from course.runtime.i18n import _
from course.runtime.seeds import generator
from course.trust import gate, replay

#: Shapes for a real GPU and (scaled down) for the simulator, where every thread is a
#: Python thread. K > tile in some simulator shapes, so a missing second barrier shows.
GPU_SHAPES: tuple[Shape, ...] = (
    (1, 1, 1), (33, 20, 7), (64, 64, 64), (100, 37, 45), (5, 130, 33), (130, 3, 17),
    (17, 17, 100), (257, 129, 70),
)
SIM_SHAPES: tuple[Shape, ...] = ((1, 1, 1), (33, 20, 7), (19, 9, 37), (7, 40, 5), (40, 3, 11))
#: the tile at which barriers are watched on the simulator (cheap, and K spans several tiles).
RACE_PROBE_TILE = 8
#: On the simulator, tiles of at least this size run the first shape only: one such block is
#: 1,024 Python threads (about 0.7 s), the kernel's code is the same at every tile, and the
#: smaller tiles cover the ragged edges. On a GPU every tile runs every shape.
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


def run_cases(gk: GemmKernel, shapes: Sequence[Shape], rng: np.random.Generator,
              block: int, k_step: int | None = None) -> float:
    """Run ``gk`` on every shape; raise GemmCheckError with a diagnosis on the first failure.

    Returns the worst relative error (Frobenius norm) of the shapes that passed.
    """
    worst = 0.0
    for M, N, K in shapes:
        A, B = random_operands(M, N, K, rng)
        try:
            C, outside = run_guarded(gk, A, B)
        except NotImplementedError:
            raise not_written(gk.name) from None
        except (IndexError, RuntimeError) as exc:
            if not_written_yet(exc):
                raise not_written(gk.name) from None
            raise GemmCheckError(_(
                "{name} failed for M={M}, N={N}, K={K}: {error}. An index out of range means a "
                "missing or wrong bounds test (threads of the last partial block, or tile "
                "elements past K).").format(name=gk.name, M=M, N=N, K=K, error=exc)
            ) from None
        problem = diagnose(C, A, B, block, outside, k_step)
        if problem:
            raise GemmCheckError(f"{gk.name}: {problem}")
        ref = A.astype(np.float64) @ B.astype(np.float64)
        denom = np.linalg.norm(ref) or 1.0
        worst = max(worst, float(np.linalg.norm(C - ref) / denom))
    return worst


def try_gemm(gk: GemmKernel, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Run a kernel once on A and B (a "try it" cell) and print one line about the result.

    The launch is the checks' own (guard regions, C poisoned with a marked NaN), so a kernel
    not written yet on a GPU, which runs and writes nothing, is named as such instead of
    printing garbage. Exceptions propagate: wrap the call in
    :class:`course.runtime.errors.plain_errors` to see them as one line.
    """
    M, N, K = check_operands(A, B)
    C, outside = run_guarded(gk, A, B)
    problem = diagnose(C, A, B, gk.tile or NAIVE_BLOCK, outside)
    if problem is None:
        worst = float(np.abs(C - A.astype(np.float64) @ B.astype(np.float64)).max())
        print(_("✓ {name}: C = A·B for M={M}, N={N}, K={K}, largest difference from NumPy "
                "{worst}").format(name=gk.name, M=M, N=N, K=K, worst=f"{worst:.1e}"))
    elif (C.view(np.uint32) == C_POISON_BITS).all():
        print(_("✗ {name} wrote no element of C: is it written yet? If it is, check the store "
                "into C and the bounds test before it.").format(name=gk.name))
    else:
        print(f"✗ {gk.name}: {problem}")
    return C


@replay.replayable
def check_naive_gemm(kernel: Any, shapes: Sequence[Shape] | backend.ByKind | None = None,
                     seed: int | None = None, quiet: bool = False) -> GemmReport:
    """Check ``gemm_naive`` on ragged shapes; raise :class:`GemmCheckError` if it is wrong."""
    gate.begin_check("check_naive_gemm")
    kind = backend.require_runnable()
    gk = naive(kernel)
    shapes = tuple(cast("Sequence[Shape] | None", backend.resolve(shapes)) or _default_shapes())
    worst = run_cases(gk, shapes, generator(seed), block=16)
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
    # tile, and each simulated thread is a Python thread. K spans several tiles, so both
    # barriers matter.
    ptile = RACE_PROBE_TILE
    probe = barrier_shape or (ptile + 3, ptile + 1, 2 * ptile + 3)
    seen = _simulator_inspection(factory, ptile, probe, int(rng.integers(2**31)))
    if seen.get("error"):
        raise GemmCheckError(f"make_gemm_tiled({ptile}): {seen['error']}")
    for key in ("races", "uninitialised"):
        if seen[key]:
            raise GemmCheckError(_("make_gemm_tiled({tile}) for M, N, K = {shape}: {problem}"
                                   ).format(tile=ptile, shape=probe, problem=seen[key][0]))
    big_tile_shapes = shapes[:1] if kind == "simulator" else shapes
    for tile in tiles:
        gk = tiled(factory, tile)
        worst = max(worst, run_cases(gk, big_tile_shapes if tile >= SIM_BIG_TILE else shapes,
                                        rng, block=tile))
    covered = ", ".join(map(str, tiles))
    if kind == "simulator" and len(shapes) > 1 and any(t >= SIM_BIG_TILE for t in tiles):
        covered += _("; on the simulator tile {tile} on the first shape only").format(
            tile=SIM_BIG_TILE)
    report = GemmReport(_("make_gemm_tiled (tiles {tiles})").format(tiles=covered), shapes,
                        kind, worst)
    if not quiet:
        print(report)
    return report
