"""Correctness checks for the GEMM kernels, with messages that say what to fix.

Every check draws fresh random float32 inputs, poisons C with a marked NaN before the launch
(so an element the kernel never wrote is recognised as such), and compares against a float64
reference with a tolerance scaled to each element's size (float32 rounding grows with
K · Σ|a·b|). Shapes include the ragged cases that break tiled kernels: M, N, K not multiples
of the tile, K smaller than the tile, 1×1×1, tall-skinny and wide.

On a real GPU an out-of-bounds access raises nothing, so the arrays live inside *guard
regions*: A and B are surrounded by NaN (a read past them poisons the result) and C by a
sentinel (a write past it changes the sentinel). Tiled kernels are also run once on the
simulator (in a separate process when the notebook has a GPU), which stops at the first
out-of-bounds index and watches barriers (:mod:`course.instrument`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from course import backend, gate
from course.errors import not_written_yet
from course.launch import NAIVE_BLOCK, TILES, GemmKernel, check_operands, naive, tiled

Shape = tuple[int, int, int]

#: Unwritten-C marker and guard fill: quiet NaNs with payloads arithmetic never produces.
C_POISON_BITS = np.uint32(0x7FC0DEAD)
INPUT_GUARD_BITS = np.uint32(0x7FC0BEEF)
C_GUARD = np.float32(-12345.0)
GUARD = 64  # elements on each side

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


class GemmCheckError(AssertionError):
    """A kernel computed the wrong thing; the message says where and what to look at."""


@dataclass(frozen=True)
class GemmReport:
    """What a passed check covered."""

    kernel: str
    shapes: tuple[Shape, ...]
    backend: str
    max_rel_error: float

    def __str__(self) -> str:
        shapes = ", ".join(f"{m}×{n}×{k}" for m, n, k in self.shapes)
        return (f"✓ {self.kernel} is correct on {len(self.shapes)} shapes ({shapes}) "
                f"[{self.backend}; max relative error {self.max_rel_error:.1e}]")


def _nan_with(bits: np.uint32, shape: tuple[int, ...]) -> np.ndarray:
    return np.full(shape, bits, dtype=np.uint32).view(np.float32)


def random_operands(M: int, N: int, K: int, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    """Fresh A (M×K) and B (K×N), uniform in [-1, 1), float32, C-contiguous."""
    A = rng.uniform(-1, 1, size=(M, K)).astype(np.float32)
    B = rng.uniform(-1, 1, size=(K, N)).astype(np.float32)
    return A, B


def _guarded(data: np.ndarray, fill: np.ndarray) -> tuple[Any, Any]:
    """A device buffer [guard | data | guard] and the 2-D view of its middle."""
    from numba import cuda

    flat = np.concatenate([fill, data.ravel(), fill])
    dev = cuda.to_device(flat)
    view = dev[GUARD:GUARD + data.size].reshape(data.shape)
    return dev, view


def run_guarded(gk: GemmKernel, A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, bool]:
    """Launch with guard regions; return C and whether anything outside C was written."""
    M, N, _ = check_operands(A, B)
    in_guard = _nan_with(INPUT_GUARD_BITS, (GUARD,))
    _, dA = _guarded(A, in_guard)
    _, dB = _guarded(B, in_guard)
    c_dev, dC = _guarded(_nan_with(C_POISON_BITS, (M, N)), np.full(GUARD, C_GUARD, np.float32))
    gk.launch(dA, dB, dC)
    flat = c_dev.copy_to_host()
    outside = np.concatenate([flat[:GUARD], flat[GUARD + M * N:]])
    return flat[GUARD:GUARD + M * N].reshape(M, N), bool(np.any(outside != C_GUARD))


def _box(mask: np.ndarray) -> str:
    rows, cols = np.nonzero(mask)
    return f"C[{rows.min()}:{rows.max() + 1}, {cols.min()}:{cols.max() + 1}]"


def reference_and_tolerance(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A·B in float64 and, per element, how far a correct float32 kernel may be from it.

    float32 rounding grows with K and with the size of the terms summed, Σ|a·b|, so the
    tolerance is max(1e-4, 4·K·eps32) · (|A|·|B|) + 1e-6: loose enough for any order of
    summation, tight enough that a dropped term or a wrong index shows.
    """
    K = A.shape[1]
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    scale = np.abs(a64) @ np.abs(b64)
    return a64 @ b64, max(1e-4, 4 * K * np.finfo(np.float32).eps) * scale + 1e-6


def diagnose(C: np.ndarray, A: np.ndarray, B: np.ndarray, block: int,
             wrote_outside: bool = False, k_step: int | None = None) -> str | None:
    """Explain what is wrong with C = A·B as computed by a kernel, or None if it is right.

    ``block`` is the kernel's output tile (edges of C); ``k_step`` its step along K (the
    tile for the shared-memory kernel, BK for the register-tiled one).
    """
    M, K = A.shape
    N = B.shape[1]
    size = f"M={M}, N={N}, K={K}"
    a64, b64 = A.astype(np.float64), B.astype(np.float64)
    ref, tol = reference_and_tolerance(A, B)

    if wrote_outside:
        return (f"your kernel wrote outside C for {size}: test `row < M and col < N` before "
                "the store (threads of the last partial block fall outside C)")
    unwritten = C.view(np.uint32) == C_POISON_BITS
    if unwritten.all():
        return (f"C was never written for {size}: does the kernel store into C[row, col]? "
                "Is the bounds test the right way round?")
    if unwritten.any():
        full_r, full_c = (M // block) * block, (N // block) * block
        edge = full_r > 0 and full_c > 0 and unwritten[:full_r, :full_c].sum() == 0
        hint = ("only the last, partial blocks are missing: the grid must cover all of C "
                "(ceil division) and the bounds test must let row < M, col < N through"
                if edge else "check that row and col come from blockIdx·blockDim + threadIdx "
                "and that the bounds test before the store uses M and N")
        return f"{_box(unwritten)} was never written (still NaN) for {size}: {hint}"
    if not np.isfinite(C).all():
        bad = ~np.isfinite(C)
        return (f"{_box(bad)} holds NaN/inf for {size}, although the inputs are finite: the "
                "kernel read outside A or B (the memory around them holds NaN) or read a "
                "shared-memory element nobody stored. Pad out-of-range tile elements with 0.")
    err = np.abs(C - ref)
    bad = err > tol
    if not bad.any():
        return None
    if M == N and np.all(np.abs(C - ref.T) <= tol.T):
        return (f"C looks transposed for {size}: you computed C[col, row]. The contract maps "
                "x to columns: col = blockIdx.x·blockDim.x + threadIdx.x, row uses y")
    i, j = np.unravel_index(np.argmax(err - tol), err.shape)
    detail = (f"e.g. C[{i}, {j}] = {C[i, j]:.6g}, expected {ref[i, j]:.6g}; "
              f"{bad.sum()} of {bad.size} elements wrong, in {_box(bad)}")
    step = k_step or block
    how_many = "ceil(K / tile) tiles" if k_step is None else f"ceil(K / {step}) steps"
    kf = (K // step) * step
    if kf < K and np.all(np.abs(C - a64[:, :kf] @ b64[:kf]) <= tol):
        return (f"wrong values for {size} ({detail}): the last, partial step along K was "
                f"skipped — loop over {how_many} and zero-pad past K")
    full_r, full_c = (M // block) * block, (N // block) * block
    if full_r and full_c and not bad[:full_r, :full_c].any() and (full_r < M or full_c < N):
        return (f"wrong values for {size}, only in the last partial tiles ({detail}): "
                "tile elements past M, N or K must be loaded as 0, not skipped or read "
                "out of range")
    return f"wrong values for {size} ({detail}): compare your index arithmetic with the notes"


def _rng(seed: int | None) -> np.random.Generator:
    return np.random.default_rng(seed if seed is not None else int.from_bytes(os.urandom(8)))


def _default_shapes() -> tuple[Shape, ...]:
    return GPU_SHAPES if backend.detect().kind == "gpu" else SIM_SHAPES


def not_written(name: str) -> GemmCheckError:
    """The error for an answer that still raises NotImplementedError."""
    return GemmCheckError(f"{name} is not written yet: replace `raise NotImplementedError()` "
                          "with your kernel")


def _check_cases(gk: GemmKernel, shapes: Sequence[Shape], rng: np.random.Generator,
                 block: int, k_step: int | None = None) -> float:
    """Run every shape; raise GemmCheckError with a diagnosis on the first failure."""
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
            raise GemmCheckError(
                f"{gk.name} failed for M={M}, N={N}, K={K}: {exc}. An index out of range "
                "means a missing or wrong bounds test (threads of the last partial block, "
                "or tile elements past K)."
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
    :class:`course.errors.plain_errors` to see them as one line.
    """
    M, N, K = check_operands(A, B)
    C, outside = run_guarded(gk, A, B)
    problem = diagnose(C, A, B, gk.tile or NAIVE_BLOCK, outside)
    if problem is None:
        worst = float(np.abs(C - A.astype(np.float64) @ B.astype(np.float64)).max())
        print(f"✓ {gk.name}: C = A·B for M={M}, N={N}, K={K}, largest difference from NumPy "
              f"{worst:.1e}")
    elif (C.view(np.uint32) == C_POISON_BITS).all():
        print(f"✗ {gk.name} wrote no element of C: is it written yet? If it is, check the "
              "store into C and the bounds test before it.")
    else:
        print(f"✗ {gk.name}: {problem}")
    return C


def _require_runnable() -> str:
    b = backend.detect()
    if not b.can_run_kernels:
        raise backend.NoGPUError(f"kernels cannot run here: {b.reason}. {backend.COLAB_HINT}")
    return b.kind


def check_naive_gemm(kernel: Any, shapes: Sequence[Shape] | None = None,
                     seed: int | None = None, quiet: bool = False) -> GemmReport:
    """Check ``gemm_naive`` on ragged shapes; raise :class:`GemmCheckError` if it is wrong."""
    gate.begin_check("check_naive_gemm")
    kind = _require_runnable()
    gk = naive(kernel)
    shapes = tuple(shapes or _default_shapes())
    worst = _check_cases(gk, shapes, _rng(seed), block=16)
    report = GemmReport("gemm_naive", shapes, kind, worst)
    if not quiet:
        print(report)
    return report


def _simulator_inspection(factory: Callable[[int], Any], tile: int, shape: Shape,
                          seed: int) -> dict[str, Any]:
    """Run the instrumented simulator pass (in-process, or in a simulator subprocess)."""
    from course import isolated

    return isolated.inspect_tiled(factory, tile, shape, seed)


def check_tiled_gemm(factory: Callable[[int], Any], tiles: Sequence[int] = TILES,
                     shapes: Sequence[Shape] | None = None, seed: int | None = None,
                     barrier_shape: Shape | None = None, quiet: bool = False) -> GemmReport:
    """Check ``make_gemm_tiled`` for every tile on ragged shapes, barriers included."""
    gate.begin_check("check_tiled_gemm")
    kind = _require_runnable()
    rng = _rng(seed)
    shapes = tuple(shapes or _default_shapes())
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
            raise GemmCheckError(f"make_gemm_tiled({ptile}) for M, N, K = {probe}: {seen[key][0]}")
    big_tile_shapes = shapes[:1] if kind == "simulator" else shapes
    for tile in tiles:
        gk = tiled(factory, tile)
        worst = max(worst, _check_cases(gk, big_tile_shapes if tile >= SIM_BIG_TILE else shapes,
                                        rng, block=tile))
    covered = ", ".join(map(str, tiles))
    if kind == "simulator" and len(shapes) > 1 and any(t >= SIM_BIG_TILE for t in tiles):
        covered += f"; on the simulator tile {SIM_BIG_TILE} on the first shape only"
    report = GemmReport(f"make_gemm_tiled (tiles {covered})", shapes, kind, worst)
    if not quiet:
        print(report)
    return report
