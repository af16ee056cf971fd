"""A newcomer's afternoon (issue 38): the instructor's commands driven through the edge cases a
new instructor meets, each asserting the sentence it prints and its exit status.

"Nothing" is never success: an empty class, a table before any grading, an unknown LMS,
nobody with an LMS id, publishing with the placeholder URL — a sentence naming the next step
and exit 1, never a stale table or an empty file. Messages name make's variables when run
through make (the Makefile sets ``COURSE_VIA_MAKE=1``) and the Python flags otherwise. The
last test grades a class twice (slow): the same totals both times, and a student no longer in
``submitted/`` is marked as from the earlier grading, not shown as if graded now.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import handback_course
import pytest

from autograder.viewing.terminal import VIA_MAKE

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str, make: bool = True, root: Path | None = None,
         module: str = "autograder", alone: bool = False) -> subprocess.CompletedProcess[str]:
    """The command as the instructor runs it: its exit status, what it printed.

    The harness's commands (``python -m autograder …``) run in this process, through the
    module's own ``main`` with its ``SystemExit`` turned into a status and a message, as the
    interpreter does: each saves the 2-3 CPU-s of a new interpreter importing the grader.
    ``alone`` (grading) and other modules run as their own process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env[VIA_MAKE] = "1" if make else "0"
    where = ["--root", str(root)] if root is not None else []
    argv = [*args, *where]
    if alone or module != "autograder":
        return subprocess.run([sys.executable, "-m", module, *argv], env=env, cwd=ROOT,
                              capture_output=True, text=True, timeout=600)
    from autograder.cli import harness

    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    saved = os.environ.get(VIA_MAKE)
    os.environ[VIA_MAKE] = env[VIA_MAKE]
    try:
        os.chdir(ROOT)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = harness.main(argv)
            except SystemExit as stop:  # what the interpreter does with it
                if stop.code is None or isinstance(stop.code, int):
                    status = stop.code or 0
                else:
                    print(stop.code, file=sys.stderr)
                    status = 1
    finally:
        os.chdir(here)
        if saved is None:
            os.environ.pop(VIA_MAKE, None)
        else:
            os.environ[VIA_MAKE] = saved
    return subprocess.CompletedProcess(["python", "-m", module, *argv], status,
                                       out.getvalue(), err.getvalue())


def _fresh_course(tmp: Path) -> Path:
    root = tmp / "course"
    root.mkdir()
    shutil.copy(ROOT / "nbgrader_config.py", root)
    return root


def test_grading_an_empty_class_says_so_and_fails(tmp_path: Path) -> None:
    root = _fresh_course(tmp_path)
    for folder in (False, True):  # no submitted/ at all, then an empty one
        if folder:
            (root / "submitted").mkdir()
        out = _run("grade", root=root)
        assert out.returncode == 1, out.stdout + out.stderr
        assert "nothing to grade:" in out.stderr and "make collect ZIP=" in out.stderr
        assert "make grade again" in out.stderr
        assert "student(s) in submitted/, \n" not in out.stdout  # no half sentence
        assert "total" not in out.stdout, "a table was printed for an empty class"
    out = _run("grade", root=root, make=False)
    assert out.returncode == 1 and "python -m autograder collect --zip" in out.stderr


def test_a_table_before_any_grading_says_so_and_fails(tmp_path: Path) -> None:
    root = _fresh_course(tmp_path)
    out = _run("table", root=root)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "nothing graded yet" in out.stderr and "make grade" in out.stderr
    assert not (root / "gradebook.db").exists(), "looking created a gradebook"


@pytest.mark.parametrize("command", ["export", "return"])
def test_an_unknown_lms_names_the_choices_and_what_was_given(tmp_path: Path,
                                                             command: str) -> None:
    root = _fresh_course(tmp_path)
    out = _run(command, "--lms", "blackboard", root=root)
    assert out.returncode == 1
    assert "LMS=canvas or LMS=moodle; got blackboard" in out.stderr, out.stderr
    out = _run(command, root=root)
    assert out.returncode == 1 and "none given" in out.stderr, out.stderr
    out = _run(command, "--lms", "blackboard", root=root, make=False)
    assert "--lms canvas or --lms moodle; got blackboard" in out.stderr, out.stderr


def test_return_through_moodle_names_what_to_run_instead(tmp_path: Path) -> None:
    root = _fresh_course(tmp_path)
    out = _run("return", "--lms", "moodle", root=root)
    assert out.returncode == 1
    assert "got moodle" in out.stderr and "make export LMS=moodle" in out.stderr


@pytest.mark.parametrize("lms", ["canvas", "moodle"])
def test_nobody_matched_writes_no_file_and_fails(tmp_path: Path, lms: str) -> None:
    root = handback_course.build(tmp_path)
    (root / "collection.csv").unlink()  # nobody's LMS id is known: no zip, no mapping
    out = _run("export", "--lms", lms, root=root)
    assert out.returncode == 1, out.stdout + out.stderr
    name = {"canvas": "Canvas user id", "moodle": "Moodle participant id"}[lms]
    assert f"nothing exported to {lms.capitalize()}" in out.stderr, out.stderr
    assert f"has a {name}" in out.stderr and "no file was written" in out.stderr
    assert f"LAYOUT={lms}" in out.stderr and "MAPPING=ids.csv" in out.stderr
    assert not (root / "handback").exists() or not any((root / "handback").iterdir())
    assert "MISSING" in out.stdout  # every student is still named, with the reason


def test_publishing_with_the_placeholder_url_commits_nothing(tmp_path: Path) -> None:
    from course.runtime import config

    assert config.is_placeholder(), "the repository's URL is set: this test needs the default"
    clone = tmp_path / "week4-student"
    subprocess.run(["git", "init", "-q", str(clone)], check=True)
    out = _run("--out", str(clone), "--commit", module="autograder.publish")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "refused: nothing committed or tagged" in out.stderr
    assert "COURSE_REPO_URL" in out.stderr and "course/runtime/config.py" in out.stderr
    tags = subprocess.run(["git", "-C", str(clone), "tag"], capture_output=True, text=True)
    assert tags.stdout == "" and not (clone / "course").exists()


def test_flags_are_named_as_they_were_typed(monkeypatch, tmp_path: Path) -> None:
    from autograder.publish import __main__ as publish

    monkeypatch.setenv(VIA_MAKE, "1")
    with pytest.raises(SystemExit, match="^COMMIT=1: "):
        publish.commit_and_tag(tmp_path)
    monkeypatch.setenv(VIA_MAKE, "0")
    with pytest.raises(SystemExit, match="^--commit: "):
        publish.commit_and_tag(tmp_path)
    makefile = (ROOT / "Makefile").read_text()
    assert f"export {VIA_MAKE} := 1" in makefile


@pytest.mark.slow
def test_grading_twice_gives_the_same_totals_and_never_a_stale_row(tmp_path: Path) -> None:
    """Two students graded; then one leaves submitted/ and the class is graded again."""
    import sample_class as samples

    root = _fresh_course(tmp_path)
    shutil.copytree(ROOT / "source", root / "source")
    shutil.copytree(ROOT / "assets", root / "assets")
    out = _run("release", root=root, alone=True)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    students = samples.sample_students()
    for student in ("ana_isinstance", "abe_answer_below_its_test"):
        folder = root / "submitted" / student / "week4"
        folder.mkdir(parents=True)
        nb = samples.build_notebook(root, "01_arithmetic_intensity", students[student])
        (folder / "01_arithmetic_intensity.ipynb").write_text(json.dumps(nb))

    def grade() -> tuple[subprocess.CompletedProcess[str], dict, dict]:
        out = _run("grade", "--json", str(tmp_path / "table.json"), root=root, alone=True)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        with open(root / "grades.csv") as fh:
            csv_totals = {r["student_id"]: (float(r["score"]), float(r["max_score"]))
                          for r in csv.DictReader(fh)}
        table = json.loads((tmp_path / "table.json").read_text())
        return out, table, csv_totals

    first, table1, csv1 = grade()
    assert {s: tuple(r["total"]) for s, r in table1.items()} == csv1
    for student, (score, maximum) in csv1.items():  # the progress line: the same total
        assert any(ln.startswith(student) and f"{score:g}/{maximum:g}" in ln
                   for ln in first.stdout.splitlines()), (student, first.stdout[-2000:])
    shutil.rmtree(root / "submitted" / "abe_answer_below_its_test")
    second, table2, csv2 = grade()
    assert csv2 == csv1, "grading again changed a total"
    assert "from an earlier grading: not in submitted/ now" in \
        " ".join(table2["abe_answer_below_its_test"]["notes"])
    assert "from an earlier grading" not in " ".join(table2["ana_isinstance"]["notes"])
    assert "as graded" in second.stdout  # the limits the grading used, stated once


def test_nbgrader_export_writes_the_course_s_totals(tmp_path: Path) -> None:
    """``nbgrader export`` (what ``make table`` runs) writes ``grades.csv`` through the course's
    plugin: the grade table's total in nbgrader's columns (a student waiting for hand grading
    is out of nothing), what it is made of, and the reasons file beside it."""
    from autograder.results import table
    from autograder.runner.nbgrader_cli import nbgrader

    root = handback_course.build(tmp_path)
    assert nbgrader("export", root=root, quiet=True)
    with open(root / "grades.csv") as fh:
        rows = {r["student_id"]: r for r in csv.DictReader(fh)}
    notebooks, graded = table.collect(root)
    assert set(rows) == {r.student for r in graded}
    for row in graded:
        score, maximum = table.total(row, notebooks)
        got = rows[row.student]
        assert (float(got["score"]), float(got["max_score"])) == (score, maximum), got
        assert got["notes"] == "; ".join(table.row_notes(row))
    assert rows["4102"]["to_grade_by_hand"] == "1"
    assert (root / "grade-reasons.csv").read_text().startswith("student_id,notebook,check,reason")
