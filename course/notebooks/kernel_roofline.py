"""Your kernels on the roofline: time them, place them at their modelled intensity, draw it.

Notebooks 3, 5 and 7 end the same way: time some GEMM kernels (and cuBLAS) on a GPU, put
each at the intensity the request model gives it (:func:`modelled_ai`), and draw the points
under a roof. Each notebook makes one call here:

* :func:`plot_tiled_roofline` (notebook 3): the naive kernel and the tiled one at tiles 8, 16
  and 32, under the datasheet roof;
* :func:`plot_week_roofline` (notebook 5): vector add, the GEMM kernels of notebooks 2 and 3
  and cuBLAS, under the roof measured in that notebook and the datasheet's;
* :func:`plot_register_tiling` (notebook 7): the register-tiled kernel, the tile-32 kernel of
  notebook 3 and cuBLAS.

Without a GPU nothing is timed (the simulator's clock says nothing about a GPU): the first
two draw the roof of ``course.runtime.devices.DEFAULT_SIMULATOR_DEVICE`` with the highest speed each
modelled intensity allows there, and say that measured points need a GPU. While grading,
each says it is skipped. cuBLAS is timed by :func:`course.perf.ceilings.measure_fp32_peak`, the
one place the course times it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from course.checks.bonus import CONTRACT, RegisterTiling, register_tiled
from course.gemm.launch import GemmKernel, naive, tiled
from course.gemm.reads import naive_reads, tiled_reads
from course.notebooks.reuse import definitions_from
from course.notebooks.tracks import TrackKernels, load_gemm_kernels
from course.perf import ceilings
from course.perf.roof import ceilings_for_plot
from course.perf.roofline import KernelPoint, Roof, percent_of_roof, plot_roofline
from course.perf.timing import time_gemm
from course.runtime import backend
from course.runtime.devices import DATASHEET, DEFAULT_SIMULATOR_DEVICE, lookup
from course.runtime.errors import MissingAnswerError
from course.runtime.fonts import use_language_font
from course.runtime.i18n import _, pad, text_width
from course.runtime.notes import NOTES, note
from course.trust.code_policy import DisallowedCodeError

#: the tiles notebooks 3 and 5 time and plot.
GEMM_TILES = (8, 16, 32)
#: what a timing cell prints while the grader runs the notebook (translated when printed).
SKIPPED = NOTES["skipped_while_grading"]


def modelled_ai(reads: float, M: int, N: int | None = None, K: int | None = None,
                bytes_per_element: int = 4) -> float:
    """FLOP/byte of C (M×N) = A·B over K that requests ``reads`` elements of A and B and
    writes C once: 2·M·N·K / ((reads + M·N) · bytes_per_element). N and K default to M."""
    N = M if N is None else N
    K = M if K is None else K
    return 2 * M * N * K / ((reads + M * N) * bytes_per_element)


def gemm_intensities(size: int, tiles: Sequence[int] = GEMM_TILES) -> dict[str, float]:
    """``{"naive": …, "tiled 8": …}``: the request model's FP32 intensity at ``size``³."""
    out = {"naive": modelled_ai(naive_reads(size, size, size), size)}
    for t in tiles:
        out[f"tiled {t}"] = modelled_ai(tiled_reads(size, size, size, t), size)
    return out


def week_intensities(size: int) -> dict[str, float]:
    """Notebook 5's kernels: vector add (1/12), the GEMMs by the request model, and cuBLAS at
    the ideal intensity size/6 (each matrix moved once; its DRAM traffic is not measured)."""
    return {"vector add": 1 / 12, **gemm_intensities(size), "cuBLAS": size / 6}


def register_tiling_traffic(n: int) -> str:
    """Notebook 7's traffic table at ``n``³: what the tile-32 kernel, the exercise's register
    tiling (``CONTRACT``) and a larger one (128×128 blocks, 8×8 per thread) request of A and
    B, in GB of FP32, and the intensity each allows (:func:`modelled_ai`)."""
    rows = [(_("tiled, tile {tile}").format(tile=32), tiled_reads(n, n, n, 32)),
            (_("register tiled, {tiling}").format(tiling=CONTRACT.describe()),
             CONTRACT.reads(n, n, n))]
    larger = RegisterTiling(128, 128, 8, 8, 8)
    rows.append((_("register tiled, {tiling}").format(tiling=larger.describe()),
                 larger.reads(n, n, n)))
    width = max(text_width(label) for label, _reads in rows)
    return "\n".join(_("{label} {gb:6.2f} GB read, modelled intensity {ai:5.1f} FLOP/byte").format(
        label=pad(label, width), gb=reads * 4 / 1e9, ai=modelled_ai(reads, n))
        for label, reads in rows)


def load_kernels_or_explain(track: str | None = None, *, skip_while_grading: bool = False
                            ) -> TrackKernels | None:
    """Your kernels of notebooks 2 and 3 (:func:`course.notebooks.tracks.load_gemm_kernels`;
    ``track`` "Numba", "CUDA C" or None for whichever is written), or None with one line saying why
    not: missing, not written yet, refused by the grader's rules, or failing a 1×1×1
    product. Prints which kernels it uses. With ``skip_while_grading`` it loads nothing
    during grading (for notebooks that only time the kernels)."""
    if skip_while_grading and backend.autograding():
        note("skipped_while_grading")
        return None
    try:
        mine = load_gemm_kernels(track)
    except (MissingAnswerError, DisallowedCodeError) as exc:
        print(_("Could not use your kernels yet: {error}").format(error=exc))
        return None
    print(mine.describe())
    return mine


def _cublas_point(size: int) -> KernelPoint | None:
    """cuBLAS SGEMM at ``size``³ (TF32 off) at the ideal intensity, or None without CuPy."""
    try:
        rate = ceilings.measure_fp32_peak(size)
    except ceilings.MissingDependencyError as exc:
        print(exc)
        return None
    return KernelPoint("cuBLAS", size / 6, rate.value_gflops)


def _timed_points(gemms: Mapping[str, GemmKernel], intensities: Mapping[str, float], size: int,
                  batch: int = 1) -> list[KernelPoint]:
    """Time ``gemms`` (label → kernel) on the same inputs, median of 10 samples of ``batch``
    launches, and place each at its label's intensity. Prints one line per kernel."""
    timings = time_gemm(list(gemms.values()), size, size, size, repeats=10, batch=batch)
    points = []
    for label, timing in zip(gemms, timings.values(), strict=True):
        points.append(KernelPoint(label, intensities[label], timing.gflops))
        print(_("{label} modelled AI {ai:7.2f} FLOP/B  {ms:8.3f} ms  {gflops:9,.0f} "
                "GFLOP/s").format(label=pad(label, 9), ai=intensities[label],
                                  ms=timing.median_ms, gflops=timing.gflops))
    return points


def _can_time(intensities: Mapping[str, float], size: int) -> bool:
    """Whether a plot cell may time kernels; if not, say why (grading: skipped; no GPU: the
    modelled intensities under the simulator device's roof instead)."""
    if backend.autograding():
        note("skipped_while_grading")
        return False
    if not backend.detect().can_time:
        _show_modelled(intensities, size)
        return False
    return True


def _show_modelled(intensities: Mapping[str, float], size: int) -> None:
    """No GPU: the simulator device's datasheet roof, each intensity marked at its limit."""
    import matplotlib.pyplot as plt

    roof = Roof.from_spec(DATASHEET[DEFAULT_SIMULATOR_DEVICE])
    ax = plot_roofline(roof, title=_("Modelled intensities at {size}³ under a {machine} roof"
                                     ).format(size=size, machine=roof.name))
    for i, (label, ai) in enumerate(intensities.items(), start=1):
        limit = roof.attainable(ai)
        ax.axvline(ai, color=f"C{i}", ls=":", lw=1.5)
        ax.plot([ai], [limit], "o", mfc="none", mew=2, ms=9, color=f"C{i}")
        ax.annotate(_("{kernel}: ≤ {limit} GFLOP/s").format(kernel=label, limit=f"{limit:,.0f}"),
                    (ai, limit), xytext=(6, -14),
                    textcoords="offset points", fontsize=8, color=f"C{i}",
                    bbox={"fc": "white", "ec": "none", "alpha": 0.8, "pad": 1})
    plt.show()
    for label, ai in intensities.items():
        line = (_("{kernel} AI {ai} → at most {limit} GFLOP/s on a {machine} (memory-bound)")
                if ai < roof.ridge_ai else
                _("{kernel} AI {ai} → at most {limit} GFLOP/s on a {machine} (compute-bound)"))
        print(line.format(kernel=f"{label:10s}", ai=f"{ai:7.3f}",
                          limit=f"{roof.attainable(ai):7,.0f}", machine=roof.name))
    print(_("Measured points need a GPU: the simulator has no clock worth reading."))


def plot_tiled_roofline(gemm_naive: Any, make_gemm_tiled: Callable[[int], Any],
                        size: int = 2048) -> list[KernelPoint]:
    """Notebook 3: time the naive kernel and the tiled one at tiles 8, 16, 32 (``size``³,
    median of 10 launches) and draw them under the GPU's FP32 datasheet roof; tile 16 is
    printed but not drawn (it sits on top of tile 32). Returns the measured points (none
    without a GPU, where the modelled intensities are drawn instead)."""
    intensities = gemm_intensities(size)
    if not _can_time(intensities, size):
        return []
    b = backend.detect()
    import matplotlib.pyplot as plt

    gemms = {"naive": naive(gemm_naive)}
    gemms.update({f"tiled {t}": tiled(make_gemm_tiled, t) for t in GEMM_TILES})
    points = _timed_points(gemms, intensities, size)
    spec = lookup(b.device_name or "")
    if spec is None:
        print(_("course.tools.DATASHEET has no datasheet numbers for {gpu}: no roof to "
                "draw.").format(gpu=b.device_name))
        return points
    shown = [p for p in points if p.label != "tiled 16"]
    plot_roofline(Roof.from_spec(spec), shown,
                  title=_("Your kernels at {size}³ on {machine} (FP32 datasheet roof)").format(
                      size=size, machine=spec.name))
    plt.show()
    return points


def plot_week_roofline(measured: Mapping[str, ceilings.Ceiling], mine: TrackKernels | None,
                       size: int = 2048) -> list[KernelPoint]:
    """Notebook 5: vector add (from its ``measured["vector_add"]`` bandwidth), your Numba GEMM
    kernels (``mine``, timed at ``size``³: median of 10 samples of 3 launches) and cuBLAS under
    the measured roof (``measured["copy"]``, ``measured["peak"]``) and the datasheet's, with
    each point's percentage of the measured roof. Returns the measured points."""
    intensities = week_intensities(size)
    if not _can_time(intensities, size):
        return []
    b = backend.detect()
    import matplotlib.pyplot as plt

    roof, source = ceilings_for_plot(measured.get("copy"), measured.get("peak"))
    print(source)
    points = []
    if "vector_add" in measured:
        points.append(KernelPoint("vector add", intensities["vector add"],
                                  measured["vector_add"].timing.gflops))
    if mine is not None and not mine.is_cuda_c:
        gemms = {"naive": naive(mine.naive)}
        gemms.update({f"tiled {t}": tiled(mine.tiled, t) for t in GEMM_TILES})
        points += _timed_points(gemms, intensities, size, batch=3)
    cublas = _cublas_point(size)
    if cublas is not None:
        points.append(cublas)
    spec = lookup(b.device_name or "")
    roofs = [roof] + ([Roof("datasheet", spec.fp32_peak_gflops, spec.bandwidth_gbs)]
                      if spec else [])
    use_language_font()  # before the figure exists: its title and labels take the font then
    fig, ax = plt.subplots(figsize=(10, 6), layout="constrained")
    plot_roofline(roofs, points, ax=ax, title=_("Your kernels at {size}³ on {machine}").format(
        size=size, machine=b.device_name))
    plt.show()
    for p in points:
        side = _("Memory-bound") if p.ai < roof.ridge_ai else _("Compute-bound")
        # `{share:6.1%}`, not `{percent:5.1f} % of`: "% o" reads as a printf conversion to the
        # catalog's tools, which then refuse the translation's different "%" spacing.
        print(_("{label} AI {ai:7.3f}  {gflops:9,.0f} GFLOP/s  roof there {roof:9,.0f}  → "
                "{share:6.1%} of the roof ({side} side)").format(
            label=pad(p.label, 10), ai=p.ai, gflops=p.gflops, roof=roof.attainable(p.ai),
            share=percent_of_roof(p, roof) / 100, side=side))
    return points


def plot_register_tiling(make_gemm_register_tiled: Callable[[], Any],
                         size: int = 4096) -> list[KernelPoint]:
    """Notebook 7: time your register-tiled kernel (at the intensity of the contract's tiling,
    ``course.checks.bonus.CONTRACT``), the tile-32 kernel of notebook 3 if it is written, and cuBLAS
    at ``size``³ (median of 10 launches); print their TFLOP/s and draw them under the GPU's
    datasheet roof. Returns the points."""
    if backend.autograding():
        note("skipped_while_grading")
        return []
    if not backend.detect().can_time:
        print(_("Timing needs a GPU. On one, this cell times your kernel, your tile-32 kernel "
                "and cuBLAS at {size}³ and puts them on the roofline.").format(size=size))
        return []
    import matplotlib.pyplot as plt

    gemms = {"register tiled": register_tiled(make_gemm_register_tiled)}
    intensities = {"register tiled": modelled_ai(CONTRACT.reads(size, size, size), size),
                   "tiled 32": modelled_ai(tiled_reads(size, size, size, 32), size)}
    try:
        factory = definitions_from("03_tiled_gemm.ipynb", "make_gemm_tiled")["make_gemm_tiled"]
        gemms["tiled 32"] = tiled(factory, 32)
    except (MissingAnswerError, DisallowedCodeError, NotImplementedError) as exc:
        print(_("(your tiled kernel is left out: {error})").format(error=exc))
    points = _timed_points(gemms, intensities, size)
    cublas = _cublas_point(size)
    if cublas is not None:
        points.append(cublas)
    for p in points:
        print(f"{p.label:16s} {p.gflops / 1e3:6.1f} TFLOP/s")
    spec = lookup(backend.detect().device_name or "")
    if spec is not None:
        plot_roofline(Roof.from_spec(spec), points, title=_("{size}³ FP32 on {machine}").format(
            size=size, machine=spec.name))
        plt.show()
    return points
