"""Generate the week-4 lecture figures as PNGs.

Writes, into ``--out`` (default ``assets/``):

* ``roofline_two_bandwidths.png``: one compute peak, two memory bandwidths, the three
  shaded regions (memory-bound on both / bandwidth-dependent / compute-bound on both) and
  two example algorithms. Drawn with ``course.perf.roofline``.
* ``tiling.png``: C = A·B cut into tiles; one output tile of C, the row strip of A and the
  column strip of B it needs, and the tiles of the current K-step held in shared memory.
* ``memory_hierarchy.png``: thread / warp / block / grid nested boxes with registers,
  shared memory, L2 and global memory (HBM), ordered from fastest to largest.

Run from the repository root::

    python scripts/build/make_figures.py [--lang en|ko] [--out assets]

``--lang ko`` draws the Korean edition's copies (text from the course's message catalog,
Hangul in NanumGothic: course/runtime/fonts.py) into ``assets/ko/`` by default.

Output is byte-for-byte reproducible (Agg backend, fixed sizes, no Software/date metadata),
so regenerating does not churn the repository.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import FancyArrowPatch, Rectangle  # noqa: E402

try:
    from course.perf.roofline import Roof, plot_roofline
except ImportError:  # running from a checkout that is not pip-installed
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from course.perf.roofline import Roof, plot_roofline
from course.runtime import fonts, i18n  # noqa: E402
from course.runtime.i18n import _  # noqa: E402

DPI = 120
matplotlib.rcParams["svg.hashsalt"] = "gpu-course-week4"  # deterministic ids in SVG output
matplotlib.rcParams["font.size"] = 10


def save(fig: Figure, path: Path) -> None:
    """Save without the metadata (Software version) that would make bytes differ."""
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(fig)


# --------------------------------------------------------------------------- roofline


def roofline_two_bandwidths() -> Figure:
    """Same peak, two bandwidths: who gains from faster memory, and who doesn't."""
    peak = 10_000.0
    roofs = [Roof(_("slow memory"), peak, 500.0), Roof(_("fast memory"), peak, 2000.0)]
    fig, ax = plt.subplots(figsize=(8, 5.2), layout="constrained")
    plot_roofline(
        roofs, ax=ax, shade_regions=True, ai_range=(1 / 8, 512),
        title=_("One compute peak, two memory bandwidths"),
    )
    algo1, algo2 = 2.0, 128.0  # FLOP/byte: below both ridges, above both ridges
    for name, ai in (("Algo 1", algo1), ("Algo 2", algo2)):
        ax.axvline(ai, color="0.25", ls="--", lw=1)
        ax.text(ai * 1.08, peak * 2.6, f"{name}\nAI = {ai:g} FLOP/B", fontsize=9, va="center")
        for i, roof in enumerate(roofs):
            ax.plot([ai], [roof.attainable(ai)], "s", color=f"C{i}", ms=7, mec="black")
    slow, fast = (roof.attainable(algo1) for roof in roofs)
    ax.annotate("", xy=(algo1, fast * 0.93), xytext=(algo1, slow * 1.07),
                arrowprops={"arrowstyle": "-|>", "color": "0.2", "lw": 1.5})
    ax.text(algo1 / 1.1, (slow * fast) ** 0.5, _("4x the bandwidth\n= 4x faster"), fontsize=9,
            ha="right", va="center")
    ax.annotate(
        _("no gain: already\ncompute-bound"), xy=(algo2, peak), xytext=(algo2 / 1.5, peak / 5),
        fontsize=9, ha="right", arrowprops={"arrowstyle": "->", "color": "0.25"},
    )
    return fig


# --------------------------------------------------------------------------- tiling

T = 4  # tiles per matrix side in the drawing
ROW, COL, STEP = 1, 2, 1  # highlighted output tile (ROW, COL) and current K-step
LIGHT_A, STRONG_A = "#c6dbef", "#2171b5"
LIGHT_B, STRONG_B = "#c7e9c0", "#238b45"
C_TILE = "#fdae6b"


def draw_tile_grid(ax: Axes, x0: float, y0: float, colors: dict[tuple[int, int], str]) -> None:
    """A T x T grid of unit tiles with its top-left corner at (x0, y0); (row, col) coloured."""
    for r in range(T):
        for c in range(T):
            face = colors.get((r, c), "white")
            ax.add_patch(Rectangle((x0 + c, y0 - r - 1), 1, 1, fc=face, ec="0.35", lw=1))
    ax.add_patch(Rectangle((x0, y0 - T), T, T, fill=False, ec="black", lw=2))


def arrow(ax: Axes, start: tuple[float, float], end: tuple[float, float], **kw) -> None:
    """A curved annotation arrow in data coordinates."""
    style = {"arrowstyle": "-|>", "mutation_scale": 14, "lw": 1.5, "color": "0.2"} | kw
    ax.add_patch(FancyArrowPatch(start, end, connectionstyle="arc3,rad=0.25", **style))


def tiling() -> Figure:
    """A on the left, B on top, C bottom-right, so A's rows and B's columns line up with C."""
    fig, ax = plt.subplots(figsize=(9, 8.6), layout="constrained")
    ax.set_xlim(-2.2, 10.8)
    ax.set_ylim(-2.0, 9.9)
    ax.set_aspect("equal")
    ax.axis("off")
    a_x, b_y, gap = 0.0, 9.0, 1.0  # A spans x 0..4, B spans y 5..9, C sits below B
    c_x, c_y = a_x + T + gap, b_y - T - gap

    a_colors = {(ROW, k): LIGHT_A for k in range(T)} | {(ROW, STEP): STRONG_A}
    b_colors = {(k, COL): LIGHT_B for k in range(T)} | {(STEP, COL): STRONG_B}
    draw_tile_grid(ax, a_x, c_y, a_colors)
    draw_tile_grid(ax, c_x, b_y, b_colors)
    draw_tile_grid(ax, c_x, c_y, {(ROW, COL): C_TILE})

    ax.text(a_x + T / 2, c_y - T - 0.4, "A  (M × K)", ha="center", va="top", fontsize=13)
    ax.text(c_x + T + 0.3, b_y - T / 2, "B\n(K × N)", ha="left", va="center", fontsize=13)
    ax.text(c_x + T / 2, c_y - T - 0.4, "C = A·B  (M × N)", ha="center", va="top", fontsize=13)
    ax.text(a_x + T - 0.5, c_y + 0.25, "K →", ha="center", fontsize=10, color="0.3")
    ax.text(a_x - 0.15, c_y - ROW - 0.5, _("row\nstrip"), ha="right", va="center", fontsize=10,
            color=STRONG_A)
    ax.text(c_x + COL + 0.5, b_y + 0.2, _("column strip"), ha="center", va="bottom", fontsize=10,
            color=STRONG_B)
    ax.text(c_x - 0.25, b_y - T / 2, "K\n↓", ha="right", va="center", fontsize=10, color="0.3")

    # Labels on the current step's tiles and the output tile.
    a_tile = (a_x + STEP + 0.5, c_y - ROW - 0.5)
    b_tile = (c_x + COL + 0.5, b_y - STEP - 0.5)
    c_tile = (c_x + COL + 0.5, c_y - ROW - 0.5)
    for (x, y) in (a_tile, b_tile):
        ax.text(x, y, _("step t"), ha="center", va="center", color="white", fontsize=8.5,
                fontweight="bold")
    ax.text(*c_tile, _("C tile\nTILE×TILE"), ha="center", va="center", fontsize=7.5,
            fontweight="bold")
    arrow(ax, (a_tile[0] + 0.3, a_tile[1] - 0.45), (c_tile[0] - 0.35, c_tile[1] - 0.4))
    arrow(ax, (b_tile[0] + 0.45, b_tile[1] - 0.3), (c_tile[0] + 0.45, c_tile[1] + 0.35))

    # Explanations: shared-memory reuse for the strong tiles, accumulation for the C tile.
    note = _("loaded once into shared memory,\nused TILE times")
    ax.annotate(note, xy=(a_tile[0], a_tile[1] + 0.5), xytext=(a_x + 0.2, c_y + 1.6),
                fontsize=10, color=STRONG_A, ha="left",
                arrowprops={"arrowstyle": "->", "color": STRONG_A})
    ax.annotate(note, xy=(b_tile[0] - 0.5, b_tile[1]), xytext=(a_x + 0.2, b_y - 1.2),
                fontsize=10, color=STRONG_B, ha="left",
                arrowprops={"arrowstyle": "->", "color": STRONG_B})
    ax.text(
        c_x + T / 2, c_y - T - 1.1,
        _("C tile += A tile(t) · B tile(t)  for t = 0 … ⌈K/TILE⌉ − 1\n"
          "light tiles: the rest of the row / column strip, loaded at other steps"),
        ha="center", va="top", fontsize=9.5, color="0.25",
    )
    ax.set_title(_("Shared-memory tiling of GEMM: one output tile, step t"), fontsize=13)
    return fig


# --------------------------------------------------------------------------- memory hierarchy


def box(ax: Axes, x: float, y: float, w: float, h: float, text: str, fc: str,
        va: str = "top", **text_kw) -> None:
    """A filled rectangle with a label at its top (or centre with va='center')."""
    ax.add_patch(Rectangle((x, y), w, h, fc=fc, ec="0.2", lw=1.2))
    ty = y + h - 0.12 if va == "top" else y + h / 2
    ax.text(x + w / 2, ty, text, ha="center", va=va, **({"fontsize": 9} | text_kw))


def warp(ax: Axes, x: float, y: float, name: str) -> None:
    """A warp box with a row of threads, each thread holding its registers."""
    box(ax, x, y, 2.6, 1.25, _("{warp}: 32 threads").format(warp=name), "#fee6ce")
    for i in range(4):
        tx = x + 0.12 + i * 0.5
        box(ax, tx, y + 0.12, 0.42, 0.7, _("thread"), "white", fontsize=6)
        ax.add_patch(Rectangle((tx + 0.06, y + 0.18), 0.3, 0.22, fc="#fd8d3c", ec="0.3", lw=0.6))
    ax.text(x + 2.3, y + 0.45, "…", ha="center", va="center", fontsize=12)


def block(ax: Axes, x: float, y: float, name: str) -> None:
    """A thread block: warps on top of the block's shared memory."""
    box(ax, x, y, 3.0, 4.0, name, "#deebf7", fontsize=10, fontweight="bold")
    warp(ax, x + 0.2, y + 2.2, _("warp {number}").format(number=0))
    warp(ax, x + 0.2, y + 0.85, _("warp {number}").format(number=1))
    box(ax, x + 0.2, y + 0.12, 2.6, 0.55, _("shared memory (this block)"), "#6baed6",
        va="center")


def memory_hierarchy() -> Figure:
    """Execution hierarchy nested left, memory levels below, speed/size ladder on the right."""
    fig, ax = plt.subplots(figsize=(11, 7), layout="constrained")
    ax.set_xlim(0, 11.2)
    ax.set_ylim(0, 7.4)
    ax.axis("off")

    box(ax, 0.2, 2.45, 6.9, 4.75, _("grid: all thread blocks of one kernel launch"), "#f7f7f7",
        fontsize=10, fontweight="bold")
    block(ax, 0.45, 2.65, _("thread block {number}").format(number=0))
    block(ax, 3.85, 2.65, _("thread block {number}").format(number=1))
    box(ax, 0.2, 1.45, 6.9, 0.75, _("L2 cache: on-chip, shared by all SMs"), "#9ecae1",
        va="center", fontsize=10)
    box(ax, 0.2, 0.2, 6.9, 1.0, _("global memory (HBM / GDDR): whole GPU, off-chip"), "#4292c6",
        va="center", fontsize=10, color="white", fontweight="bold")

    # Ladder: fastest & smallest at the top, largest & slowest at the bottom.
    ladder = [
        ("#fd8d3c", _("registers: fastest, private"),
         _("per thread; ~1 cycle; ≤ 255 32-bit regs each")),
        ("#6baed6", _("shared memory: on-chip, per block"),
         _("~tens of cycles; 10s–100s of KB per SM")),
        ("#9ecae1", _("L2 cache: on-chip, whole GPU"), _("MBs (4 MB T4 … 60 MB H200)")),
        ("#4292c6", _("global/HBM: large, slowest"),
         _("GBs; ~hundreds of cycles; the roofline's GB/s")),
    ]
    x0, y_top, step = 7.45, 6.75, 1.55
    for i, (color, head, detail) in enumerate(ladder):
        y = y_top - i * step
        ax.add_patch(Rectangle((x0, y - 0.18), 0.3, 0.3, fc=color, ec="0.2"))
        ax.text(x0 + 0.45, y, head, va="center", fontsize=10, fontweight="bold")
        ax.text(x0 + 0.45, y - 0.38, detail, va="center", fontsize=8.5, color="0.3")
    ax.annotate("", xy=(7.2, 0.4), xytext=(7.2, 6.9),
                arrowprops={"arrowstyle": "-|>", "lw": 2, "color": "0.3"})
    ax.text(7.28, 7.05, _("faster, smaller"), fontsize=8.5, color="0.3")
    ax.text(7.28, 0.12, _("larger, slower"), fontsize=8.5, color="0.3")
    ax.set_title(_("CUDA execution and memory hierarchy"), fontsize=13)
    return fig


FIGURES = {
    "roofline_two_bandwidths.png": roofline_two_bandwidths,
    "tiling.png": tiling,
    "memory_hierarchy.png": memory_hierarchy,
}


def main(argv: list[str] | None = None) -> int:
    """Write every figure in FIGURES into the output folder and list the paths."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", choices=i18n.LANGUAGES, default=i18n.DEFAULT,
                        help="the language of the figures' text (default: en)")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder (default: assets/, for Korean assets/ko/)")
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = Path("assets") if args.lang == i18n.DEFAULT else Path("assets", args.lang)
    os.environ[i18n.ENV] = args.lang
    i18n.reset()
    fonts.use_language_font()
    args.out.mkdir(parents=True, exist_ok=True)
    for filename, make in FIGURES.items():
        save(make(), args.out / filename)
        print(args.out / filename)
    return 0


if __name__ == "__main__":
    sys.exit(main())
