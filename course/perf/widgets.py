"""An interactive panel over the tile sweep (:func:`course.perf.sweep.run_sweep`), for notebook 6.

Pick a tile and see at once what the occupancy model says about one block of that kernel on
the chosen GPU; press "Run sweep" to model (and, on a GPU, time) every tile, with a progress
bar, a table and a plot of GFLOP/s (or modelled intensity) and occupancy against the tile.

Works with ipywidgets 7.7 (Colab) and 8: only core widgets, ``observe(..., names="value")``,
``on_click`` and ``add_class``. Every control has its own CSS class (``week4-…``) so tests can
find it. Under ``nbgrader autograde`` (:func:`course.runtime.backend.autograding`) nothing
interactive is built: :func:`sweep_panel` returns a :class:`StaticSummary` of the model-only
sweep instead, so no cell waits for a human. Without widgets, the same sweep is one call of
:func:`course.perf.sweep.run_sweep`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from course.gemm.launch import TILES
from course.perf.kernel_models import (
    ASSUMED_REGS,
    as_kernel_model,
    available_profiles,
    resolve_target,
)
from course.perf.sweep import SweepRow, model_row, run_sweep
from course.perf.sweep_table import plot_sweep, rows_to_table
from course.runtime import backend
from course.runtime.fonts import use_language_font
from course.runtime.i18n import _

__all__ = ["SIZES", "StaticSummary", "rows_to_html", "single_tile_html", "sweep_panel"]

SIZES = (256, 512, 1024, 2048, 4096)
_CSS = """<style>
.week4-panel { border: 1px solid #d0d7de; border-radius: 6px; padding: 8px 12px;
               background: #fafbfc; max-width: 980px; }
.week4-title { font-size: 15px; }
.week4-model { background: #ffffff; border-left: 4px solid #2f81f7; padding: 2px 10px;
               margin: 4px 0; }
.week4-model .widget-html-content { line-height: 1.35; }
</style>"""


@dataclass(frozen=True)
class StaticSummary:
    """What the panel shows when nobody can click: the model-only sweep as text."""

    text: str
    rows: tuple[SweepRow, ...]

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__


def single_tile_html(row: SweepRow) -> str:
    """The model for one kernel at one tile, as compact HTML (the panel's live view)."""
    regs = (_("{count} (compiler)").format(count=row.regs_per_thread)
            if row.regs_per_thread is not None
            else _("{count} (assumed)").format(count=row.regs_in_model))
    waves = "—" if row.waves is None else f"{row.waves:.1f}"
    cells = [
        (_("threads / block"), _("{threads} ({warps} warps)").format(
            threads=row.threads_per_block, warps=math.ceil(row.threads_per_block / 32))),
        (_("registers / thread"), regs),
        (_("shared memory / block"), f"{row.smem_per_block:,} B"),
        (_("blocks / SM"), f"<b>{row.blocks_per_sm}</b>"),
        (_("warps / SM"), f"{row.warps_per_sm}"),
        (_("occupancy"), _("<b>{occupancy}</b>, limited by <b>{limit}</b>").format(
            occupancy=f"{row.occupancy:.0%}", limit=row.limited_by)),
        (_("modelled intensity"), _("{ai} FLOP/B at {size}³").format(
            ai=f"{row.modelled_ai:.2f}", size=row.size)),
        (_("grid blocks / waves"), f"{row.grid_blocks:,} / {waves}"),
    ]
    grid = "".join(f"<span style='color:#57606a'>{html.escape(k)}</span><span>{v}</span>"
                   for k, v in cells)
    note = (f"<div style='color:#57606a;font-size:11px;margin-top:3px'>"
            f"{html.escape(row.note)}</div>" if row.note else "")
    return ("<div style='line-height:1.35;padding:4px 0'>"
            "<div style='margin-bottom:3px'>"
            + _("<b>{kernel}</b>, tile {tile}, on {target}").format(
                kernel=html.escape(row.kernel), tile=row.tile, target=html.escape(row.target))
            + "</div>"
            "<div style='display:grid;grid-template-columns:repeat(4, max-content);"
            f"gap:1px 14px'>{grid}</div>{note}</div>")


def rows_to_html(rows: Sequence[SweepRow]) -> str:
    """The sweep's rows as a compact HTML table (the panel's result; text: rows_to_table)."""
    head = (_("kernel"), _("tile"), _("threads"), _("regs"), _("smem B"), _("blocks/SM"),
            _("warps/SM"), _("occupancy"), _("limited by"), _("AI model"), _("waves"), "ms",
            "GFLOP/s")
    td = "padding:1px 8px;text-align:right;border-bottom:1px solid #eaeef2"
    out = ["<div style='margin:4px 0 2px 0'>"
           + _("target: {target}; size {size}³ (M = N = K)").format(
               target=html.escape(rows[0].target), size=rows[0].size) + "</div>",
           "<table style='border-collapse:collapse;font-size:12px;line-height:1.3'><tr>"
           + "".join(f"<th style='{td};border-bottom:1px solid #8c959f'>{h}</th>" for h in head)
           + "</tr>"]
    for r in rows:
        regs = str(r.regs_per_thread) if r.regs_per_thread is not None else f"{r.regs_in_model}*"
        ms = "—" if r.measured_ms is None else f"{r.measured_ms:.3f}"
        gf = "—" if r.gflops is None else f"{r.gflops:,.0f}"
        waves = "—" if r.waves is None else f"{r.waves:.1f}"
        cells = (r.kernel, r.tile, r.threads_per_block, regs, f"{r.smem_per_block:,}",
                 r.blocks_per_sm, r.warps_per_sm, f"{r.occupancy:.0%}", r.limited_by,
                 f"{r.modelled_ai:.2f}", waves, ms, gf)
        out.append("<tr>" + "".join(f"<td style='{td}'>{html.escape(str(c))}</td>"
                                    for c in cells) + "</tr>")
    out.append("</table>")
    notes = list(dict.fromkeys(f"{r.kernel}: {r.note}" for r in rows if r.note))
    if any(r.regs_per_thread is None for r in rows):
        notes.insert(0, _("* assumed register count (no GPU to ask the compiler)"))
    out += [f"<div style='color:#57606a;font-size:11px'>{html.escape(n)}</div>" for n in notes]
    return "".join(out)


def _static_summary(kernels: Mapping[str, Any], size: int, profile: str | None) -> StaticSummary:
    rows = run_sweep(kernels, size=size, profile=profile, progress=False, measure=False)
    text = (_("Tile sweep (model only; the interactive panel is not built while grading)")
            + "\n" + rows_to_table(rows))
    return StaticSummary(text, tuple(rows))


def sweep_panel(kernels: Mapping[str, Any], size: int = 1024, profile: str | None = None,
                tiles: Sequence[int] = TILES, sizes: Sequence[int] = SIZES) -> Any:
    """An ipywidgets panel over :func:`run_sweep` (or a :class:`StaticSummary` when grading).

    ``kernels`` maps a label ("naive", "tiled", "bonus") to ``gemm_naive``,
    ``make_gemm_tiled`` or a :class:`course.perf.sweep.KernelModel`; labels whose value is None
    are left out. Returns a widget to display (the last expression of a cell).
    """
    kernels = {k: v for k, v in kernels.items() if v is not None}
    if not kernels:
        raise ValueError(_("no kernels to sweep: load make_gemm_tiled (notebook 3) first"))
    if backend.autograding():
        return _static_summary(kernels, size, profile)
    return _Panel(kernels, size, profile, tuple(tiles), tuple(sizes))


def _plot_png(rows: Sequence[SweepRow]) -> bytes:
    """The sweep's plot as PNG bytes, drawn on a pyplot-free Figure.

    A button callback runs outside the cell that set up the notebook's plotting backend; a
    figure rendered there through pyplot came out blank in JupyterLab, so the panel renders
    the PNG itself.
    """
    import io

    from matplotlib.figure import Figure  # optional: imported when used

    use_language_font()  # before the figure exists: its text takes the font then
    fig = Figure(figsize=(7.5, 3.6), layout="constrained")
    plot_sweep(rows, ax=fig.subplots())
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


def _panel_class() -> type:
    import ipywidgets as w  # optional, heavy: imported when used (import course stays light)

    class Panel(w.VBox):
        """The widget: controls, the one-tile model, a progress bar and the results."""

        def __init__(self, kernels: dict[str, Any], size: int, profile: str | None,
                     tiles: tuple[int, ...], sizes: tuple[int, ...]) -> None:
            self.kernels = kernels
            self.tiles = tiles
            on_gpu = backend.detect().kind == "gpu"
            wide = {"description_width": "initial"}
            choices = list(kernels)
            options = [(name, name) for name in choices]
            if len(choices) > 1:
                options.append((_("all"), "all"))
            self.kernel = w.Dropdown(options=options,
                                     value="tiled" if "tiled" in choices else choices[0],
                                     description=_("kernel"), style=wide,
                                     layout=w.Layout(width="190px"))
            self.tile = w.Dropdown(options=list(tiles), value=16 if 16 in tiles else tiles[0],
                                   description=_("tile"), style=wide,
                                   layout=w.Layout(width="120px"))
            sizes = tuple(sorted(set(sizes) | {size}))
            self.size = w.Dropdown(options=list(sizes), value=size,
                                   description=_("size (M=N=K)"), style=wide,
                                   layout=w.Layout(width="190px"))
            profiles = available_profiles()
            start = profile if profile in profiles else profiles[0]
            self.profile = w.Dropdown(options=profiles, value=start,
                                      description=_("target GPU"), style=wide,
                                      layout=w.Layout(width="260px"))
            self.regs = w.IntSlider(value=ASSUMED_REGS, min=16, max=128, step=8,
                                    description=_("assumed registers/thread"), style=wide,
                                    disabled=on_gpu, continuous_update=False,
                                    layout=w.Layout(width="380px"))
            self.run = w.Button(description=_("Run sweep"), button_style="primary", icon="play",
                                tooltip=_("model every tile (and time it, on a GPU)"))
            self.progress = w.IntProgress(value=0, min=0, max=1, description=_("sweep"),
                                          bar_style="info", layout=w.Layout(width="380px"))
            self.status = w.HTML(value="")
            self.model = w.HTML(value="")
            self.output = w.Output(layout=w.Layout(min_height="40px"))
            where = (_("times on this GPU") if on_gpu else
                     _("model only: no GPU here, so nothing is timed"))
            title = w.HTML(value=_CSS + _("<b>Tile sweep</b> — {where}").format(where=where))
            for widget, css in ((self.kernel, "kernel"), (self.tile, "tile"),
                                (self.size, "size"), (self.profile, "profile"),
                                (self.regs, "regs"), (self.run, "run"),
                                (self.progress, "progress"), (self.status, "status"),
                                (self.model, "model"), (self.output, "output"),
                                (title, "title")):
                widget.add_class(f"week4-{css}")
            for control in (self.kernel, self.tile, self.size, self.profile, self.regs):
                control.observe(self._show_model, names="value")
            self.run.on_click(self._run)
            super().__init__(children=[
                title,
                w.HBox([self.kernel, self.tile, self.size, self.profile]),
                w.HBox([self.regs, self.run]),
                self.model,
                w.HBox([self.progress, self.status]),
                self.output,
            ])
            self.add_class("week4-panel")
            self._show_model()

        # -- the live one-tile model ---------------------------------------------------------

        def _profile(self) -> str | None:
            own = backend.detect().device_name
            return None if own and self.profile.value == own else self.profile.value

        def _assumed(self) -> int | None:
            return None if backend.detect().kind == "gpu" else int(self.regs.value)

        def _show_model(self, change: Any = None) -> None:
            names = list(self.kernels) if self.kernel.value == "all" else [self.kernel.value]
            try:
                target = resolve_target(self._profile())
                parts = []
                for name in names:
                    m = as_kernel_model(name, self.kernels[name])
                    row = model_row(m, int(self.tile.value), int(self.size.value), target,
                                    measured=True, assumed_regs=self._assumed())
                    parts.append(single_tile_html(row))
                self.model.value = "<hr style='margin:2px'>".join(parts)
            except Exception as exc:  # noqa: BLE001 - shown to the student, never raised
                self.model.value = f"<span style='color:#cf222e'>{html.escape(str(exc))}</span>"

        # -- the sweep -------------------------------------------------------------------------

        def _step(self, done: int, total: int, row: SweepRow) -> None:
            self.progress.max = total
            self.progress.value = done
            self.status.value = _("{done}/{total}: {kernel} at tile {tile}").format(
                done=done, total=total, kernel=html.escape(row.kernel), tile=row.tile)

        def _run(self, button: Any = None) -> None:
            from IPython.display import HTML, Image, display  # optional: imported when used

            chosen = (self.kernels if self.kernel.value == "all"
                      else {self.kernel.value: self.kernels[self.kernel.value]})
            self.run.disabled = True
            self.progress.value, self.progress.bar_style = 0, "info"
            self.output.clear_output()
            try:
                rows = run_sweep(chosen, tiles=self.tiles, size=int(self.size.value),
                                 profile=self._profile(), progress=False, on_step=self._step,
                                 assumed_regs=self._assumed())
                with self.output:
                    display(HTML(rows_to_html(rows)))
                    display(Image(data=_plot_png(rows), format="png"))
                self.progress.bar_style = "success"
                self.status.value = _("done: {count} rows").format(count=len(rows))
            except Exception as exc:  # noqa: BLE001 - shown to the student, never raised
                self.progress.bar_style = "danger"
                self.status.value = f"<span style='color:#cf222e'>{html.escape(str(exc))}</span>"
            finally:
                self.run.disabled = False

    return Panel


def _Panel(*args: Any) -> Any:  # noqa: N802 - builds the class lazily (ipywidgets import)
    return _panel_class()(*args)
