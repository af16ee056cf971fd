"""A font with Hangul for the Korean figures, the same on every machine.

matplotlib's own font (DejaVu Sans) has no Hangul: a Korean title would be drawn as boxes,
and Colab has no Korean font installed. The course depends on ``koreanize-matplotlib``, which
ships NanumGothic (SIL Open Font License); this module registers that font file with
matplotlib's font manager and adds it to ``font.family`` after matplotlib's DejaVu Sans:
matplotlib falls back glyph by glyph, so Latin letters, digits and symbols (≤, ², →) look as
in the English figures and only Hangul comes from NanumGothic (whose arrows and superscripts
are poor). The package itself
is never imported: importing it would restyle every figure, English ones too, and it imports
``distutils``, which Python 3.12 no longer has.

Every function that draws a figure calls :func:`use_language_font` first; in English it does
nothing.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from course.runtime.i18n import language

#: The family name of the font file, as matplotlib reads it.
KOREAN_FAMILY = "NanumGothic"
#: What comes first: matplotlib's default font, for everything but Hangul.
LATIN_FAMILY = "DejaVu Sans"


def korean_font_file() -> Path:
    """NanumGothic.ttf as installed with ``koreanize-matplotlib``; a clear error if missing."""
    spec = importlib.util.find_spec("koreanize_matplotlib")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = Path(folder, "fonts", "NanumGothic.ttf")
        if path.is_file():
            return path
    raise FileNotFoundError(
        "the Korean figures need NanumGothic, which comes with the koreanize-matplotlib "
        "package: pip install koreanize-matplotlib (it is one of the course's requirements)")


def use_korean_font() -> None:
    """Register NanumGothic with matplotlib and draw text with it from now on."""
    import matplotlib  # optional: imported when a figure is drawn
    from matplotlib import font_manager

    path = korean_font_file()
    known = {Path(f.fname) for f in font_manager.fontManager.ttflist}
    if path not in known:
        font_manager.fontManager.addfont(str(path))
    if KOREAN_FAMILY not in list(matplotlib.rcParams["font.family"]):
        matplotlib.rcParams["font.family"] = [LATIN_FAMILY, KOREAN_FAMILY]


def use_language_font() -> None:
    """Before drawing: the Korean font when the student's language is Korean, else nothing."""
    if language() == "ko":
        use_korean_font()
