"""Measured traffic in the notebooks: your kernels' bytes per memory level, from the counters.

Notebooks 3 and 3c (the tiled kernels), 4 (the write-up's experiment) and 5 (the week's
roofline) each make one call here. On a GPU whose counters can be read
(:mod:`course.perf.counters`), it prints each kernel's bytes at DRAM, L2 and L1 beside the
request model and draws the hierarchical roofline (:mod:`course.perf.hierarchy`). Anywhere else
it prints the sentence saying why nothing was measured and the model's numbers instead:
never an exception, never a made-up number. :func:`show_recorded_hierarchy` draws the table
recorded on a real GPU that ships with the course, for every student, GPU or not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from course.gemm.reads import naive_reads, tiled_reads
from course.notebooks.kernel_roofline import gemm_intensities
from course.perf.ceilings import Ceiling
from course.perf.counters import Counters, measure_traffic
from course.perf.hierarchy import LevelRoofs, plot_hierarchy, traffic_table
from course.perf.recorded import LEVELS, ROOF_SOURCES, RecordedRun, load_recorded
from course.runtime import backend
from course.runtime.devices import lookup
from course.runtime.i18n import _
from course.runtime.notes import note

#: the tiles whose traffic notebooks 3 and 5 measure.
TRAFFIC_TILES = (8, 16, 32)


def modelled_bytes(size: int, tiles: Sequence[int] = TRAFFIC_TILES, naive: bool = True
                   ) -> dict[str, float]:
    """The request model's bytes at ``size``³ in FP32 (A and B as requested, C written once),
    by label: ``{"naive": …, "tiled 8": …}``."""
    n = size
    out = {"naive": 4.0 * (naive_reads(n, n, n) + n * n)} if naive else {}
    for t in tiles:
        out[f"tiled {t}"] = 4.0 * (tiled_reads(n, n, n, t) + n * n)
    return out


def _model_only(size: int, tiles: Sequence[int], naive: bool) -> None:
    """No counters: the model's bytes and intensity, and what the counters would add."""
    print(_("So here is the request model alone (bytes a kernel asks for, no cache), at "
            "{size}³:").format(size=size))
    flops = 2.0 * size**3
    for label, nbytes in modelled_bytes(size, tiles, naive).items():
        print(_("  {label:9s} {gb:9.3f} GB requested, modelled intensity {ai:7.2f} "
                "FLOP/byte").format(label=label, gb=nbytes / 1e9, ai=flops / nbytes))
    print(_("With readable counters, the measured bytes at DRAM, L2 and L1 would stand beside "
            "these; notebook 5 (section 9) shows a table recorded on a real GPU."))


def level_roofs(counters: Counters, measured: Mapping[str, Ceiling] | None = None
                ) -> LevelRoofs | None:
    """The roofs to draw: DRAM and the FP32 peak as notebook 5 measured them where given (its
    ``measured`` ceilings), else Nsight Compute's DRAM peak and the GPU's datasheet FP32 peak;
    L2 and L1 always Nsight Compute's peaks (no datasheet gives them). None if a roof is
    missing."""
    measured = measured or {}
    bandwidth = dict(counters.peak_gbs)
    sources = {level: _(ROOF_SOURCES["ncu_peak"]) for level in bandwidth}
    if "copy" in measured:
        bandwidth["DRAM"] = measured["copy"].value_gbs
        sources["DRAM"] = _("measured in section 7 ({what})").format(what=measured["copy"].what)
    if "peak" in measured:
        peak, sources["peak"] = measured["peak"].value_gflops, _(
            "measured in section 7 ({what})").format(what=measured["peak"].what)
    else:
        spec = lookup(counters.device or backend.detect().device_name or "")
        if spec is None:
            return None
        peak, sources["peak"] = spec.fp32_peak_gflops, _("the {gpu} datasheet").format(
            gpu=spec.name)
    if any(level not in bandwidth for level in LEVELS):
        return None
    return LevelRoofs(peak, bandwidth, sources)


def _table_and_figure(runs: Sequence[RecordedRun], roofs: LevelRoofs | None, size: int,
                      title: str) -> None:
    """The runs' bytes beside the request model, then the roofs and the hierarchical roofline
    (each run also at its modelled intensity), for measured and recorded runs alike."""
    import matplotlib.pyplot as plt

    tiles = [r.tile for r in runs if r.tile is not None]
    print(traffic_table(runs, modelled_bytes(size, tiles, any(r.tile is None for r in runs))))
    if roofs is None:
        print(_("(no roof for every level here, so no hierarchical roofline)"))
        return
    print()
    print(roofs.describe())
    plot_hierarchy(runs, roofs, gemm_intensities(size, tiles), title=title)
    plt.show()


def show_measured_traffic(kernels: Any, size: int = 2048, tiles: Sequence[int] = TRAFFIC_TILES,
                          *, measured: Mapping[str, Ceiling] | None = None,
                          naive: bool = True) -> Counters:
    """Measure and show the traffic of a track's kernels at ``size``³: the naive kernel (unless
    ``naive=False``) and the tiled one at ``tiles``. ``kernels`` is ``(gemm_naive,
    make_gemm_tiled)``, ``(GEMM_NAIVE_CUDA, GEMM_TILED_CUDA)`` or a
    :class:`course.notebooks.tracks.TrackKernels` (None: nothing to measure, said so).
    ``measured``: notebook 5's ceilings, for the DRAM and peak roofs. Returns the counters
    (no runs, with the reason, where nothing was measured)."""
    if kernels is None:
        note("load_kernels_first")
        return Counters(reason=_("no kernels loaded"))
    if backend.autograding():
        note("skipped_while_grading")
        return Counters(reason=_("skipped while grading"))
    counters = measure_traffic(kernels, size, tiles, naive=naive)
    if not counters.measured:
        print(counters.reason)
        _model_only(size, tiles, naive)
        return counters
    print(_("Measured with {tool}, one launch per kernel, caches flushed before each:").format(
        tool=counters.tool))
    _table_and_figure(counters.runs, level_roofs(counters, measured), size, _(
        "Your kernels at {size}³ on {gpu}: measured traffic at every level").format(
            size=size, gpu=counters.device))
    return counters


def _ratio(a: float, b: float) -> str:
    return f"{a / b:,.1f}×" if b > 0 else "—"


def explain_writeup_traffic(naive: RecordedRun, tiled: RecordedRun) -> str:
    """What the counters say about the write-up's small speedup, in numbers: DRAM bytes of
    both kernels against one pass over A and B, and how many times fewer bytes the tiled
    kernel moves through L2 and L1."""
    once = 2.0 * naive.size**2 * 4
    return _(
        "DRAM: the naive kernel read {naive_dram}, the tiled one {tiled_dram}; A and B once "
        "are {once}. Both read the inputs about once: at {size}³ they fit in this GPU's L2, "
        "so tiling saves no DRAM traffic here. It saves it in the caches: {l2} fewer bytes "
        "through L2 and {l1} fewer through L1. The speedup, {speedup}, comes from there, "
        "not from DRAM.").format(
            naive_dram=f"{naive.dram_read / 1e6:,.1f} MB",
            tiled_dram=f"{tiled.dram_read / 1e6:,.1f} MB",
            once=f"{once / 1e6:,.1f} MB", size=naive.size, l2=_ratio(naive.l2, tiled.l2),
            l1=_ratio(naive.l1, tiled.l1), speedup=_ratio(naive.seconds, tiled.seconds))


def show_writeup_traffic(mine: Any, size: int = 1024, tile: int = 32) -> Counters:
    """Notebook 4: the write-up's two kernels (naive, tiled ``tile``) at ``size``³, measured,
    and what their bytes say about the speedup (:func:`explain_writeup_traffic`)."""
    counters = show_measured_traffic(mine, size, (tile,))
    if counters.measured:
        print()
        print(explain_writeup_traffic(counters.run("naive"), counters.run(f"tiled {tile}")))
    return counters


def show_recorded_hierarchy(track: str = "CUDA C", size: int = 2048) -> None:
    """The table shipped with the course (:mod:`course.perf.recorded`): its ``track``'s kernels
    at ``size``³, with the bytes, the roofs and the hierarchical roofline of the GPU they were
    recorded on. Runs anywhere: nothing is measured."""
    table = load_recorded()
    print(table.source())
    _table_and_figure([r for r in table.runs if r.track == track and r.size == size],
                      LevelRoofs(table.peak_gflops, table.bandwidths_gbs, table.roof_sources),
                      size, _("{track} kernels at {size}³ on an {gpu} (recorded {date})").format(
                          track=track, size=size, gpu=table.gpu, date=table.date))
