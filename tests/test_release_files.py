"""What travels with the student's notebooks is generated and complete: the setup cell that
opens every notebook, figures as cell attachments, the README's Open-in-Colab links, and the
loud warning while the course's repository URL is still the placeholder."""

from __future__ import annotations

import ast
import base64
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.cli import harness
from autograder.release import generated as release
from course.runtime import config, setup_cell

ROOT = Path(__file__).resolve().parents[1]
SOURCE = sorted((ROOT / "source" / "week4").glob("*.ipynb"))
RELEASE = sorted((ROOT / "release" / "week4").glob("*.ipynb"))


def first_code_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if c.cell_type == "code")


# ------------------------------------------------------------------------------ setup cell


@pytest.mark.parametrize("path", SOURCE + RELEASE, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_notebook_opens_with_the_generated_setup_cell(path: Path) -> None:
    cell = first_code_cell(nbformat.read(path, as_version=4))
    assert cell.source == setup_cell.source(), (
        f"{path.name}: the first code cell is not the generated setup cell; run "
        "`python -m autograder.release` (make release)")
    # Gradebooks of an earlier release refer to the setup cells by these ids.
    expected = "colab_install" if path.name == "00_setup.ipynb" else "setup"
    assert cell.metadata["nbgrader"]["grade_id"] == expected


def test_the_setup_cell_works_before_course_exists(tmp_path: Path) -> None:
    text = setup_cell.source()
    tree = ast.parse(text)  # plain Python: the grader's source tools parse it
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert all("course" not in ast.unparse(n) for n in imports[:4]), "course imported too early"
    assert f'"{config.pip_requirement()}"' in text and "--upgrade" not in text
    # Outside Colab, with no course package: how to install it, in English and in Korean (no
    # catalog to choose one from yet).
    env = {k: v for k, v in os.environ.items() if k != "COLAB_RELEASE_TAG"}
    proc = subprocess.run([sys.executable, "-S", "-c", text], env=env, capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)  # -S: no site-packages
    assert proc.returncode != 0
    english, korean = proc.stderr.strip().splitlines()[-2:]
    assert english == ("ModuleNotFoundError: The course package is not installed. In a "
                       f'terminal, run: pip install "{config.pip_requirement()}", then restart '
                       "the kernel.")
    assert korean == ("course 패키지가 설치되어 있지 않다. 터미널에서 pip install "
                      f'"{config.pip_requirement()}" 명령을 실행한 다음 커널을 다시 시작하자.')


def test_the_setup_cell_takes_a_local_requirement_and_refuses_quotes() -> None:
    assert '"file:///tmp/x.whl"' in setup_cell.source("file:///tmp/x.whl")
    with pytest.raises(ValueError, match="quotes"):
        setup_cell.source('x" ; import os; "')


# ----------------------------------------------------------------------------- in sync


def test_source_notebooks_and_readme_are_up_to_date() -> None:
    """``python -m autograder.release --check``, as an instructor runs it, finds nothing stale."""
    proc = subprocess.run([sys.executable, "-m", "autograder.release", "--check", "--root",
                           str(ROOT)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"{proc.stdout}{proc.stderr}; run `python -m autograder.release`"
    assert "setup cells, figures and Colab links are up to date" in proc.stdout


@pytest.fixture
def course_copy(tmp_path: Path) -> Path:
    """source/, assets/ and the README of the repository, in a scratch folder."""
    shutil.copytree(ROOT / "source", tmp_path / "source")
    shutil.copytree(ROOT / "assets", tmp_path / "assets")
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    return tmp_path


def test_sync_restores_an_edited_setup_cell_and_a_repository_image_link(course_copy):
    path = course_copy / "source" / "week4" / "03_tiled_gemm.ipynb"
    nb = nbformat.read(path, as_version=4)
    first_code_cell(nb).source = "import course"
    figure = next(c for c in nb.cells if "attachment:tiling.png" in c.source)
    figure.source = figure.source.replace("attachment:tiling.png", "../../assets/tiling.png")
    del figure["attachments"]
    nbformat.write(nb, path)
    assert release.broken_images(nb), "the image check must see the repository link"
    assert release.sync(course_copy, write=False).changed == ["source/week4/03_tiled_gemm.ipynb"]
    release.sync(course_copy)
    nb = nbformat.read(path, as_version=4)
    assert first_code_cell(nb).source == setup_cell.source()
    assert release.broken_images(nb) == []
    assert release.sync(course_copy, write=False).changed == []


def test_a_new_notebook_gets_a_setup_cell_before_its_code(course_copy):
    path = course_copy / "source" / "week4" / "08_new.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# New"), nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(nb, path)
    old_style = course_copy / "source" / "week4" / "02_naive_gemm.ipynb"
    nb2 = nbformat.read(old_style, as_version=4)
    first_code_cell(nb2).source = ("import course\nfrom course.tools import backend\n\n"
                                   "backend.show();")
    del first_code_cell(nb2).metadata["nbgrader"]  # recognised by its text alone
    nbformat.write(nb2, old_style)
    release.sync(course_copy)
    cells = nbformat.read(path, as_version=4).cells
    assert [c.source for c in cells[1:]] == [setup_cell.source(), "x = 1"]
    assert cells[1].id == "setup" and cells[1].metadata.nbgrader["locked"] is True
    assert first_code_cell(nbformat.read(old_style, as_version=4)).source == setup_cell.source()
    assert len(nbformat.read(old_style, as_version=4).cells) == len(nb2.cells)  # replaced


def test_attachments_follow_the_figures_in_assets(course_copy):
    other = (ROOT / "assets" / "roofline_two_bandwidths.png").read_bytes()
    (course_copy / "assets" / "tiling.png").write_bytes(other)
    assert release.sync(course_copy, write=False).changed == ["source/week4/03_tiled_gemm.ipynb"]


def test_sync_refuses_images_that_cannot_travel(course_copy):
    path = course_copy / "source" / "week4" / "01_arithmetic_intensity.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source += "\n\n![a plot](plots/mine.png)"
    nbformat.write(nb, path)
    with pytest.raises(release.ReleaseSourceError, match="01_arithmetic_intensity.ipynb: "
                       "cell 0 .intro. shows 'plots/mine.png'"):
        release.sync(course_copy, write=False)
    nb.cells[0].source = nb.cells[0].source.replace("plots/mine.png", "assets/nope.png")
    nbformat.write(nb, path)
    with pytest.raises(release.ReleaseSourceError, match="nope.png does not exist"):
        release.sync(course_copy, write=False)


def test_readme_without_markers_is_an_error(course_copy):
    (course_copy / "README.md").write_text("# no markers\n")
    with pytest.raises(release.ReleaseSourceError, match="colab-links section"):
        release.sync(course_copy, write=False)


# ------------------------------------------------------------------------- (c) images


@pytest.mark.parametrize("path", RELEASE, ids=lambda p: p.name)
def test_no_broken_image_link_in_a_release_notebook(path: Path) -> None:
    assert release.broken_images(nbformat.read(path, as_version=4)) == []


def test_the_release_figures_are_attachments_with_the_assets_bytes() -> None:
    shown = {}
    for path in RELEASE:
        for cell in nbformat.read(path, as_version=4).cells:
            for name, data in cell.get("attachments", {}).items():
                shown[name] = base64.b64decode(data["image/png"])
    assert set(shown) == {"tiling.png", "roofline_two_bandwidths.png"}  # not vacuous
    for name, data in shown.items():
        assert data == (ROOT / "assets" / name).read_bytes()


def test_broken_images_finds_each_kind_of_broken_link() -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_markdown_cell(
        "![a](attachment:a.png) ![b](attachment:b.png) ![c](../../assets/c.png) "
        '<img src="d.png"> ![e](https://example.org/e.png)')
    cell.attachments = {"a.png": {"image/png": base64.b64encode(b"GIF89a").decode()}}
    nb.cells = [cell]
    problems = release.broken_images(nb)
    assert [p.split(": ")[1] for p in problems] == [
        "attachment:a.png", "attachment:b.png", "../../assets/c.png", "d.png"]
    assert "not a PNG" in problems[0] and "no such attachment" in problems[1]


def _html(nb: nbformat.NotebookNode, template: str | None = None) -> str:
    from nbconvert.exporters import HTMLExporter
    from traitlets.config import Config

    c = Config()
    resources = {}
    if template == "feedback":  # what `nbgrader generate_feedback` renders
        import nbgrader

        base = Path(nbgrader.__file__).parent / "server_extensions" / "formgrader"
        c.HTMLExporter.template_name = "feedback"
        c.HTMLExporter.extra_template_basedirs = [str(base / "templates")]
        c.HTMLExporter.extra_template_paths = [
            str(base / "static" / "node_modules" / "bootstrap" / "dist" / "css")]
        for cell in nb.cells:
            if cell.metadata.get("nbgrader", {}).get("grade"):
                cell.metadata.nbgrader["score"] = 0
        resources = {"nbgrader": {"notebook": "03", "score": 0, "max_score": 1,
                                  "student": "s", "late_penalty": 0, "timestamp": "now"}}
    body, _ = HTMLExporter(config=c).from_notebook_node(nb, resources=resources)
    return body


@pytest.mark.parametrize("template", [None, "feedback"])
def test_html_shows_the_attached_figures(template: str | None) -> None:
    nb = nbformat.read(ROOT / "release" / "week4" / "03_tiled_gemm.ipynb", as_version=4)
    body = _html(nb, template)
    assert re.search(r'<img alt="One output tile[^>]*src="data:image/png;base64,', body)
    assert "attachment:" not in body


# ------------------------------------------------------------------------ README, links


def test_readme_links_every_release_notebook_on_colab() -> None:
    text = (ROOT / "README.md").read_text()
    section = text[text.index(release.BEGIN_LINKS):text.index(release.END_LINKS)]
    for path in RELEASE:
        assert f"({config.colab_url(path.name)})" in section
    # keep this repository private; publish the student distribution (where students install
    # from: COURSE_REPO_URL), and how to update it: one short README section, the whole story
    # in docs/instructor.md
    assert "keep it private" in text
    publish = text[text.index("## Publish for students"):].split("\n## ", 1)[0]
    for words in ("`COURSE_REPO_URL`", "make publish", "COMMIT=1", "docs/instructor.md"):
        assert words in publish, words
    guide = (ROOT / "docs" / "instructor.md").read_text()
    section = guide[guide.index("## Publishing for students"):].split("\n## ", 1)[0]
    assert section.split("\n\n", 1)[1].startswith(
        "**Keep this repository private; publish the student distribution.**")
    for words in ("`COURSE_REPO_URL`", "make publish", "**When the release changes**",
                  "`COURSE_VERSION`", "push --follow-tags"):
        assert words in section, words


def test_readme_links_every_korean_release_notebook_on_colab_in_its_korean_section() -> None:
    text = (ROOT / "README.md").read_text()
    korean = text[text.index("## 한국어"):]
    section = korean[korean.index(release.BEGIN_LINKS_KO):korean.index(release.END_LINKS_KO)]
    ko = sorted((ROOT / "release-ko" / "week4").glob("*.ipynb"))
    assert [p.name for p in ko] == [p.name for p in RELEASE]
    for path in ko:
        url = config.colab_url(path.name, folder="release-ko/week4")
        assert f"({url})" in section and f"/blob/{config.COURSE_REF}/release-ko/week4/" in url
    assert "release/week4/" not in section


def test_colab_urls_are_built_from_the_repository_url() -> None:
    assert config.colab_url("02_naive_gemm.ipynb", "https://github.com/me/gpu.git/", "v3") == (
        "https://colab.research.google.com/github/me/gpu/blob/v3/release/week4/"
        "02_naive_gemm.ipynb")
    with pytest.raises(ValueError, match="COURSE_REPO_URL in course/runtime/config.py"):
        config.colab_url("x.ipynb", "https://gitlab.com/me/gpu")


def test_release_warns_loudly_while_the_url_is_the_placeholder(monkeypatch, capsys, tmp_path):
    built = []
    monkeypatch.setattr(harness, "build_release", lambda root, sync=False: built.append(sync))
    monkeypatch.chdir(tmp_path)  # harness.main changes into the course directory
    assert config.is_placeholder()
    harness.main(["release", "--root", str(tmp_path)])
    err = capsys.readouterr().err
    assert built == [True]
    assert "COURSE_REPO_URL is still the placeholder" in err and "course/runtime/config.py" in err
    monkeypatch.setattr(config, "COURSE_REPO_URL", "https://github.com/someone/week4")
    assert release.placeholder_warning() is None
    harness.main(["release", "--root", str(tmp_path)])
    assert "placeholder" not in capsys.readouterr().err


# ------------------------------------------------------------------------- notebook 00


def test_notebook_00_lists_every_notebook_of_the_week() -> None:
    intro = nbformat.read(SOURCE[0], as_version=4).cells[0].source
    for path in SOURCE:
        assert f"`{path.stem}`" in intro, f"notebook 00's list leaves out {path.stem}"
