"""scripts/build/make_figures.py writes three legible, deterministic PNGs, and their Korean copies
with every glyph drawn (assets/ko/, for the Korean release)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import matplotlib.image as mpimg
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "build" / "make_figures.py"
NAMES = ("roofline_two_bandwidths.png", "tiling.png", "memory_hierarchy.png")


def run_script(out: Path, *args: str) -> None:
    # matplotlib's "Glyph … missing from font(s)" warning (a box drawn instead) is an error
    env = os.environ | {"MPLBACKEND": "Agg", "PYTHONWARNINGS": "error:Glyph:UserWarning"}
    subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(out), *args],
        cwd=ROOT, env=env, check=True, capture_output=True, text=True, timeout=300,
    )


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> tuple[Path, Path]:
    """Run the script twice into separate folders (for the determinism check)."""
    first, second = tmp_path_factory.mktemp("figs1"), tmp_path_factory.mktemp("figs2")
    run_script(first)
    run_script(second)
    return first, second


@pytest.mark.parametrize("name", NAMES)
def test_png_exists_is_large_and_not_blank(two_runs, name):
    path = two_runs[0] / name
    assert path.is_file()
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = mpimg.imread(path)
    height, width = pixels.shape[:2]
    assert height > 300 and width > 300
    assert pixels[..., :3].std() > 0.05, "image looks blank"


@pytest.mark.parametrize("name", NAMES)
def test_png_is_deterministic_and_has_no_software_metadata(two_runs, name):
    first, second = (run / name for run in two_runs)
    data = first.read_bytes()
    assert data == second.read_bytes()
    assert b"Matplotlib" not in data



def test_the_korean_figures_draw_every_glyph(tmp_path):
    """`--lang ko`: the text from the Korean catalog, Hangul drawn (a missing glyph fails the
    script), and the result differs from the English figure."""
    run_script(tmp_path, "--lang", "ko")
    for name in NAMES:
        pixels = mpimg.imread(tmp_path / name)
        assert pixels[..., :3].std() > 0.05, f"{name} looks blank"
        assert (tmp_path / name).read_bytes() != (ROOT / "assets" / name).read_bytes()
        assert (ROOT / "assets" / "ko" / name).is_file(), "run `make figures`"


def test_a_missing_glyph_fails_the_script(tmp_path):
    """The check above can fail: Korean text with matplotlib's own font only."""
    code = ("import matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt\n"
            "fig, ax = plt.subplots(); ax.set_title('타일'); fig.canvas.draw()")
    env = os.environ | {"PYTHONWARNINGS": "error:Glyph:UserWarning"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode != 0 and "missing from font" in proc.stderr
