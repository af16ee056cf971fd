"""The hierarchical roofline: one roof per memory level, each kernel at each level's intensity.

A plain roofline has one memory roof (DRAM) and places a kernel at one intensity. The caches
give every kernel as many intensities as there are levels: FLOPs over the bytes DRAM moved,
over the bytes through L2, over the bytes through L1. Drawn at the kernel's one measured speed,
those points lie on a horizontal line; under each sits its own level's roof (bandwidth × AI,
capped by the FP32 peak). The point closest to its roof shows the level that limits the kernel
most; a kernel far under every roof is held back by something the roofline does not draw
(latency, too few loads in flight, instruction issue). This follows Nsight Compute's
hierarchical roofline and NERSC's method (Yang et al., "Hierarchical Roofline Analysis").

:func:`traffic_table` prints measured bytes beside the request model; :func:`plot_hierarchy`
draws the figure. Neither decides a kernel's bound for the student: that is notebook 5's
exercise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from course.perf.recorded import LEVELS, RecordedRun
from course.perf.roofline import Roof
from course.runtime.fonts import use_language_font
from course.runtime.i18n import _, aligned_lines, pad

if TYPE_CHECKING:
    from matplotlib.axes import Axes

#: marker and line style of each level, the same in every figure of the week.
LEVEL_STYLE = {"DRAM": ("o", "-"), "L2": ("s", "--"), "L1": ("^", ":")}


@dataclass(frozen=True)
class LevelRoofs:
    """The FP32 peak [GFLOP/s] and each level's bandwidth [GB/s], with a sentence per number
    saying where it comes from (measured, Nsight Compute's peak, a datasheet)."""

    peak_gflops: float
    bandwidth_gbs: Mapping[str, float]
    sources: Mapping[str, str]

    def level(self, level: str) -> Roof:
        """The level's roof: its bandwidth under the one FP32 peak."""
        return Roof(level, self.peak_gflops, self.bandwidth_gbs[level])

    def describe(self) -> str:
        """One line per roof: its value and where it comes from."""
        lines = [_("FP32 peak {peak:,.0f} GFLOP/s: {source}").format(
            peak=self.peak_gflops, source=self.sources.get("peak", ""))]
        for level in LEVELS:
            if level in self.bandwidth_gbs:
                lines.append(_("{level} {bandwidth:,.0f} GB/s: {source}").format(
                    level=pad(level, 4), bandwidth=self.bandwidth_gbs[level],
                    source=self.sources.get(level, "")))
        return "\n".join(lines)


def _size(nbytes: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:,.2f} {unit}" if nbytes < 10 * scale else \
                f"{nbytes / scale:,.1f} {unit}"
    return f"{nbytes:,.0f} B"


def traffic_table(runs: Sequence[RecordedRun], modelled_bytes: Mapping[str, float]) -> str:
    """Each run's time, speed and bytes per level beside the request model's bytes (no cache)
    and the ratio L1 / model, as a fixed-width table (FP32, decimal units)."""
    head = (_("kernel"), _("time"), "GFLOP/s", _("DRAM read"), _("DRAM write"), "L2", "L1",
            _("model"), _("L1 / model"))
    rows = [head]
    for r in runs:
        model = modelled_bytes.get(r.label)
        rows.append((r.label, f"{r.seconds * 1e3:.3f} ms", f"{r.gflops:,.0f}", _size(r.dram_read),
                     _size(r.dram_write), _size(r.l2), _size(r.l1),
                     _size(model) if model else "—", f"{r.l1 / model:.3f}" if model else "—"))
    return "\n".join(aligned_lines(rows, rule=True))


def plot_hierarchy(runs: Sequence[RecordedRun], roofs: LevelRoofs,
                   modelled_ai: Mapping[str, float] | None = None, *, title: str = "",
                   ax: Axes | None = None, ai_range: tuple[float, float] = (1 / 64, 16384)
                   ) -> Axes:
    """The hierarchical roofline of ``runs``: a roof per level of ``roofs`` (line style per
    level), each run at its DRAM, L2 and L1 intensities (marker per level, colour per kernel)
    at its measured speed, joined by a thin line, and, if given, its modelled intensity as a
    hollow marker. Never calls ``plt.show()``."""
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    use_language_font()
    if ax is None:
        _fig, ax = plt.subplots(figsize=(10, 6), layout="constrained")
    lo, hi = ai_range
    x = np.geomspace(lo, hi, 400)
    ax.set_xscale("log")
    ax.set_yscale("log")
    speeds = [r.gflops for r in runs] or [roofs.peak_gflops / 10]
    for depth, level in enumerate(LEVELS):
        if level not in roofs.bandwidth_gbs:
            continue
        style = LEVEL_STYLE[level][1]
        roof = roofs.level(level)
        (line,) = ax.plot(x, roof.attainable(x), color="0.25", ls=style, lw=1.6)
        line.set_gid(f"roof-{level}")
        # The name sits left of its slope, each level a step lower than the one before.
        x_label = max(lo * 1.1, roof.ridge_ai / 3 / 2**depth)
        ax.annotate(_("{level} roof {bandwidth} GB/s").format(
            level=level, bandwidth=f"{roofs.bandwidth_gbs[level]:,.0f}"),
            (x_label, roof.attainable(x_label)), xytext=(-5, 0), ha="right",
            va="center", textcoords="offset points", fontsize=8, color="0.25",
            gid="roof-label")
    ax.axhline(roofs.peak_gflops, color="0.25", lw=1.6)
    ax.annotate(_("FP32 peak {peak} GFLOP/s").format(peak=f"{roofs.peak_gflops:,.0f}"),
                (hi, roofs.peak_gflops), ha="right", xytext=(0, 4), textcoords="offset points",
                fontsize=8, color="0.25")
    placed: list[float] = []  # label heights so far, so that equal speeds do not overprint
    for i, run in enumerate(runs):
        color = f"C{i}"
        ai = {level: run.flops / b for level, b in run.level_bytes.items() if b > 0}
        xs = [ai[level] for level in LEVELS if level in ai]
        ax.plot(xs, [run.gflops] * len(xs), color=color, lw=0.8, alpha=0.7)
        for level, value in ai.items():
            (point,) = ax.plot([value], [run.gflops], LEVEL_STYLE[level][0], color=color,
                               ms=8, mec="black")
            point.set_gid(f"measured-{level}")
        if modelled_ai and run.label in modelled_ai:
            (model,) = ax.plot([modelled_ai[run.label]], [run.gflops], "D", mfc="none",
                               mec=color, mew=1.8, ms=9)
            model.set_gid("modelled")
        shift = -11 * sum(1 for y in placed if abs(np.log10(y / run.gflops)) < 0.03)
        placed.append(run.gflops)
        ax.annotate(f"{run.label}: {run.gflops:,.0f} GFLOP/s", (max(xs), run.gflops),
                    xytext=(9, shift), textcoords="offset points", ha="left", va="center",
                    fontsize=8, color=color, gid="kernel-label")
    handles = [Line2D([], [], color="0.25", ls=LEVEL_STYLE[level][1], marker=LEVEL_STYLE[level][0],
                      mfc="white", mec="black", label=_("{level}: roof and intensity").format(
                          level=level)) for level in LEVELS if level in roofs.bandwidth_gbs]
    if modelled_ai:
        handles.append(Line2D([], [], ls="none", marker="D", mfc="none", mec="0.25",
                              label=_("request model (no cache)")))
    ax.legend(handles=handles, loc="lower right", fontsize="small")
    ax.set_xlim(lo, hi)
    ax.set_ylim(min(speeds) / 4, roofs.peak_gflops * 3)
    ax.set_xlabel(_("arithmetic intensity [FLOP/byte] at each level"))
    ax.set_ylabel(_("performance [GFLOP/s]"))
    ax.grid(True, which="major", alpha=0.3)
    if title:
        ax.set_title(title)
    return ax
