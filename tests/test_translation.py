"""One source, two releases: the Korean release is the English one with its prose translated.

* release-ko/week4 is exactly what the catalogs make of release/week4, and differs from it in
  read-only markdown alone: the same cells, code, tests, grade_ids and points;
* every read-only markdown cell of the Korean release is Korean (identifiers, formulas, code
  spans and the terms the glossary keeps in English may stay English);
* the catalogs are complete and current: a changed English paragraph fails the check until it
  is translated again (gettext's fuzzy entries), and a translation that lost a number, a code
  span, a formula or a link fails too.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from babel.messages.pofile import read_po

from autograder.grading import languages
from autograder.release import translation

ROOT = Path(__file__).resolve().parents[1]
EN = sorted((ROOT / "release" / "week4").glob("*.ipynb"))
KO = ROOT / "release-ko" / "week4"


def _nbgrader(cell: dict) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _text(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def test_the_korean_release_is_what_the_catalogs_make_of_the_english_one(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "release" / "week4", tmp_path / "release" / "week4")
    shutil.copytree(ROOT / "i18n", tmp_path / "i18n")
    shutil.copytree(ROOT / "assets", tmp_path / "assets")
    written = translation.write_release(tmp_path, "ko")
    assert written == sorted(p.name for p in KO.glob("*.ipynb")) == [p.name for p in EN]
    for name in written:
        fresh = json.loads((tmp_path / "release-ko" / "week4" / name).read_text())
        assert fresh == json.loads((KO / name).read_text()), (
            f"release-ko/week4/{name} is stale: run `make release` and commit it")


@pytest.mark.parametrize("path", EN, ids=lambda p: p.stem)
def test_both_releases_have_the_same_cells_code_tests_grade_ids_and_points(path: Path) -> None:
    en = json.loads(path.read_text())
    ko = json.loads((KO / path.name).read_text())
    assert en["metadata"]["course"] == {"language": "en"}
    assert ko["metadata"]["course"] == {"language": "ko"}
    assert [c["cell_type"] for c in ko["cells"]] == [c["cell_type"] for c in en["cells"]]
    assert [c.get("id") for c in ko["cells"]] == [c.get("id") for c in en["cells"]]
    for e, k in zip(en["cells"], ko["cells"], strict=True):
        same_meta = {key: v for key, v in _nbgrader(e).items() if key != "checksum"}
        assert {key: v for key, v in _nbgrader(k).items() if key != "checksum"} == same_meta
        if e["cell_type"] == "code" or _nbgrader(e).get("solution"):
            assert k == e, f"{path.stem}: cell {e.get('id')} differs between the releases"
        else:  # the same figures, each in its Korean drawing where one exists
            assert set(k.get("attachments", {})) == set(e.get("attachments", {}))
    points = [(_nbgrader(c)["grade_id"], _nbgrader(c).get("points")) for c in en["cells"]
              if _nbgrader(c).get("grade")]
    assert points == [(_nbgrader(c)["grade_id"], _nbgrader(c).get("points")) for c in ko["cells"]
                      if _nbgrader(c).get("grade")]


# ------------------------------------------------------------------- nothing left in English

_CODE_FENCE = re.compile(r"```.*?```", re.S)
#: not prose: code spans, formulas, link targets, HTML, addresses, quoted messages and labels
_SPANS = re.compile(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\]\([^)]*\)|<[^>]+>|https?://\S+"
                    r"|\"[^\"\n]*\"", re.S)
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]+")
_HANGUL = re.compile(r"[\uac00-\ud7a3]")


def _kept_in_english() -> set[str]:
    """Words a Korean paragraph may hold: the glossary's English terms, split into words."""
    from test_glossary import glossary

    words = {w.lower() for row in glossary() for form in row.korean for w in _WORD.findall(form)}
    return words | {"numba", "cuda", "colab", "numpy", "cupy", "python", "jupyterlab", "google",
                    "drive", "nvidia", "nvrtc", "ptxas", "cublas", "sycl", "tesla",
                    "matplotlib", "ipywidgets", "notebooks", "gflop", "tflop", "flop", "flops",
                    "byte", "bytes", "ms", "host", "device", "offset", "launch"}


def english_left(markdown: str, allowed: set[str] | None = None) -> list[str]:
    """Paragraphs of a markdown text still in English: three or more English words, other than
    identifiers, formulas, code spans, link targets and the words a translation keeps, and no
    Hangul; or six such words in a row."""
    allowed = _kept_in_english() if allowed is None else allowed
    left = []
    for block in translation.blocks(_CODE_FENCE.sub(" ", markdown)):
        if not translation.translatable(block):
            continue
        plain = _SPANS.sub(" ", block)
        words = [w for w in _WORD.findall(plain)
                 if w.lower() not in allowed and not re.search(r"[A-Z].*[A-Z]|_|\d", w)]
        run = longest = 0
        for token in re.findall(r"[A-Za-z][A-Za-z'’-]+|[^\sA-Za-z]+", plain):
            english = bool(_WORD.fullmatch(token)) and token in words
            run = run + 1 if english else 0
            longest = max(longest, run)
        if (len(words) >= 3 and not _HANGUL.search(plain)) or longest >= 6:
            left.append(block.strip().splitlines()[0][:80])
    return left


@pytest.mark.parametrize("path", sorted(KO.glob("*.ipynb")), ids=lambda p: p.stem)
def test_every_read_only_markdown_cell_of_the_korean_release_is_korean(path: Path) -> None:
    nb = json.loads(path.read_text())
    prose = [c for c in nb["cells"] if translation.is_prose(c)]
    assert prose, f"{path.name} has no markdown: the test would prove nothing"
    left = [f"{c.get('id')}: {p}" for c in prose for p in english_left(_text(c))]
    assert not left, f"{path.name}: English left in the Korean release: {left}"


def test_the_english_check_finds_an_english_paragraph_and_passes_korean_with_identifiers(
) -> None:
    english = "## Tests\n\nThe grader re-runs each test cell with your definitions only."
    assert english_left(english) == [english.split("\n\n")[1]]
    mixed = ("tiled 커널은 `make_gemm_tiled(tile)`를 반환한다. 이 문장은 한국어로 쓰였지만 "
             "then this sentence switches to English halfway through it.")
    assert english_left(mixed) != []
    korean = ("`check_tiled_gemm`은 shared memory 타일과 $T\\times T$ 블록, Roofline, "
              "occupancy를 검사한다.\n\n```python\nfor tile in (4, 8):\n    run(tile)\n```")
    assert english_left(korean) == []
    for path in EN[:2]:  # the English release itself is flagged, cell after cell
        nb = json.loads(path.read_text())
        assert sum(bool(english_left(_text(c))) for c in nb["cells"]
                   if translation.is_prose(c)) >= 3


# ------------------------------------------------------------------ complete and not stale


def test_the_catalogs_are_complete_and_current() -> None:
    assert translation.check(ROOT, "ko") == []


@pytest.fixture
def course(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "source" / "week4", tmp_path / "source" / "week4")
    shutil.copytree(ROOT / "i18n", tmp_path / "i18n")
    shutil.copytree(ROOT / "release" / "week4", tmp_path / "release" / "week4")
    return tmp_path


def _edit_source(course: Path, old: str, new: str) -> None:
    path = course / "source" / "week4" / "01_arithmetic_intensity.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "markdown" and old in c.source)
    cell.source = cell.source.replace(old, new)
    nbformat.write(nb, path)
    release = course / "release" / "week4" / path.name  # as nbgrader would copy it
    rel = nbformat.read(release, as_version=4)
    next(c for c in rel.cells if c.get("id") == cell.id).source = cell.source
    nbformat.write(rel, release)


def _translation_command(*args: str) -> subprocess.CompletedProcess:
    """``python -m autograder translation …``, the command translators type (README)."""
    return subprocess.run([sys.executable, "-m", "autograder", "translation", *args],
                          capture_output=True, text=True, timeout=120)


def test_the_translation_command_passes_the_current_catalogs_and_names_a_stale_one(
        course: Path) -> None:
    ok = _translation_command("check", "--root", str(ROOT))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "ko: every paragraph translated and current" in ok.stdout
    _edit_source(course, "Only traffic to the GPU's big", "Only the traffic to the GPU's large")
    stale = _translation_command("check", "--root", str(course))
    assert stale.returncode == 1 and "untranslated: [definition]" in stale.stdout
    assert "ko: 2 problem(s)" in stale.stdout


def test_a_changed_english_paragraph_fails_until_it_is_translated_again(course: Path) -> None:
    old = "Only traffic to the GPU's big"
    _edit_source(course, old, "Only the traffic to the GPU's large")
    problems = translation.check(course, "ko")  # the new English, and the old entry
    assert len(problems) == 2 and "untranslated: [definition] \"Only the traffic" in problems[0]
    assert "stale (not in the source any more; run update): [definition] \"Only traffic" \
        in problems[1]
    with pytest.raises(translation.TranslationError, match="1 paragraph"):
        translation.write_release(course, "ko")

    translation.update(course, "ko")  # msgmerge: the old translation comes back, fuzzy
    po = course / "i18n" / "ko" / "week4" / "01_arithmetic_intensity.po"
    text = po.read_text()
    assert "#, fuzzy" in text and "#| msgid \"\" \"Only traffic to the GPU's big" in text
    problems = translation.check(course, "ko")
    assert len(problems) == 1 and problems[0].startswith(
        "i18n/ko/week4/01_arithmetic_intensity.po: fuzzy")
    with pytest.raises(translation.TranslationError):
        translation.write_release(course, "ko")

    with po.open("rb") as fh:  # the translator checks it and drops the flag
        catalog = read_po(fh)
    entry = next(m for m in catalog if m.fuzzy and m.id)
    entry.flags.discard("fuzzy")
    translation.write_catalog(po, catalog)
    assert translation.check(course, "ko") == []
    assert translation.write_release(course, "ko")


def test_a_new_paragraph_arrives_untranslated_and_a_removed_one_is_not_kept_active(
        course: Path) -> None:
    path = course / "source" / "week4" / "00_setup.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source += "\n\nA brand-new paragraph about warps."
    removed = nb.cells[-1].source
    nb.cells[-1].source = "## Next"
    nbformat.write(nb, path)
    translation.update(course, "ko")
    problems = translation.check(course, "ko")
    assert problems == ["i18n/ko/week4/00_setup.po: untranslated: [intro] "
                        "'A brand-new paragraph about warps.'"]
    text = (course / "i18n" / "ko" / "week4" / "00_setup.po").read_text()
    gone = removed.split("\n\n")[1].split(",")[0]  # "If the smoke test printed ✓"
    assert "#~ msgid" in text and gone in text[text.index("#~ msgid"):]  # kept, obsolete


def test_an_entry_the_source_no_longer_has_is_stale(course: Path) -> None:
    po = course / "i18n" / "ko" / "week4" / "00_setup.po"
    with po.open("rb") as fh:
        catalog = read_po(fh)
    catalog.add("A paragraph nobody wrote.", "아무도 쓰지 않은 문단.", context="intro")
    translation.write_catalog(po, catalog)
    assert translation.check(course, "ko") == [
        "i18n/ko/week4/00_setup.po: stale (not in the source any more; run update): "
        "[intro] 'A paragraph nobody wrote.'"]


def test_a_translation_must_keep_numbers_code_formulas_and_links() -> None:
    english = "A T4 moves `320 GB/s`: $BW\\times AI$ at 25.4 FLOP/byte, see [it](attachment:a.png)."
    assert translation.carried_over(english, "T4는 `320 GB/s`: $BW\\times AI$, 25.4, "
                                             "[그림](attachment:a.png).") == []
    assert translation.carried_over(english, "T4는 320 GB/s, 25 FLOP/byte.") == [
        "code '`320 GB/s`'", "formula '$BW\\\\times AI$'", "link 'attachment:a.png'",
        "number 25.4"]


def test_blocks_keep_fenced_code_whole_and_translate_only_prose() -> None:
    text = ("Run this:\n\n```python\nx = 1\n\ny = 2\n```\n\n![](attachment:f.png)\n\n"
            "![A figure](attachment:g.png)\n\n$$x = 1$$\n\nDone.")
    assert translation.blocks(text) == ["Run this:", "```python\nx = 1\n\ny = 2\n```",
                                        "![](attachment:f.png)", "![A figure](attachment:g.png)",
                                        "$$x = 1$$", "Done."]
    assert [translation.translatable(b) for b in translation.blocks(text)] == [
        True, False, False, True, False, True]  # alt text is prose


def test_a_missing_catalog_is_a_clear_error(course: Path) -> None:
    (course / "i18n" / "ko" / "week4" / "05_roofline.po").unlink()
    assert any("05_roofline.po: no catalog" in p for p in translation.check(course, "ko"))


# ------------------------------------------------------------------------------- grading


def test_a_notebook_says_its_language_and_one_that_lost_it_is_recognised() -> None:
    en = json.loads(EN[1].read_text())
    ko = json.loads((KO / EN[1].name).read_text())
    assert languages.notebook_language(en) == "en" and languages.notebook_language(ko) == "ko"
    for nb in (en, ko):
        nb["metadata"].pop("course")
    assert languages.notebook_language(en) == "en" and languages.notebook_language(ko) == "ko"
    path = languages.release_notebook(ROOT, "week4", "05_roofline", "ko")
    assert path == KO / "05_roofline.ipynb"


def test_make_release_stops_on_a_stale_catalog_after_writing_the_english_release(
        course: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from autograder.cli import harness

    ran = []
    monkeypatch.setattr(harness, "nbgrader", lambda *args, **kw: ran.append(args))
    _edit_source(course, "Only traffic to the GPU's big", "Only the traffic to the GPU's large")
    with pytest.raises(SystemExit, match=r"release/week4 was built; the ko release was not "
                                         r"written: 1 paragraph\(s\) have no translation"):
        harness.build_release(course)
    assert ran == [("generate_assignment", "week4", "--force")]
    assert not (course / "release-ko").exists()
    shutil.rmtree(course / "i18n")  # a course taught in English only: no Korean release
    harness.build_release(course)
    assert not (course / "release-ko").exists()


def test_the_korean_release_shows_the_figures_drawn_in_korean() -> None:
    """Each figure a Korean notebook shows is its Korean drawing (assets/ko/), not the English."""
    shown = 0
    for path in sorted((ROOT / "release-ko/week4").glob("*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            for name, data in cell.get("attachments", {}).items():
                drawn = ROOT / "assets/ko" / name
                assert drawn.is_file(), f"{path.name} shows {name}, which has no Korean drawing"
                assert base64.b64decode(data["image/png"]) == drawn.read_bytes(), (path.name, name)
                assert drawn.read_bytes() != (ROOT / "assets" / name).read_bytes()
                shown += 1
    assert shown >= 2
