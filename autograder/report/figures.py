"""The class report's pictures (matplotlib, PNG): the scores per track, the most common
mistakes, the kernels' GFLOP/s and speedups, and the class's kernels on the roofline the
notebooks draw (:func:`course.perf.roofline.plot_roofline`, the datasheet roof of the GPU the
kernels were timed on). Every word is in the report's language; Korean is drawn in the
course's Korean font (:func:`course.runtime.fonts.use_korean_font`).

Each function returns the PNG's bytes, or None when there is nothing to draw.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import zlib
from collections.abc import Iterator
from typing import Any

from autograder.report.records import ClassReport, Kernel
from course.gemm.reads import naive_reads, tiled_reads
from course.perf.roofline import Roof, plot_roofline
from course.runtime import i18n
from course.runtime.devices import lookup
from course.runtime.fonts import use_korean_font
from course.runtime.i18n import in_language

#: bars in the mistakes' chart (the table below it lists every one)
MISTAKES_SHOWN = 12
#: characters of a mistake's template in its bar's label
LABEL_CHARS = 60
_DPI = 110


@contextlib.contextmanager
def speaking(language: str) -> Iterator[None]:
    """Draw in ``language``: the course's figure helpers translate with the process's
    language (``COURSE_LANG``), set here for the drawing and put back after."""
    before = os.environ.get(i18n.ENV)
    os.environ[i18n.ENV] = language
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(i18n.ENV, None)
        else:
            os.environ[i18n.ENV] = before


def _png(fig: Any) -> bytes:
    import matplotlib.pyplot as plt  # heavy: imported when a figure is drawn

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=_DPI)
    plt.close(fig)
    return buffer.getvalue()


def _figure(language: str, size: tuple[float, float], panels: int = 1) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    use_korean_font()  # Hangul in names and messages, whatever the report's language
    return plt.subplots(1, panels, figsize=size, layout="constrained")


def track_name(language: str, track: str) -> str:
    return track or in_language(language, "no track")


def scores(report: ClassReport) -> bytes | None:
    """A histogram of the students' totals (percent of their maximum), one colour per track."""
    lang = report.language
    if not any(report.scores.values()):
        return None
    fig, ax = _figure(lang, (7.5, 3.6))
    bins = [10 * i for i in range(11)]
    tracks = sorted(report.scores)
    ax.hist([report.scores[t] for t in tracks], bins=bins, stacked=True,
            label=[f"{track_name(lang, t)} ({len(report.scores[t])})" for t in tracks])
    ax.set_xlabel(in_language(lang, "total score (percent of the maximum)"))
    ax.set_ylabel(in_language(lang, "students"))
    ax.set_xticks(bins)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(title=in_language(lang, "track"))
    return _png(fig)


def mistakes(report: ClassReport) -> bytes | None:
    """The most common named mistakes, as bars of how many students made each."""
    lang = report.language
    shown = report.mistakes[:MISTAKES_SHOWN]
    if not shown:
        return None
    fig, ax = _figure(lang, (9.5, 0.45 * len(shown) + 1.2))
    labels = []
    for m in shown:
        text = m.template if len(m.template) <= LABEL_CHARS else m.template[:LABEL_CHARS] + "…"
        labels.append(f"{m.grade_id}: {text}")
    ax.barh(range(len(shown)), [len(m.students) for m in shown], color="tab:red")
    ax.set_yticks(range(len(shown)), labels, fontsize="small")
    ax.invert_yaxis()
    ax.set_xlabel(in_language(lang, "students"))
    ax.xaxis.get_major_locator().set_params(integer=True)
    return _png(fig)


def speeds(report: ClassReport) -> bytes | None:
    """Two panels: the naive and tiled kernels' GFLOP/s, and the speedups with the bar."""
    lang = report.language
    kernels = report.kernels
    if not kernels:
        return None
    fig, (left, right) = _figure(lang, (9.5, 3.6), panels=2)
    tiled = [k.tiled_gflops for k in kernels]
    naive = [k.naive_gflops for k in kernels if k.naive_gflops]
    values = tiled + naive
    lo, hi = min(values) / 1.5, max(values) * 1.5
    edges = [lo * (hi / lo) ** (i / 20) for i in range(21)]
    left.hist([naive, tiled], bins=edges, label=[in_language(lang, "naive"),
                                                 in_language(lang, "tiled")])
    left.set_xscale("log")
    left.set_xlabel(in_language(lang, "GFLOP/s at the graded size"))
    left.set_ylabel(in_language(lang, "students"))
    left.legend()
    for ax in (left, right):
        ax.yaxis.get_major_locator().set_params(integer=True)
    right.hist([k.speedup for k in kernels], bins=15, color="tab:green")
    right.set_xlabel(in_language(lang, "speedup of tiled over naive [×]"))
    right.set_ylabel(in_language(lang, "students"))
    return _png(fig)


def intensity(kernel: str, size: int, tile: int) -> float:
    """The notebooks' model of a kernel's arithmetic intensity [FLOP/byte] at ``size``³:
    its reads of A and B (:mod:`course.gemm.reads`) and its writes of C, four bytes each."""
    reads = tiled_reads(size, size, size, tile) if kernel == "tiled" \
        else naive_reads(size, size, size)
    return 2.0 * size ** 3 / (4.0 * (reads + size * size))


def roofline(report: ClassReport, device: str, kernels: list[Kernel]) -> bytes | None:
    """The datasheet roof of ``device`` with the class's naive and tiled kernels timed on it
    (at the notebooks' model of their intensity); None when the datasheet has no such GPU."""
    spec = lookup(device)
    if spec is None or not kernels:
        return None
    lang = report.language
    fig, ax = _figure(lang, (8, 5.2))
    with speaking(lang):
        plot_roofline(Roof.from_spec(spec), ax=ax, ai_range=(1 / 16, 256),
                      title=in_language(lang, "The class's kernels on {gpu}").format(
                          gpu=spec.name))
    for kind, marker, color in (("naive", "o", "tab:orange"), ("tiled", "^", "tab:green")):
        xs, ys = [], []
        for k in kernels:
            value = k.tiled_gflops if kind == "tiled" else k.naive_gflops
            if value:
                ai = intensity(kind, k.size, k.tile)
                # a small spread sideways, so that students with one number stay visible
                xs.append(ai * math.exp(0.04 * ((zlib.crc32(k.student.encode()) % 11) - 5)))
                ys.append(value)
        if xs:
            ax.scatter(xs, ys, marker=marker, color=color, edgecolors="black", zorder=5,
                       label=f"{in_language(lang, kind)} ({len(xs)})")
    ax.set_ylim(min([ax.get_ylim()[0]] + [k.naive_gflops or k.tiled_gflops
                                          for k in kernels]) / 2, ax.get_ylim()[1])
    ax.legend(loc="lower right", fontsize="small")
    return _png(fig)
