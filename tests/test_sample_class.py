"""The whole instructor pipeline on the sample class: release, autograde, feedback, table.

Runs `python -m autograder.harness demo` on a copy of the course directory, with the
repository itself hidden from student code too, and checks every sample student's score,
the feedback and the table's notes.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder import samples

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, str]:
    course = tmp_path_factory.mktemp("course")
    shutil.copytree(ROOT / "source", course / "source")
    shutil.copy(ROOT / "nbgrader_config.py", course)
    env = dict(os.environ, COURSE_SANDBOX_HIDE=str(ROOT),
               COURSE_CELL_TIMEOUT=os.environ.get("COURSE_CELL_TIMEOUT", "90"))
    table = course / "table.json"
    proc = subprocess.run([sys.executable, "-m", "autograder.harness", "demo", "--root",
                           str(course), "--json", str(table)], env=env, capture_output=True,
                          text=True, timeout=1800)
    print(proc.stdout[-6000:])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return course, json.loads(table.read_text()), proc.stdout


def test_every_sample_student_scores_as_expected(graded: tuple[Path, dict, str]) -> None:
    _, table, _ = graded
    from course import backend

    problems = samples.compare(table, gpu=backend.detect().kind == "gpu")
    assert not problems, "\n".join(problems)


def test_gpu_checks_are_reported_not_measured_without_a_gpu(graded) -> None:
    from course import backend

    if backend.detect().kind == "gpu":
        pytest.skip("this machine has a GPU: the speedup is measured")
    _, table, stdout = graded
    assert any("tiled_gemm_speedup" in x for x in table["ada_correct"]["not_measured"])
    assert "not measured" in stdout


def test_a_dying_kernel_keeps_its_row_with_the_reason(graded) -> None:
    _, table, _ = graded
    notes = " ".join(table["gus_kernel_dies"]["notes"])
    assert "kernel died" in notes


def test_feedback_never_shows_hidden_tests(graded) -> None:
    course, _, _ = graded
    hidden, visible = set(), set()
    region = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)
    for path in (course / "source" / "week4").glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            text = "".join(cell["source"])
            for m in region.finditer(text):
                hidden |= {ln.strip() for ln in m.group(1).splitlines() if len(ln.strip()) > 20}
            visible |= {ln.strip() for ln in region.sub("", text).splitlines()}
    # A line the student also sees in a visible part (even inside a longer line) is no secret.
    hidden = {h for h in hidden if not any(h in v for v in visible)}
    assert hidden, "no hidden tests found: this test would prove nothing"
    pages = list((course / "feedback").rglob("*.html"))
    assert pages, "no feedback was generated"
    for page in pages:
        text = page.read_text()
        assert "BEGIN HIDDEN TESTS" not in text, page
        import html

        plain = html.unescape(re.sub(r"<[^>]+>", "", text))
        leaked = [ln for ln in hidden if ln in plain]
        assert not leaked, f"{page.name} shows hidden-test lines: {leaked[:2]}"


def test_student_code_could_not_see_the_instructors_files(graded) -> None:
    course, _, _ = graded
    folder = course / "autograded" / "max_reads_instructor_files" / "week4"
    outputs = []
    for path in folder.glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            for o in cell.get("outputs", []):
                if o.get("output_type") == "stream":
                    text = o.get("text", "")
                    outputs.append("".join(text) if isinstance(text, list) else text)
    seen = "".join(outputs)
    assert "instructor files found: 0" in seen, seen[-500:]


def test_a_kernel_without_the_grid_stride_loop_is_told_how_to_fix_it(graded) -> None:
    course, _, _ = graded
    import html

    page = course / "feedback" / "nia_one_thread_per_element" / "week4" / "05_roofline.html"
    plain = html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))
    assert "each thread handled one element, but the grid has only 256 threads" in plain
    assert "for i in range(cuda.grid(1), c.size, cuda.gridsize(1))" in plain


def test_feedback_shows_the_notebooks_figures(graded) -> None:
    """Figures are cell attachments: the feedback HTML carries them, no link to resolve."""
    course, _, _ = graded
    for name, alt in [("01_arithmetic_intensity", "A roofline with one compute peak"),
                      ("03_tiled_gemm", "One output tile")]:
        text = (course / "feedback" / "ada_correct" / "week4" / f"{name}.html").read_text()
        assert re.search(rf'<img alt="{alt}[^"]*" src="data:image/png;base64,', text), name
        assert "attachment:" not in text and "assets/" not in text, name
