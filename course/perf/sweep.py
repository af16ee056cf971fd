"""The tile sweep: one GEMM kernel at tiles 4, 8, 16 and 32, measured and modelled side by side.

A bigger tile reuses every element it loads more often (the modelled intensity grows about
like the tile), but it also takes more threads, registers and shared memory per block, so
fewer blocks fit on an SM. Whether the reuse or the lost parallelism wins is what this sweep
shows, row by row:

* the **occupancy model** of :mod:`course.gemm.occupancy` for a *target GPU*: your own GPU
  when there is one, or a named profile (``"T4"``, ``"A100"``, ``"H100"``, ``"H200"``). On a
  GPU the registers and shared memory come from the compiler (:func:`kernel_resources`);
  without one, shared memory is what the tile needs (2·tile²·4 B) and the registers are an
  *assumption*, said so in each row's note. A CUDA C kernel (a ``GEMM_TILED_CUDA`` string)
  always has real numbers: ``RawKernel.attributes`` on this machine's GPU, else ptxas'
  verbose lines from NVRTC compiling it for the target's architecture (no GPU needed);
* the **modelled intensity** of notebook 1's request model, flops / (reads·4 + M·N·4);
* on a GPU only, the **measured** time and GFLOP/s (:func:`course.perf.timing.time_gemm`).

Without a GPU nothing is measured, never made up: those fields are ``None`` and the note
says "needs a GPU". The sweep never waits for input; :mod:`course.perf.widgets` puts a panel
on top of the same :func:`run_sweep`, and :mod:`course.perf.sweep_table` shows the rows as a
table, a plot, and a per-GPU resource report.

What a row is made from, a kernel with the facts the model needs and the target GPU, is
:mod:`course.perf.kernel_models` (Numba and CUDA C kernels); which kernels a student wrote is
:func:`course.notebooks.tracks.load_week_kernels`; notebook 6's graded occupancy predictions
are :mod:`course.checks.gemm.occupancy`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from course.gemm.cudac import nvrtc
from course.gemm.launch import TILES, GemmKernel
from course.gemm.occupancy import (
    ResourcesUnavailableError,
    kernel_resources,
    theoretical_occupancy,
)
from course.perf.kernel_models import (
    BYTES,
    KernelModel,
    SweepKernel,
    Target,
    as_kernel_model,
    resolve_target,
)
from course.perf.timing import time_gemm
from course.runtime import backend
from course.runtime.i18n import N_, _

#: in English; shown as ``_(NEEDS_GPU)``.
NEEDS_GPU = N_("needs a GPU")


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


def _resources(gk: SweepKernel) -> tuple[int | None, int | None]:
    """(registers, static shared memory) from the compiler; (None, None) on the simulator, or
    for a kernel that is not Numba's (its model brings ``counts`` instead)."""
    if backend.detect().kind != "gpu" or not isinstance(gk, GemmKernel):
        return None, None
    import numpy as np
    from numba import cuda

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
        why = (_("no compiler without a GPU") if model.counts is None else
               _("NVRTC not found: {hint}").format(hint=nvrtc.INSTALL_HINT))
        notes.append(_("registers assumed: {count}/thread ({why})").format(count=regs_model,
                                                                            why=why))
    else:
        regs_model, smem_model = regs, smem if smem is not None else model.static_smem(tile)
        if counts is not None:
            notes.append(_("registers and shared memory from {source}").format(
                source=counts.source))
        elif not target.own:
            notes.append(_("registers from this GPU's compiler, applied to {target}").format(
                target=target.name))
    if not model.tile_dependent:
        notes.append(_("launch does not depend on the tile"))
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
            notes.append(_(NEEDS_GPU) if backend.detect().kind != "gpu" else _("not measured"))
    else:
        ms, gflops = float(timing.median_ms), float(timing.gflops)
        if not target.own:
            notes.append(_("measured on this machine's GPU, not on {target}").format(
                target=target.name))
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
    from tqdm.auto import tqdm  # optional, heavy: imported when used (import course stays light)

    return tqdm(total=total, desc=_("tile sweep"), leave=False)


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
    :class:`course.runtime.backend.NoGPUError`. ``progress`` shows a tqdm bar;
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
                        gk = model.gemm(tile)
                        if not isinstance(gk, GemmKernel):
                            raise TypeError(f"{model.name}: a kernel that is not Numba's needs "
                                            "its own timer in the KernelModel to be timed")
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


