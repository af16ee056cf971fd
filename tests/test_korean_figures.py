"""Every figure the course draws, drawn in Korean: Hangul everywhere, no glyph missing.

matplotlib draws a character its fonts lack as an empty box and says so only in a warning
("Glyph 44053 (\\N{HANGUL SYLLABLE GANG}) missing from font(s) DejaVu Sans."): here that
warning is an error. Each figure must also really hold Korean text, so that the test cannot
pass on an English figure.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Iterator

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from course.gemm.occupancy import theoretical_occupancy  # noqa: E402
from course.notebooks import kernel_roofline  # noqa: E402
from course.perf import widgets  # noqa: E402
from course.perf.experiment import CUBLAS, NAIVE, NUMPY, ExperimentResult, Row, tiled_name  # noqa: E402
from course.perf.experiment_report import plot_experiment  # noqa: E402
from course.perf.roofline import KernelPoint, Roof, plot_roofline  # noqa: E402
from course.perf.sweep import SweepRow  # noqa: E402
from course.perf.sweep_table import plot_sweep  # noqa: E402
from course.runtime import fonts, i18n  # noqa: E402

GLYPH_MISSING = r"Glyph .* missing from font"


@pytest.fixture(autouse=True)
def korean(monkeypatch) -> Iterator[None]:
    """COURSE_LANG=ko, and matplotlib's settings put back afterwards."""
    monkeypatch.setenv(i18n.ENV, "ko")
    with matplotlib.rc_context():
        yield
    plt.close("all")


def _sweep_rows(measured: bool) -> list[SweepRow]:
    rows = []
    for tile, gf in ((4, 1000.0), (8, 4000.0), (16, 5800.0), (32, 6100.0)):
        occ = theoretical_occupancy((9, 0), tile * tile, 32, 2 * tile * tile * 4)
        rows.append(SweepRow("tiled", tile, 1024, 1.0 if measured else None,
                             gf if measured else None, 32, 32, 2 * tile * tile * 4, tile * tile,
                             occ.blocks_per_sm, occ.warps_per_sm, occ.occupancy, occ.limited_by,
                             tile / 4, 100, 1.0, "H200, sm_90", ""))
    return rows


def _experiment() -> ExperimentResult:
    rows = (Row(NAIVE, "GPU", 1.66, 1292.7, 0.0), Row(tiled_name(32), "GPU", 0.31, 6916.2, 0.0),
            Row(CUBLAS, "GPU", 0.08, 25595.0, 0.0), Row(NUMPY, "CPU", 21.5, 99.9, 0.0))
    return ExperimentResult(1024, 50, 32, "Test GPU", rows, 0.0, ())


def _roofline_one():
    points = [KernelPoint("naive", 0.25, 1200.0), KernelPoint("tiled 32", 8.0, 6900.0)]
    return plot_roofline(Roof("T4", 8141, 320), points, shade_regions=True).figure


def _roofline_two():
    roofs = [Roof("HW1", 10000, 300), Roof("HW2", 10000, 1200)]
    return plot_roofline(roofs, [KernelPoint("k", 2.0, 500.0)], shade_regions=True).figure


def _modelled():
    kernel_roofline._show_modelled({"naive": 0.25, "tiled 32": 8.0}, 1024)
    return plt.gcf()


def _sweep(measured: bool) -> Callable[[], object]:
    return lambda: plot_sweep(_sweep_rows(measured)).figure


def _panel_png():
    """The widget panel's figure (a PNG drawn on a pyplot-free Figure)."""
    return widgets._plot_png(_sweep_rows(True))


FIGURES = {
    "roofline, one roof": _roofline_one,
    "roofline, two bandwidths": _roofline_two,
    "roofline, modelled (no GPU)": _modelled,
    "sweep, measured": _sweep(True),
    "sweep, model only": _sweep(False),
    "experiment": lambda: plot_experiment(_experiment()).figure,
}


def _texts(fig) -> str:
    return " ".join(t.get_text() for t in fig.findobj(matplotlib.text.Text))


def _has_hangul(text: str) -> bool:
    return any("\uac00" <= c <= "\ud7a3" for c in text)


@pytest.mark.parametrize("name", FIGURES)
def test_every_figure_draws_its_korean_text_with_no_missing_glyph(name, capsys, caplog):
    with warnings.catch_warnings(), caplog.at_level(logging.WARNING, "matplotlib.font_manager"):
        warnings.filterwarnings("error", message=GLYPH_MISSING)
        fig = FIGURES[name]()
        fig.canvas.draw()
    assert _has_hangul(_texts(fig)), f"{name}: no Korean text in the figure"
    # no "findfont: Failed to find font weight bold" either (stderr in a notebook cell)
    assert not [r.getMessage() for r in caplog.records if "findfont" in r.getMessage()]


def test_the_panels_figure_draws_with_no_missing_glyph():
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=GLYPH_MISSING)
        png = _panel_png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_the_korean_font_the_same_figure_fails():
    """The check can fail: with matplotlib's own font only, Hangul glyphs are missing."""
    fig = _roofline_one()
    for text in fig.findobj(matplotlib.text.Text):
        text.set_fontfamily(["DejaVu Sans"])
    with warnings.catch_warnings(), pytest.raises(UserWarning, match=GLYPH_MISSING):
        warnings.filterwarnings("error", message=GLYPH_MISSING)
        fig.canvas.draw()


def test_the_font_comes_with_the_course_package():
    path = fonts.korean_font_file()
    assert path.name == "NanumGothic.ttf" and path.stat().st_size > 1_000_000


@pytest.mark.parametrize("lang, words", [("en", "need NanumGothic"), ("ko", "글꼴이 필요한데")])
def test_a_missing_font_is_named_in_the_students_language(monkeypatch, lang, words):
    """Without koreanize-matplotlib (which carries NanumGothic), the error says what to install,
    in the language the student works in."""
    monkeypatch.setenv(i18n.ENV, lang)
    monkeypatch.setattr(fonts.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(fonts.MissingFont, match=words) as caught:
        fonts.korean_font_file()
    assert "pip install koreanize-matplotlib" in str(caught.value)
