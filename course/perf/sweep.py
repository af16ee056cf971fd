"""The tile sweep: one GEMM kernel at tiles 4, 8, 16 and 32, measured and modelled side by side.

A bigger tile reuses every element it loads more often (the modelled intensity grows about
like the tile), but it also takes more threads, registers and shared memory per block, so
fewer blocks fit on an SM. Whether the reuse or the lost parallelism wins is what this sweep
shows, row by row:

* the **occupancy model** of :mod:`course.occupancy` for a *target GPU*: your own GPU when
  there is one, or a named profile (``"T4"``, ``"A100"``, ``"H100"``, ``"H200"``). On a GPU
  the registers and shared memory come from the compiler (:func:`kernel_resources`);
  without one, shared memory is what the tile needs (2·tile²·4 B) and the registers are an
  *assumption*, said so in each row's note. A CUDA C kernel (a ``GEMM_TILED_CUDA`` string)
  always has real numbers: ``RawKernel.attributes`` on this machine's GPU, else ptxas'
  verbose lines from NVRTC compiling it for the target's architecture (no GPU needed);
* the **modelled intensity** of notebook 1's request model, flops / (reads·4 + M·N·4);
* on a GPU only, the **measured** time and GFLOP/s (:func:`course.timing.time_gemm`).

Without a GPU nothing is measured, never made up: those fields are ``None`` and the note
says "needs a GPU". The sweep never waits for input; :mod:`course.widgets` puts a panel on
top of the same :func:`run_sweep`.

What a row is made from, a kernel with the facts the model needs and the target GPU, is
:mod:`course.kernel_models` (Numba and CUDA C kernels); which kernels a student wrote is
:func:`course.tracks.load_week_kernels` (re-exported here for notebook 6).

The checkers of notebook 6's occupancy exercise live here too
(:func:`check_blocks_per_sm_prediction`, :func:`check_occupancy_prediction`): they compare a
student's prediction with the model this sweep uses and name the rule a wrong answer missed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from course import backend, gate
from course.cudac import nvrtc
from course.kernel_models import (
    ASSUMED_REGS,
    BYTES,
    PROFILES,
    CompiledCounts,
    KernelModel,
    Target,
    as_kernel_model,
    available_profiles,
    cuda_c_model,
    cuda_counts,
    resolve_target,
)
from course.launch import TILES, GemmKernel
from course.occupancy import ARCH_LIMITS, ResourcesUnavailableError, theoretical_occupancy
from course.tracks import load_week_kernels

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "ASSUMED_REGS",
    "NEEDS_GPU",
    "PROFILES",
    "CompiledCounts",
    "KernelModel",
    "OccupancyPredictionError",
    "SweepRow",
    "Target",
    "as_kernel_model",
    "available_profiles",
    "check_blocks_per_sm_prediction",
    "cuda_c_model",
    "cuda_counts",
    "check_occupancy_prediction",
    "load_week_kernels",
    "model_row",
    "plot_sweep",
    "resource_report",
    "resolve_target",
    "rows_to_table",
    "run_sweep",
]

NEEDS_GPU = "needs a GPU"


# ---------------------------------------------------------------------------------------------
# One row.


@dataclass(frozen=True)
class SweepRow:
    """One kernel at one tile: what the model says and, on a GPU, what was measured."""

    kernel: str
    tile: int
    size: int  # M = N = K
    measured_ms: float | None  # median; None without a GPU
    gflops: float | None
    regs_per_thread: int | None  # from the compiler; None when it could not be asked
    regs_in_model: int  # what the occupancy model used (the compiler's, or the assumption)
    smem_per_block: int  # bytes (compiler's static shared memory, or 2·tile²·4)
    threads_per_block: int
    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float  # 0..1
    limited_by: str
    modelled_ai: float  # FLOP/byte, request model
    grid_blocks: int  # blocks in the launch
    waves: float | None  # grid blocks / (blocks per SM · SMs of the target); None if unknown
    target: str
    note: str


def _modelled_ai(reads: int, M: int, N: int, K: int) -> float:
    return 2.0 * M * N * K / ((reads + M * N) * BYTES)


def _resources(gk: GemmKernel) -> tuple[int | None, int | None]:
    """(registers, static shared memory) from the compiler; (None, None) on the simulator."""
    if backend.detect().kind != "gpu":
        return None, None
    import numpy as np
    from numba import cuda

    from course.occupancy import kernel_resources

    dA = cuda.to_device(np.zeros((2, 2), np.float32))
    try:
        res = kernel_resources(gk.kernel, dA, dA, dA)
    except (ResourcesUnavailableError, AttributeError, ValueError):
        return None, None
    return res.regs_per_thread, res.static_smem_bytes


def model_row(model: KernelModel, tile: int, size: int, target: Target,
              timing: Any | None = None, measured: bool = False,
              assumed_regs: int | None = None) -> SweepRow:
    """The model's row for one kernel at one tile (plus a timing, when one was taken).

    ``assumed_regs`` replaces the kernel's assumed register count when no compiler can be
    asked (to see how occupancy would change with more registers per thread).
    """
    gk = model.gemm(tile)
    cfg = gk.launch_for(size, size)
    threads = cfg.block[0] * cfg.block[1]
    counts = model.counts(tile, target) if model.counts is not None else None
    if model.counts is None:
        regs, smem = _resources(gk)
    elif counts is None:
        regs = smem = None
    else:
        regs, smem = counts.registers, counts.shared_bytes
    notes = []
    if regs is None:
        regs_model = assumed_regs if assumed_regs is not None else model.assumed_regs
        smem_model = model.static_smem(tile)
        why = ("no compiler without a GPU" if model.counts is None else
               f"NVRTC not found: {nvrtc.INSTALL_HINT}")
        notes.append(f"registers assumed: {regs_model}/thread ({why})")
    else:
        regs_model, smem_model = regs, smem if smem is not None else model.static_smem(tile)
        if counts is not None:
            notes.append(f"registers and shared memory from {counts.source}")
        elif not target.own:
            notes.append(f"registers from this GPU's compiler, applied to {target.name}")
    if not model.tile_dependent:
        notes.append("launch does not depend on the tile")
    try:
        occ = theoretical_occupancy(target.cc, threads, regs_model, smem_model)
        blocks, warps, frac, limit = (occ.blocks_per_sm, occ.warps_per_sm, occ.occupancy,
                                      occ.limited_by)
    except ValueError as exc:
        blocks, warps, frac, limit = 0, 0, 0.0, "does not fit"
        notes.append(str(exc))
    grid_blocks = cfg.grid[0] * cfg.grid[1]
    sms = target.spec.sm_count if target.spec else None
    waves = grid_blocks / (blocks * sms) if sms and blocks else None
    if timing is None:
        ms = gflops = None
        if not measured:
            notes.append(NEEDS_GPU if backend.detect().kind != "gpu" else "not measured")
    else:
        ms, gflops = float(timing.median_ms), float(timing.gflops)
        if not target.own:
            notes.append(f"measured on this machine's GPU, not on {target.name}")
    reads = model.reads(size, size, size, tile)
    return SweepRow(
        kernel=model.name, tile=tile, size=size, measured_ms=ms, gflops=gflops,
        regs_per_thread=regs, regs_in_model=regs_model, smem_per_block=smem_model,
        threads_per_block=threads, blocks_per_sm=blocks, warps_per_sm=warps, occupancy=frac,
        limited_by=limit, modelled_ai=_modelled_ai(reads, size, size, size),
        grid_blocks=grid_blocks, waves=waves, target=target.label, note="; ".join(notes))


# ---------------------------------------------------------------------------------------------
# The sweep.


def _progress_bar(total: int, enabled: bool) -> Any:
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc="tile sweep", leave=False)


def run_sweep(
    kernels: Mapping[str, Any],
    tiles: Iterable[int] = TILES,
    size: int = 1024,
    profile: str | None = None,
    progress: bool = True,
    measure: bool | None = None,
    repeats: int = 10,
    on_step: Callable[[int, int, SweepRow], None] | None = None,
    assumed_regs: int | None = None,
) -> list[SweepRow]:
    """Model (and on a GPU, time) every kernel at every tile; return one row per pair.

    ``kernels`` maps a label to ``gemm_naive``, ``make_gemm_tiled``, a CUDA C string
    (``GEMM_NAIVE_CUDA``, ``GEMM_TILED_CUDA``) or a :class:`KernelModel`. ``size`` is
    M = N = K. ``profile`` picks the target GPU of the model (see :func:`resolve_target`).
    ``measure`` defaults to "on a GPU"; asking for it without one raises
    :class:`course.backend.NoGPUError`. ``progress`` shows a tqdm bar;
    ``on_step(done, total, row)`` is called after each row (the widget's progress bar).
    ``assumed_regs`` overrides the registers per thread assumed where no compiler can be asked
    (default: each kernel's own assumption, :data:`ASSUMED_REGS` for naive and tiled).
    """
    tiles = tuple(tiles)
    bad = [t for t in tiles if t not in TILES]
    if bad or not tiles:
        raise ValueError(f"tiles must be some of {TILES}, got {tiles}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be a positive integer, got {size!r}")
    if measure is None:
        measure = backend.detect().can_time
    elif measure:
        backend.require_gpu("Measuring the sweep")
    target = resolve_target(profile)
    models = [as_kernel_model(name, obj) for name, obj in kernels.items()]
    total = len(models) * len(tiles)
    bar = _progress_bar(total, progress)
    rows: list[SweepRow] = []
    timed: dict[str, Any] = {}  # tile-independent kernels are timed once
    try:
        for model in models:
            for tile in tiles:
                timing = None
                if measure:
                    key = model.name if not model.tile_dependent else f"{model.name}@{tile}"
                    if key not in timed and model.timer is not None:
                        timed[key] = model.timer(tile, size, repeats)
                    elif key not in timed:
                        from course.timing import time_gemm

                        gk = model.gemm(tile)
                        timed[key] = time_gemm([gk], size, size, size, repeats=repeats)[gk.name]
                    timing = timed[key]
                row = model_row(model, tile, size, target, timing, measured=measure,
                                assumed_regs=assumed_regs)
                rows.append(row)
                if bar is not None:
                    bar.update(1)
                if on_step is not None:
                    on_step(len(rows), total, row)
    finally:
        if bar is not None:
            bar.close()
    return rows


# ---------------------------------------------------------------------------------------------
# Showing the rows.


def _fmt(value: Any, spec: str, missing: str = "—") -> str:
    return missing if value is None else format(value, spec)


def rows_to_table(rows: Sequence[SweepRow]) -> str:
    """A plain-text table of the rows (fixed-width, for print and the widget), notes below."""
    if not rows:
        return "(no rows)"
    head = ("kernel", "tile", "threads", "regs", "smem B", "blocks/SM", "warps/SM", "occupancy",
            "limited by", "AI model", "waves", "ms", "GFLOP/s")
    body = []
    for r in rows:
        regs = str(r.regs_per_thread) if r.regs_per_thread is not None else f"{r.regs_in_model}*"
        body.append((r.kernel, str(r.tile), str(r.threads_per_block), regs,
                     f"{r.smem_per_block:,}", str(r.blocks_per_sm), str(r.warps_per_sm),
                     f"{r.occupancy:.0%}", r.limited_by, f"{r.modelled_ai:.2f}",
                     _fmt(r.waves, ".1f"), _fmt(r.measured_ms, ".3f"), _fmt(r.gflops, ",.0f")))
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i in (0, 8) else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    out = [f"target: {rows[0].target}; size {rows[0].size}³ (M = N = K)", line(head),
           line(["-" * w for w in widths])]
    out += [line(b) for b in body]
    notes = list(dict.fromkeys(f"{r.kernel}: {r.note}" for r in rows if r.note))
    if any(r.regs_per_thread is None for r in rows):
        out.append("* assumed register count (no GPU to ask the compiler)")
    out += [f"note — {n}" for n in notes]
    return "\n".join(out)


def plot_sweep(rows: Sequence[SweepRow], ax: Axes | None = None) -> Axes:
    """GFLOP/s (or, unmeasured, the modelled intensity) and occupancy against the tile.

    Left axis, solid lines: measured GFLOP/s per kernel when every row was measured, else
    the modelled FLOP/byte. Right axis, dashed: theoretical occupancy in percent. Returns
    the left Axes (the right one is ``ax.right_axis``). Never calls ``plt.show()``.
    """
    import matplotlib.pyplot as plt

    if not rows:
        raise ValueError("no rows to plot: run run_sweep first")
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 4.2), layout="constrained")
    right = ax.twinx()
    measured = all(r.gflops is not None for r in rows)
    kernels = list(dict.fromkeys(r.kernel for r in rows))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, name in enumerate(kernels):
        mine = sorted((r for r in rows if r.kernel == name), key=lambda r: r.tile)
        x = [r.tile for r in mine]
        y = [r.gflops if measured else r.modelled_ai for r in mine]
        c = colors[i % len(colors)]
        ax.plot(x, y, "o-", color=c, lw=2, label=f"{name}: " + ("GFLOP/s" if measured
                                                               else "modelled AI"))
        right.plot(x, [100 * r.occupancy for r in mine], "s--", color=c, alpha=0.6,
                   label=f"{name}: occupancy")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({r.tile for r in rows}))
    ax.set_xticklabels([str(t) for t in sorted({r.tile for r in rows})])
    ax.set_xlabel("tile (threads per block = tile²)")
    ax.set_ylabel("measured GFLOP/s" if measured else "modelled intensity [FLOP/byte]")
    ax.set_ylim(bottom=0)
    right.set_ylabel("theoretical occupancy [%]")
    right.set_ylim(0, 105)
    where = "measured" if measured else "model only (no GPU)"
    ax.set_title(f"Tile sweep at {rows[0].size}³ on {rows[0].target}: {where}", fontsize=10)
    lines = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    ax.right_axis = right  # type: ignore[attr-defined]
    return ax


# ---------------------------------------------------------------------------------------------
# Checking a student's occupancy prediction (notebook 6).


class OccupancyPredictionError(AssertionError):
    """A student's blocks-per-SM or occupancy prediction disagrees with the model."""


Case = tuple[tuple[int, int], int, int, int]


def _blocks_variant(cc: tuple[int, int], threads: int, regs: int, smem: int, *,
                    quarters: bool = True, reg_rounding: bool = True, reserved: bool = True,
                    smem_rounding: bool = True, block_cap: bool = True,
                    warp_ceil: bool = True, per_thread_regs: bool = False) -> int:
    """Blocks per SM by the occupancy rules, with one rule optionally left out (for hints)."""
    lim = ARCH_LIMITS[cc]
    warps = math.ceil(threads / 32) if warp_ceil else max(threads // 32, 1)
    counts = [lim.max_warps_per_sm // warps]
    if per_thread_regs:
        counts.append(lim.regs_per_sm // max(regs * threads, 1))
    elif regs:
        per_warp = regs * 32
        if reg_rounding:
            per_warp = -(-per_warp // lim.reg_alloc_unit) * lim.reg_alloc_unit
        if quarters:
            q = lim.regs_per_sm // lim.reg_sub_partitions
            counts.append((q // per_warp) * lim.reg_sub_partitions // warps)
        else:
            counts.append(lim.regs_per_sm // (per_warp * warps))
    alloc = smem + (lim.smem_reserved_per_block if reserved else 0)
    if smem_rounding:
        alloc = -(-alloc // lim.smem_alloc_unit) * lim.smem_alloc_unit
    if alloc:
        counts.append(lim.smem_per_sm // alloc)
    if block_cap:
        counts.append(lim.max_blocks_per_sm)
    return min(counts)


_MISTAKES = (
    ({"reserved": False}, "the 1 KiB the driver reserves per block is missing: on sm_80 and "
     "newer every block takes its shared memory + 1024 B"),
    ({"smem_rounding": False}, "shared memory is allocated in units (256 B on sm_75, 128 B on "
     "sm_80+): round each block's bytes up before dividing"),
    ({"quarters": False}, "the register file is split into 4 quarters, one per warp scheduler, "
     "and a warp's registers come from one quarter: count warps per quarter first"),
    ({"reg_rounding": False}, "registers are allocated per warp in units of 256: round "
     "regs·32 up to a multiple of 256"),
    ({"per_thread_regs": True}, "registers go per warp (rounded up to 256) from one of 4 "
     "quarters, not per thread from one pool"),
    ({"block_cap": False}, "there is also a cap on resident blocks per SM (16 on sm_75, 32 "
     "on sm_80/sm_90)"),
    ({"warp_ceil": False}, "a block takes whole warps: round threads/32 up"),
)


def _check_cases(cases: Sequence[Case]) -> list[Case]:
    out = []
    for case in cases:
        cc, threads, regs, smem = case
        cc = tuple(int(x) for x in cc)
        if cc not in ARCH_LIMITS:
            raise ValueError(f"no occupancy limits for {cc}")
        out.append((cc, int(threads), int(regs), int(smem)))
    return out


def _call(fn: Callable[..., Any], case: Case, name: str) -> Any:
    try:
        return fn(*case)
    except NotImplementedError:
        raise OccupancyPredictionError(f"{name} is not written yet: replace "
                                       "`raise NotImplementedError()` with your code") from None


def _explain(case: Case, got: Any) -> str:
    correct = theoretical_occupancy(*case).blocks_per_sm
    for toggles, hint in _MISTAKES:
        try:
            alt = _blocks_variant(*case, **toggles)
        except (ZeroDivisionError, ValueError):
            continue
        if alt != correct and got == alt:
            return hint
    return ("work through each limit (warps, registers, shared memory, the block cap) and take "
            "the smallest")


def check_blocks_per_sm_prediction(fn: Callable[..., Any], cases: Sequence[Case],
                                   quiet: bool = False) -> None:
    """Compare ``predict_blocks_per_sm(cc, threads, regs, smem)`` with the occupancy model."""
    gate.begin_check("check_blocks_per_sm_prediction")
    for case in _check_cases(cases):
        occ = theoretical_occupancy(*case)
        got = _call(fn, case, "predict_blocks_per_sm")
        what = f"predict_blocks_per_sm({case[0]}, {case[1]}, {case[2]}, {case[3]})"
        if isinstance(got, bool) or not isinstance(got, int) and not (
                hasattr(got, "__index__")):
            raise OccupancyPredictionError(f"{what} returned {got!r}: return a whole number of "
                                           "blocks (an int; use // to divide)")
        if int(got) != occ.blocks_per_sm:
            raise OccupancyPredictionError(
                f"{what} returned {got}, which is not right: {_explain(case, int(got))}.")
    if not quiet:
        print(f"✓ predict_blocks_per_sm agrees with the occupancy model on {len(cases)} cases")


def check_occupancy_prediction(fn: Callable[..., Any], cases: Sequence[Case],
                               quiet: bool = False) -> None:
    """Compare ``predict_occupancy(cc, threads, regs, smem)`` (0..1) with the model."""
    gate.begin_check("check_occupancy_prediction")
    for case in _check_cases(cases):
        occ = theoretical_occupancy(*case)
        got = _call(fn, case, "predict_occupancy")
        what = f"predict_occupancy({case[0]}, {case[1]}, {case[2]}, {case[3]})"
        try:
            value = float(got)
        except (TypeError, ValueError):
            raise OccupancyPredictionError(f"{what} returned {got!r}: return a number between "
                                           "0 and 1") from None
        if math.isclose(value, occ.occupancy, rel_tol=1e-9, abs_tol=1e-9):
            continue
        lim = ARCH_LIMITS[case[0]]
        if math.isclose(value, 100 * occ.occupancy, rel_tol=1e-9):
            hint = "that is a percentage: return a fraction between 0 and 1"
        elif math.isclose(value, occ.blocks_per_sm * case[1] / (lim.max_warps_per_sm * 32),
                          rel_tol=1e-9):
            hint = ("you counted threads; count whole warps (a block of 48 threads takes 2 "
                    "warps)")
        elif math.isclose(value, occ.blocks_per_sm / lim.max_blocks_per_sm, rel_tol=1e-9):
            hint = "occupancy counts warps, not blocks: resident warps / max warps per SM"
        else:
            hint = "occupancy = (blocks per SM × warps per block) / max warps per SM"
        raise OccupancyPredictionError(f"{what} returned {got!r}, expected a different value: "
                                       f"{hint}")
    if not quiet:
        print(f"✓ predict_occupancy agrees with the occupancy model on {len(cases)} cases")


def resource_report(kernel: Any, profiles: Sequence[str] = ("T4", "H200"),
                    tiles: Iterable[int] = TILES) -> str:
    """Per target GPU and tile: registers and shared memory of ``kernel`` and the occupancy
    they give, with where the numbers come from (a plain-text table).

    For a CUDA C string these are the compiler's real numbers on any machine (ptxas through
    NVRTC for each target's architecture; ``RawKernel.attributes`` on this machine's GPU);
    for a Numba kernel without a GPU the registers are the sweep's assumption (marked ``*``).
    """
    model = as_kernel_model("tiled", kernel)
    head = ("target", "tile", "threads", "regs", "smem B", "blocks/SM", "occupancy",
            "limited by")
    body, sources = [], []
    for profile in profiles:
        target = resolve_target(profile)
        for tile in tiles:
            r = model_row(model, tile, 1024, target, measured=True)
            regs = (str(r.regs_per_thread) if r.regs_per_thread is not None
                    else f"{r.regs_in_model}*")
            body.append((target.label, str(tile), str(r.threads_per_block), regs,
                         f"{r.smem_per_block:,}", str(r.blocks_per_sm), f"{r.occupancy:.0%}",
                         r.limited_by))
            sources.append(r.note)
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i in (0, 7) else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    out = [line(head).rstrip(), line(["-" * w for w in widths]), *(line(b).rstrip() for b in body)]
    out += [f"note — {n}" for n in dict.fromkeys(sources) if n]
    return "\n".join(out)
