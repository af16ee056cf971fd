"""Roofline plots for week 4.

The roofline model says a kernel with arithmetic intensity ``ai`` (FLOP per byte moved
to/from DRAM) can run at most ``min(peak, bandwidth * ai)``. Students write that formula
themselves in the notebook (the exercises ``attainable_gflops``, ``critical_ai`` and
``bound``), so this module deliberately exposes no functions of those names: it only holds
what they need to *see* their results: ``Roof`` and ``KernelPoint`` records, the plot, and
``percent_of_roof`` to say how far a measured kernel is from its ceiling.

Units: GFLOP/s for performance, GB/s (1e9 bytes/s) for bandwidth, FLOP/byte for intensity.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, overload

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.text import Annotation

from course.runtime.fonts import use_language_font
from course.runtime.i18n import N_, _

if TYPE_CHECKING:
    from course.runtime.devices import DeviceSpec

__all__ = ["KernelPoint", "Roof", "percent_of_roof", "plot_roofline"]

#: the axes, in English (shown in the student's language: ``_(AI_LABEL)``).
AI_LABEL = N_("Arithmetic intensity [FLOP/byte]")
PERF_LABEL = N_("Performance [GFLOP/s]")

# Shading for the classic "two bandwidths, one peak" lecture figure.
_REGION_COLORS = ("tab:blue", "tab:purple", "tab:red")
_REGION_ALPHA = 0.12
# Labels sit on a faint white box, so a roof line passing behind one does not hide it.
_LABEL_BOX = {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.75}
_Align = Literal["left", "center", "right"]  # a label's horizontal alignment


def _check_positive(name: str, value: float) -> None:
    """Raise ValueError naming ``name`` unless ``value`` is a finite number > 0."""
    if not (isinstance(value, int | float | np.number) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")


@dataclass(frozen=True)
class Roof:
    """One machine's ceiling: a compute peak and a DRAM bandwidth."""

    name: str
    peak_gflops: float
    bandwidth_gbs: float

    def __post_init__(self) -> None:
        _check_positive("peak_gflops", self.peak_gflops)
        _check_positive("bandwidth_gbs", self.bandwidth_gbs)

    @classmethod
    def from_spec(cls, spec: DeviceSpec) -> Roof:
        """The FP32 roof of a datasheet entry (see ``course.runtime.devices``)."""
        return cls(spec.name, spec.fp32_peak_gflops, spec.bandwidth_gbs)

    @property
    def ridge_ai(self) -> float:
        """Intensity [FLOP/byte] where the memory slope meets the compute peak."""
        return self.peak_gflops / self.bandwidth_gbs

    @overload
    def attainable(self, ai: float) -> float: ...

    @overload
    def attainable(self, ai: np.ndarray) -> np.ndarray: ...

    def attainable(self, ai: float | np.ndarray) -> float | np.ndarray:
        """Roof height [GFLOP/s] at intensity ``ai`` (scalar in, float out; array in, array out).

        Only used to draw the plot and to compute ``percent_of_roof``.
        """
        arr = np.asarray(ai, dtype=float)
        if arr.size == 0 or not np.all(np.isfinite(arr) & (arr > 0)):
            raise ValueError(f"ai must be positive finite FLOP/byte values, got {ai!r}")
        out = np.minimum(self.peak_gflops, self.bandwidth_gbs * arr)
        return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class KernelPoint:
    """A measured (or hypothetical) kernel: its intensity and achieved performance."""

    label: str
    ai: float
    gflops: float

    def __post_init__(self) -> None:
        _check_positive("ai", self.ai)
        _check_positive("gflops", self.gflops)


def percent_of_roof(point: KernelPoint, roof: Roof) -> float:
    """How much of the roof at the point's intensity the kernel reaches, in percent."""
    return 100.0 * point.gflops / roof.attainable(point.ai)


def plot_roofline(
    roofs: Roof | Sequence[Roof],
    points: Sequence[KernelPoint] = (),
    ax: Axes | None = None,
    shade_regions: bool = False,
    ai_range: tuple[float, float] = (1 / 32, 1024),
    title: str | None = None,
) -> Axes:
    """Draw a log-log roofline with optional kernel points and return the Axes.

    Each roof is a sloped memory line up to its ridge and a flat compute line after it, in
    one colour, with the ridge marked and labelled. Each point is labelled with its
    percentage of the *first* roof (the machine the kernels ran on). ``shade_regions``
    shades memory-/compute-bound regions: for one roof two regions, for two roofs with the
    same peak and different bandwidths the three regions of the classic lecture figure.
    Never calls ``plt.show()``.
    """
    roofs = [roofs] if isinstance(roofs, Roof) else list(roofs)
    if not roofs:
        raise ValueError("roofs must contain at least one Roof")
    lo, hi = ai_range
    _check_positive("ai_range[0]", lo)
    _check_positive("ai_range[1]", hi)
    if lo >= hi:
        raise ValueError(f"ai_range must be increasing, got {ai_range!r}")
    use_language_font()
    if ax is None:
        _fig, ax = plt.subplots(figsize=(7.5, 5), layout="constrained")

    ax.set_xscale("log")
    ax.set_yscale("log")
    if shade_regions:
        _shade_regions(ax, roofs, lo, hi)
    for i, roof in enumerate(roofs):
        _draw_roof(ax, roof, f"C{i}", lo, hi)
    for j, point in enumerate(points):
        _draw_point(ax, point, roofs, f"C{len(roofs) + j}")

    y_lo = min([r.attainable(lo) for r in roofs] + [p.gflops for p in points]) / 2
    y_hi = max(r.peak_gflops for r in roofs) * 4
    ax.set_xlim(lo, hi)
    ax.set_ylim(y_lo, y_hi)
    ax.set_xlabel(_(AI_LABEL))
    ax.set_ylabel(_(PERF_LABEL))
    ax.grid(True, which="major", alpha=0.3)
    if title:
        ax.set_title(title)
    ax.legend(loc="lower right", fontsize="small")
    _separate_labels(ax)
    return ax


def _draw_roof(ax: Axes, roof: Roof, color: str, lo: float, hi: float) -> None:
    """Memory slope up to the ridge, flat compute line after it, a labelled ridge marker."""
    ridge = roof.ridge_ai
    label = f"{roof.name}: {_fmt(roof.peak_gflops)} GFLOP/s, {_fmt(roof.bandwidth_gbs)} GB/s"
    x_mem = np.array([lo, min(max(ridge, lo), hi)])
    x_cmp = np.array([min(max(ridge, lo), hi), hi])
    (mem,) = ax.plot(x_mem, roof.bandwidth_gbs * x_mem, color=color, lw=2, label=label)
    (cmp,) = ax.plot(x_cmp, [roof.peak_gflops] * 2, color=color, lw=2)
    mem.set_gid("roof-memory")
    cmp.set_gid("roof-compute")
    if lo <= ridge <= hi:
        (marker,) = ax.plot([ridge], [roof.peak_gflops], "o", color=color, ms=7, mec="black")
        marker.set_gid("ridge")
        # Above the roof: measured kernels always sit below it, so this space stays free.
        ax.annotate(
            _("ridge: {ai} FLOP/B").format(ai=_fmt(ridge)), (ridge, roof.peak_gflops),
            xytext=(0, 8),
            textcoords="offset points", ha="center", color=color, fontsize=9,
            gid="ridge-label", bbox=_LABEL_BOX,
        )


def _draw_point(ax: Axes, point: KernelPoint, roofs: list[Roof], color: str) -> None:
    """A marker for the kernel, a dotted gap up to its roof, and 'label: N% of roof'."""
    roof = roofs[0]
    pct = percent_of_roof(point, roof)
    label = (_("{kernel}: {percent} of roof") if len(roofs) == 1 else
             _("{kernel}: {percent} of {machine} roof")).format(
        kernel=point.label, percent=f"{pct:.0f}%", machine=roof.name)
    (marker,) = ax.plot([point.ai], [point.gflops], "D", color=color, ms=7, mec="black")
    marker.set_gid("kernel")
    ceiling = roof.attainable(point.ai)
    if ceiling > point.gflops:
        (gap,) = ax.plot([point.ai] * 2, [point.gflops, ceiling], ":", color=color, lw=1.5)
        gap.set_gid("gap")
    ax.annotate(
        label, (point.ai, point.gflops),
        xytext=(7, -4), textcoords="offset points", color=color, fontsize=9,
        fontweight="bold", gid="kernel-label", bbox=_LABEL_BOX,
    )


def _separate_labels(ax: Axes) -> None:
    """Move ridge and kernel labels apart so that none covers another label or a marker.

    Where a label lands on screen is known only after a draw (the layout engine sizes the
    axes), so the figure is drawn once. Then, one label at a time, each takes the first
    free place among its candidates: a kernel label right of its marker, else left of it,
    else further down on the right, then on the left; a ridge label above its marker, else
    further up. "Free" means inside the axes and over no marker or label placed before it,
    so kernels with close intensities and speeds (tiles 16 and 32, say) stay readable.
    """
    fig = ax.figure
    labels = [t for gid in ("ridge-label", "kernel-label") for t in ax.texts
              if isinstance(t, Annotation) and t.get_gid() == gid]  # all made by ax.annotate
    for text in labels:
        text.set_in_layout(False)  # moving a label must not resize the axes again
    try:
        fig.canvas.draw()
        # Only Agg canvases (inline, ipympl, PNG) hand out the renderer they drew with.
        get_renderer = getattr(fig.canvas, "get_renderer", None)
        renderer = get_renderer() if get_renderer is not None else None
    except Exception:  # noqa: BLE001 - a canvas that cannot draw off-screen: keep the defaults
        return
    if renderer is None:
        return
    frame = ax.get_window_extent(renderer)
    taken = [line.get_window_extent(renderer).padded(2) for line in ax.lines
             if line.get_gid() in ("ridge", "kernel")]

    def fits(box) -> bool:
        return (frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0
                and box.y1 <= frame.y1 and not any(box.overlaps(other) for other in taken))

    for text in labels:
        step = float(text.get_fontsize())  # points (typed float | str; a Text gives a float)
        candidates: list[tuple[tuple[float, float], _Align]]
        if text.get_gid() == "ridge-label":
            candidates = [((0, 8 + k * step), "center") for k in range(8)]
        else:
            candidates = [((side * 7, -4 - k * step), "left" if side > 0 else "right")
                          for k in range(8) for side in (1, -1)]
        first = (text.xyann, text.get_horizontalalignment())
        for offset, align in [*candidates, first]:  # nothing free: back to the first choice
            text.xyann = offset
            text.set_horizontalalignment(align)
            box = text.get_window_extent(renderer)
            if fits(box):
                break
        taken.append(box.padded(1))


def _shade_regions(ax: Axes, roofs: list[Roof], lo: float, hi: float) -> None:
    """Shade bound regions; refuse combinations where the regions would be meaningless."""
    if len(roofs) == 1:
        ridge = roofs[0].ridge_ai
        spans = [(lo, ridge, _("memory-bound")), (ridge, hi, _("compute-bound"))]
        colors: tuple[str, ...] = (_REGION_COLORS[0], _REGION_COLORS[2])
    elif len(roofs) == 2 and math.isclose(roofs[0].peak_gflops, roofs[1].peak_gflops) and (
        not math.isclose(roofs[0].bandwidth_gbs, roofs[1].bandwidth_gbs)
    ):
        low, high = sorted(r.ridge_ai for r in roofs)
        spans = [
            (lo, low, _("memory-bound on both")),
            (low, high, _("bandwidth-dependent")),
            (high, hi, _("compute-bound on both")),
        ]
        colors = _REGION_COLORS
    else:
        raise ValueError(
            "shade_regions needs one roof, or two roofs with the same peak_gflops "
            "and different bandwidth_gbs"
        )
    for (x0, x1, label), color in zip(spans, colors, strict=True):
        if x1 > x0:
            patch = ax.axvspan(x0, x1, color=color, alpha=_REGION_ALPHA, lw=0, label=label)
            patch.set_gid("region")


def _fmt(x: float) -> str:
    """Compact number for labels: 3 significant digits, no trailing zeros, no exponent."""
    return f"{x:,.0f}" if x >= 1000 else f"{x:.3g}"
