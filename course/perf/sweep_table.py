"""The tile sweep's rows shown: a plain-text table, a plot, and a per-GPU resource report.

The rows come from :func:`course.perf.sweep.run_sweep` (or :func:`~course.perf.sweep.model_row`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from course.gemm.launch import TILES
from course.perf.kernel_models import as_kernel_model, resolve_target
from course.perf.sweep import SweepRow, model_row
from course.runtime.fonts import use_language_font
from course.runtime.i18n import _, pad, text_width

if TYPE_CHECKING:
    from matplotlib.axes import Axes  # optional: imported when used


def _fmt(value: Any, spec: str, missing: str = "—") -> str:
    return missing if value is None else format(value, spec)


def rows_to_table(rows: Sequence[SweepRow]) -> str:
    """A plain-text table of the rows (fixed-width, for print and the widget), notes below."""
    if not rows:
        return _("(no rows)")
    head = (_("kernel"), _("tile"), _("threads"), _("regs"), _("smem B"), _("blocks/SM"),
            _("warps/SM"), _("occupancy"), _("limited by"), _("AI model"), _("waves"), "ms",
            "GFLOP/s")
    body = []
    for r in rows:
        regs = str(r.regs_per_thread) if r.regs_per_thread is not None else f"{r.regs_in_model}*"
        body.append((r.kernel, str(r.tile), str(r.threads_per_block), regs,
                     f"{r.smem_per_block:,}", str(r.blocks_per_sm), str(r.warps_per_sm),
                     f"{r.occupancy:.0%}", r.limited_by, f"{r.modelled_ai:.2f}",
                     _fmt(r.waves, ".1f"), _fmt(r.measured_ms, ".3f"), _fmt(r.gflops, ",.0f")))
    widths = [max(text_width(h), *(text_width(b[i]) for b in body)) for i, h in enumerate(head)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(pad(c, w, i in (0, 8))
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    out = [_("target: {target}; size {size}³ (M = N = K)").format(target=rows[0].target,
                                                                 size=rows[0].size),
           line(head), line(["-" * w for w in widths])]
    out += [line(b) for b in body]
    notes = list(dict.fromkeys(f"{r.kernel}: {r.note}" for r in rows if r.note))
    if any(r.regs_per_thread is None for r in rows):
        out.append(_("* assumed register count (no GPU to ask the compiler)"))
    out += [_("note — {note}").format(note=n) for n in notes]
    return "\n".join(out)


def plot_sweep(rows: Sequence[SweepRow], ax: Axes | None = None) -> Axes:
    """GFLOP/s (or, unmeasured, the modelled intensity) and occupancy against the tile.

    Left axis, solid lines: measured GFLOP/s per kernel when every row was measured, else
    the modelled FLOP/byte. Right axis, dashed: theoretical occupancy in percent. Returns
    the left Axes (the right one is ``ax.right_axis``). Never calls ``plt.show()``.
    """
    import matplotlib.pyplot as plt  # optional: imported when used

    use_language_font()
    if not rows:
        raise ValueError(_("no rows to plot: run run_sweep first"))
    if ax is None:
        _fig, ax = plt.subplots(figsize=(7.5, 4.2), layout="constrained")
    right = ax.twinx()
    measured = all(r.gflops is not None for r in rows)
    kernels = list(dict.fromkeys(r.kernel for r in rows))
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, name in enumerate(kernels):
        mine = sorted((r for r in rows if r.kernel == name), key=lambda r: r.tile)
        x = [r.tile for r in mine]
        # measured: every row has gflops (the filter drops none; it narrows the type)
        y = ([r.gflops for r in mine if r.gflops is not None] if measured
             else [r.modelled_ai for r in mine])
        c = colors[i % len(colors)]
        ax.plot(x, y, "o-", color=c, lw=2, label=f"{name}: " + ("GFLOP/s" if measured
                                                               else _("modelled AI")))
        right.plot(x, [100 * r.occupancy for r in mine], "s--", color=c, alpha=0.6,
                   label=_("{kernel}: occupancy").format(kernel=name))
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({r.tile for r in rows}))
    ax.set_xticklabels([str(t) for t in sorted({r.tile for r in rows})])
    ax.set_xlabel(_("tile (threads per block = tile²)"))
    ax.set_ylabel(_("measured GFLOP/s") if measured else _("modelled intensity [FLOP/byte]"))
    ax.set_ylim(bottom=0)
    right.set_ylabel(_("theoretical occupancy [%]"))
    right.set_ylim(0, 105)
    where = _("measured") if measured else _("model only (no GPU)")
    ax.set_title(_("Tile sweep at {size}³ on {target}: {where}").format(
        size=rows[0].size, target=rows[0].target, where=where), fontsize=10)
    lines = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8, loc="lower right")
    ax.grid(alpha=0.3)
    ax.right_axis = right  # type: ignore[attr-defined]
    return ax


def resource_report(kernel: Any, profiles: Sequence[str] = ("T4", "H200"),
                    tiles: Iterable[int] = TILES) -> str:
    """Per target GPU and tile: registers and shared memory of ``kernel`` and the occupancy
    they give, with where the numbers come from (a plain-text table).

    For a CUDA C string these are the compiler's real numbers on any machine (ptxas through
    NVRTC for each target's architecture; ``RawKernel.attributes`` on this machine's GPU);
    for a Numba kernel without a GPU the registers are the sweep's assumption (marked ``*``).
    """
    model = as_kernel_model("tiled", kernel)
    head = (_("target"), _("tile"), _("threads"), _("regs"), _("smem B"), _("blocks/SM"),
            _("occupancy"), _("limited by"))
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
    widths = [max(text_width(h), *(text_width(b[i]) for b in body)) for i, h in enumerate(head)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(pad(c, w, i in (0, 7))
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    out = [line(head).rstrip(), line(["-" * w for w in widths]), *(line(b).rstrip() for b in body)]
    out += [_("note — {note}").format(note=n) for n in dict.fromkeys(sources) if n]
    return "\n".join(out)
