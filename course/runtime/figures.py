"""The figures a notebook draws with its own matplotlib code, in the student's language.

Most figures of the week are drawn by ``course`` (``perf/roofline``, ``perf/sweep_table``…).
A few small ones are drawn in the notebook itself, where the plotting code is part of what the
student reads (notebook 01's intensity curves, notebook 02's first warp, notebook 03's steps
over K, notebook 05's two roofs). Their code is the same in both releases, so their words come
from here: ``figure_text("ai_title")`` is a title, an axis label, a legend entry or an
annotation in the student's language, and ``subplots(...)`` is ``plt.subplots(...)`` after
:func:`course.runtime.fonts.use_language_font`, so that the Korean words are drawn in Hangul
rather than boxes (matplotlib fixes a figure's fonts when it makes its axes).
"""

from __future__ import annotations

from typing import Any

from course.runtime.fonts import use_language_font
from course.runtime.i18n import N_
from course.runtime.notes import fill

#: the text of every figure a notebook draws with its own plotting code, by name.
FIGURE_TEXT = {
    # notebook 01: intensity against matrix size
    "ai_vector_add": N_("vector add (n = N² elements)"),
    "ai_matmul_ideal": N_("matmul, ideal (each matrix moved once)"),
    "ai_naive": N_("naive kernel (request model)"),
    "ai_tiled": N_("tiled kernel, T = {t}"),
    "ai_ridge": N_("ridge of {gpu}: {ridge:.1f} FLOP/B"),
    "ai_xlabel": N_("N (C = A·B with N×N matrices)"),
    "ai_ylabel": N_("arithmetic intensity [FLOP/byte], FP32"),
    "ai_title": N_("What the algorithm allows vs what each kernel asks for"),
    # notebook 02: what the first warp reads
    "warp_panel": N_("{mapping}: {matrix} — {elements} element(s) in {sectors} sector(s)"),
    "warp_title": N_("What the first warp reads at step k = 0 (16×32 corners; memory runs "
                     "along each row, then on to the next)"),
    # notebook 03: which k each step covers
    "k_floor_steps": N_("K // T = 2 steps (the SYCL kernel)"),
    "k_ceil_steps": N_("ceil(K / T) = 3 steps, zero-padded"),
    "k_step": N_("step {step}"),
    "k_never_added": N_("k = 16…19 never added"),
    "k_past_end": N_("past K: loaded as 0"),
    "k_xlabel": N_("k (the summation index), K = 20, T = 8"),
    # notebook 05: one compute peak, two bandwidths
    "hw1": N_("HW1 (lower bandwidth)"),
    "hw2": N_("HW2 (higher bandwidth)"),
    "in_between": N_("in between"),
    "two_bandwidths_title": N_("One compute peak, two memory bandwidths"),
}


def figure_text(name: str, **values: object) -> str:
    """The figure text ``name`` of :data:`FIGURE_TEXT` in the student's language, ``values``
    filled in."""
    return fill(FIGURE_TEXT, "figure text", name, values)


def subplots(*args: Any, **kwargs: Any) -> Any:
    """``matplotlib.pyplot.subplots(*args, **kwargs)`` with the font of the student's language
    (the Korean font for Korean): what a notebook's own figure starts with."""
    import matplotlib.pyplot as plt  # heavy: imported when a figure is drawn

    use_language_font()
    return plt.subplots(*args, **kwargs)
