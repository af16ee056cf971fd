"""The write-up experiment's result shown: a table beside the write-up's numbers
(:func:`format_table`) and a bar chart (:func:`plot_experiment`). The result comes from
:mod:`course.perf.experiment` (Numba) or :mod:`course.perf.cuda_experiment` (CUDA C).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from course.perf.experiment import (
    NAIVE,
    WRITEUP_RESULTS,
    ExperimentResult,
    WriteupNumbers,
    tiled_name,
)
from course.runtime.fonts import use_language_font
from course.runtime.i18n import _, pad, text_width

__all__ = ["format_table", "plot_experiment"]



def _fmt_ms(ms: float | None) -> str:
    return "—" if ms is None else f"{ms:.4f}"


def _fmt_rate(gflops: float | None) -> str:
    return "—" if gflops is None else f"{gflops:,.0f}"


def _fmt_diff(diff: float) -> str:
    return "0" if diff == 0 else f"{diff:.3g}"


def format_table(result: ExperimentResult, writeup: WriteupNumbers = WRITEUP_RESULTS) -> str:
    """A plain-text table of the result, with the write-up's numbers beside naive and tiled."""
    n = result.size
    what = (_("{count} launches per timing").format(count=result.iters) if result.timed
            else _("correctness only, nothing timed"))
    head = _("{n}×{n}×{n} FP32, the write-up's inputs, {what} — {device}").format(
        n=n, what=what, device=result.device)
    writeup_cols = {NAIVE: (writeup.naive_ms, writeup.naive_gflops)}
    if result.tile == writeup.tile:
        writeup_cols[tiled_name(writeup.tile)] = (writeup.tiled_ms, writeup.tiled_gflops)
    header = (_("implementation"), _("where"), _("avg ms"), "GFLOP/s", "max|diff|",
              _("write-up ms"), _("write-up GFLOP/s"))
    body = []
    for r in result.rows:
        s_ms, s_rate = writeup_cols.get(r.name, (None, None))
        body.append((r.name, r.where, _fmt_ms(r.avg_ms), _fmt_rate(r.gflops),
                     _fmt_diff(r.max_abs_diff), _fmt_ms(s_ms), _fmt_rate(s_rate)))
    widths = [max(text_width(row[i]) for row in (header, *body)) for i in range(len(header))]

    def line(cells: tuple[str, ...]) -> str:
        first = pad(cells[0], widths[0])
        rest = [pad(c, w, left=False) for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest])

    lines = [head, line(header), "  ".join("-" * w for w in widths)]
    lines += [line(row) for row in body]
    ratio = result.tiled_over_naive
    ratio_text = "—" if ratio is None else f"{ratio:.4f}×"
    lines.append(_("tiled / naive time: {ratio} (write-up: {writeup_ratio}); max|tiled − naive| "
                   "= {diff} (write-up: {writeup_diff})").format(
        ratio=ratio_text, writeup_ratio=f"{writeup.tiled_over_naive:.4f}×",
        diff=_fmt_diff(result.max_abs_diff_tiled_vs_naive),
        writeup_diff=_fmt_diff(writeup.max_abs_diff)))
    if result.size != writeup.size:
        lines.append(_("(the write-up ran at {size}³; its columns are for comparison only)"
                       ).format(size=writeup.size))
    lines += list(result.notes)
    return "\n".join(lines)


def plot_experiment(result: ExperimentResult, ax: Any = None,
                    writeup: WriteupNumbers = WRITEUP_RESULTS) -> Any:
    """Horizontal bars of GFLOP/s (log scale): your run, plus the write-up's two kernels,
    hatched."""
    import matplotlib.pyplot as plt  # optional: imported when used

    use_language_font()
    # A timed row has a speed unless its time rounded to 0, which a log scale cannot draw.
    timed = [r for r in result.rows if r.timed and r.gflops is not None]
    if not timed:
        raise ValueError(_("nothing in this result was timed (timings need a GPU): print "
                           "format_table(result) instead"))
    if ax is None:
        _fig, ax = plt.subplots(figsize=(8, 0.6 * (len(timed) + 2) + 1.2), layout="constrained")
    labels = [f"{r.name} [{r.where}]" for r in timed]
    values = [r.gflops for r in timed if r.gflops is not None]  # all of them (see timed)
    colors = ["tab:gray" if r.where == "CPU" else "tab:blue" for r in timed]
    hatches = [""] * len(timed)
    labels += [_("write-up: naive [{size}³]").format(size=writeup.size),
               _("write-up: tiled, tile {tile} [{size}³]").format(tile=writeup.tile,
                                                                 size=writeup.size)]
    values += [writeup.naive_gflops, writeup.tiled_gflops]
    colors += ["white", "white"]
    hatches += ["///", "///"]
    y = np.arange(len(labels))[::-1]
    bars = ax.barh(y, values, color=colors, edgecolor="black", height=0.6)
    for bar, hatch in zip(bars, hatches, strict=True):
        bar.set_hatch(hatch)
    for yi, v in zip(y, values, strict=True):
        ax.annotate(f"{v:,.0f}", (v, yi), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=9)
    ax.set_yticks(y, labels)
    ax.set_xscale("log")
    ax.set_xlim(min(values) / 2, max(values) * 4)
    ax.set_xlabel(_("GFLOP/s (log scale; higher is better)"))
    ax.set_title(_("FP32 GEMM {size}³ on {device}").format(size=result.size,
                                                          device=result.device), fontsize=10)
    ax.grid(True, axis="x", which="major", alpha=0.3)
    return ax

