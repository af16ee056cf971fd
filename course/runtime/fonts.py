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

import dataclasses
import importlib.util
from pathlib import Path

from course.runtime.i18n import _, language

#: The family name of the font file, as matplotlib reads it.
KOREAN_FAMILY = "NanumGothic"
#: What comes first: matplotlib's default font, for everything but Hangul.
LATIN_FAMILY = "DejaVu Sans"


#: The weights registered: regular text, and bold (the roofline's kernel labels).
FONT_FILES = ("NanumGothic.ttf", "NanumGothicBold.ttf")


class MissingFont(FileNotFoundError):
    """NanumGothic is not installed: the Korean figures cannot be drawn."""


def korean_font_file(name: str = FONT_FILES[0]) -> Path:
    """A NanumGothic file installed with ``koreanize-matplotlib``; a clear error if missing."""
    spec = importlib.util.find_spec("koreanize_matplotlib")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders:
        path = Path(folder, "fonts", name)
        if path.is_file():
            return path
    raise MissingFont(_(
        "the Korean figures need NanumGothic, which comes with the koreanize-matplotlib "
        "package: pip install koreanize-matplotlib (it is one of the course's requirements)"))


def use_korean_font() -> None:
    """Register NanumGothic with matplotlib and draw text with it from now on."""
    import matplotlib  # optional: imported when a figure is drawn
    from matplotlib import font_manager

    manager = font_manager.fontManager
    known = {Path(f.fname) for f in manager.ttflist}
    for name in FONT_FILES:
        path = korean_font_file(name)
        if path not in known:
            manager.addfont(str(path))
    # NanumGothicBold.ttf says weight 600 (semibold); matplotlib would warn on every bold label
    # ("Failed to find font weight bold") and stderr in a cell is noise: register it as bold.
    bold = str(korean_font_file(FONT_FILES[1]))
    # (before font.family names NanumGothic below, so no cached lookup holds the old weight)
    manager.ttflist = [dataclasses.replace(f, weight=700) if f.fname == bold else f
                       for f in manager.ttflist]
    if KOREAN_FAMILY not in list(matplotlib.rcParams["font.family"]):
        matplotlib.rcParams["font.family"] = [LATIN_FAMILY, KOREAN_FAMILY]


def use_language_font() -> None:
    """Before drawing: the Korean font when the student's language is Korean, else nothing."""
    if language() == "ko":
        use_korean_font()
