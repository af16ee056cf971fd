"""Progress lines, the per-notebook summary, hand grades in the table, the worker count, and
the gradebook merge of the Slurm engine (on small gradebooks built with nbgrader's API)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from autograder import engines
from autograder.engines import local, progress, slurm
from autograder.results import table
from autograder.results.table import Row
from autograder.runner.names import ASSIGNMENT


def test_a_line_per_student_and_a_bar_over_the_class() -> None:
    out, bar = io.StringIO(), io.StringIO()
    with progress.Progress(2, out=out, bar=bar, show_bar=True) as p:
        p.done(progress.StudentResult("ada", 6, 48, 50, 93.4))
        p.done(progress.StudentResult("ben", 3, 11, 50, 41.0, ok=False))
    lines = out.getvalue().splitlines()
    assert lines[0].split() == ["ada", "6", "notebooks", "graded", "48/50", "93", "s"]
    assert lines[1].startswith("ben") and "1" not in lines[1].split()[1:2]
    assert "GRADING FAILED" in lines[1] and "GRADING FAILED" not in lines[0]
    assert "2/2" in bar.getvalue() and "student" in bar.getvalue()
    again = progress.StudentResult.from_json(p.results[0].to_json())
    assert again == p.results[0]


def test_the_bar_stays_out_of_logs() -> None:
    bar = io.StringIO()  # not a terminal: no bar unless asked for
    with progress.Progress(1, out=io.StringIO(), bar=bar) as p:
        p.done(progress.StudentResult("ada", 1, 1, 1, 1.0))
    assert bar.getvalue() == ""


def _rows() -> list[Row]:
    ada = Row("ada", scores={"01": (11, 11), "03": (11, 11), "06": (5, 7)},
              not_measured=["03:tiled_gemm_speedup"], manual=["06:why_not_tile_32"])
    gus = Row("gus", scores={"01": (6, 11), "03": (0, 11), "06": (0, 7)}, missing=["03", "06"],
              failed=["01"], notes=["01: the kernel died"])
    cam = Row("cam", scores={"01": (0, 11), "03": (0, 11), "06": (2, 7)},
              not_measured=["03:tiled_gemm_speedup"], hand_graded=["06:why_not_tile_32 2/2"])
    return [ada, gus, cam]


def test_summary_per_notebook() -> None:
    lines = progress.summary(["01", "03", "06"], _rows()).splitlines()
    table = {ln.split()[0]: ln.split()[1:] for ln in lines[3:]}
    assert table["01"] == ["3", "5.7/11", "0", "1", "0"]  # (11 + 6 + 0) / 3, gus failed
    assert table["03"] == ["2", "5.5/11", "2", "0", "0"]  # gus did not hand it in
    assert table["06"] == ["2", "3.5/7", "0", "0", "1"]   # ada still waits for hand grading


def test_the_table_shows_hand_grades_once_given() -> None:
    text = table.render(["01", "03", "06"], _rows())

    def block(student: str) -> str:  # the student's row and the notes wrapped below it
        lines = text.splitlines()
        start = next(i for i, ln in enumerate(lines) if ln.startswith(student))
        end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith(" "))
        return " ".join(ln.strip() for ln in lines[start:end])

    ada, cam = block("ada"), block("cam")
    assert "to grade by hand: 06:why_not_tile_32" in ada and "graded by hand" not in \
        ada.replace("to grade by hand", "")
    assert "graded by hand: 06:why_not_tile_32 2/2" in cam and "to grade" not in cam


def test_the_table_fits_100_columns_and_wraps_notes_at_words() -> None:
    """Issue 38: rows of ~145 columns and notes of ~900 wrapped in a terminal, and reasons were
    cut at 200 characters mid-word. Every line fits 100 columns (Hangul counts two); a long
    note wraps at spaces and ends with "…" at a word; every word of a long reason that is
    shown is whole."""
    from course.runtime.i18n import text_width

    rows = _rows()
    words = [f"word{i:03d}" for i in range(200)]
    rows[0].notes.append("long: " + " ".join(words))
    rows[1].notes.append("한국어 노트 " * 80)
    rows[1].lost["01:x"] = "AssertionError: " + " ".join(words)
    text = table.render(["01", "03", "06"], rows)
    assert max(text_width(ln) for ln in text.splitlines()) <= table.WIDTH
    shown = " ".join(text.split()).replace("…", " ")
    assert "word000" in shown and "word199" not in shown  # shortened, at a word
    for token in shown.split():
        if token.startswith("word"):
            assert token.rstrip(";,") in words, token  # never cut inside a word
    assert "grade-reasons.csv" in text and "per cell, then" in text


def test_a_long_student_id_is_shown_whole_with_its_scores_under_it() -> None:
    """An id too long for the student column (cas_cuda_deletes_and_edits_tests on a table of
    ten notebooks) is never cut: it stands on its own line, its scores on the next, and the
    table still fits 100 columns."""
    rows = _rows()
    rows[0].student = "a_student_id_long_enough_to_need_a_line_of_its_own"
    notebooks = [f"{i:02d}_notebook" for i in range(10)]
    text = table.render(notebooks, rows)
    lines = text.splitlines()
    assert max(len(ln) for ln in lines) <= table.WIDTH
    at = lines.index(rows[0].student)
    assert lines[at + 1].startswith(" ") and lines[at + 1].rstrip().endswith(
        "{:g}/{:g}".format(*table.total(rows[0], notebooks)))


def test_the_limits_line_states_the_limits_as_graded(tmp_path) -> None:
    import json

    (tmp_path / "autograded").mkdir()
    (tmp_path / "autograded" / table.LIMITS_FILE).write_text(json.dumps(
        {"sandbox": "bubblewrap", "cell_timeout": 60, "after_timeout": 20, "gpu": False}))
    line = table.limits_line(tmp_path)
    assert "as graded" in line and "60 s per cell, then 20 s for the rest" in line
    assert line.count(" s ") + line.count(" s,") == 2  # one set of time limits, stated once


def test_workers_default_and_override(monkeypatch) -> None:
    from autograder.engines.gpus import GradingGpu

    monkeypatch.delenv("COURSE_GRADING_WORKERS", raising=False)
    monkeypatch.setattr(local.os, "cpu_count", lambda: 16)
    monkeypatch.setattr(local, "grading_gpus", lambda: [GradingGpu("0", "stand-in")])
    assert local.workers() == 20  # a GPU machine: a quarter more slots than cores
    assert local.workers_reason() == "16 cores, 1 GPU: 1.25 slots per core"
    monkeypatch.setattr(local, "grading_gpus", lambda: [])
    assert local.workers() == 4
    monkeypatch.setenv("COURSE_GRADING_WORKERS", "3")
    assert local.workers() == 3
    assert local.workers_reason() == "COURSE_GRADING_WORKERS"
    monkeypatch.setenv("COURSE_GRADING_WORKERS", "lots")
    with pytest.raises(SystemExit, match="whole number"):
        local.workers()


def test_unknown_engine_and_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown engine 'ray'"):
        engines.make_engine("ray", workers=1)
    with pytest.raises(ValueError, match="at least 1"):
        local.LocalEngine(0)
    with pytest.raises(ValueError, match="at least 1"):
        slurm.SlurmEngine(per_task=0)


def _gradebooks(tmp_path: Path, students: dict[str, list[str]]) -> dict[str, Path]:
    """Gradebooks with one notebook (an autograded and a hand-graded cell), copies of one
    another (creating one runs alembic: seconds), each with its own students."""
    import shutil

    from nbgrader.api import Gradebook

    base = tmp_path / "base.db"
    with Gradebook(f"sqlite:///{base}") as gb:
        gb.add_assignment(ASSIGNMENT)
        gb.add_notebook("06_tile_sweep", ASSIGNMENT)
        gb.add_grade_cell("blocks", "06_tile_sweep", ASSIGNMENT, max_score=2,
                          cell_type="code")
        gb.add_grade_cell("why", "06_tile_sweep", ASSIGNMENT, max_score=2,
                          cell_type="markdown")
        gb.add_solution_cell("why", "06_tile_sweep", ASSIGNMENT)
    paths = {}
    for name, who in students.items():
        paths[name] = tmp_path / f"{name}.db"
        shutil.copy(base, paths[name])
        with Gradebook(f"sqlite:///{paths[name]}") as gb:
            for s in who:
                gb.add_student(s)
                gb.add_submission(ASSIGNMENT, s)
    return paths


def test_merge_takes_autograder_results_and_keeps_hand_grades(tmp_path: Path) -> None:
    from nbgrader.api import Gradebook

    dbs = _gradebooks(tmp_path, {"shard": ["ada", "ben"], "course": ["ada"]})
    shard, course = dbs["shard"], dbs["course"]
    with Gradebook(f"sqlite:///{shard}") as gb:
        for s, score in (("ada", 2.0), ("ben", 0.0)):
            g = gb.find_grade("blocks", "06_tile_sweep", ASSIGNMENT, s)
            g.auto_score, g.needs_manual_grade = score, False
        gb.find_comment("why", "06_tile_sweep", ASSIGNMENT, "ada").auto_comment = "auto"
        gb.db.commit()
    with Gradebook(f"sqlite:///{course}") as gb:  # the instructor already graded ada's answer
        g = gb.find_grade("why", "06_tile_sweep", ASSIGNMENT, "ada")
        g.manual_score, g.needs_manual_grade = 1.5, False
        gb.find_comment("why", "06_tile_sweep", ASSIGNMENT, "ada").manual_comment = "good"
        gb.db.commit()
    slurm.merge_gradebook(shard, course, ["ada", "ben"])
    with Gradebook(f"sqlite:///{course}") as gb:
        assert gb.find_grade("blocks", "06_tile_sweep", ASSIGNMENT, "ada").score == 2.0
        why = gb.find_grade("why", "06_tile_sweep", ASSIGNMENT, "ada")
        assert why.manual_score == 1.5
        comment = gb.find_comment("why", "06_tile_sweep", ASSIGNMENT, "ada")
        assert (comment.auto_comment, comment.manual_comment) == ("auto", "good")
        assert gb.find_submission(ASSIGNMENT, "ada").score == 3.5
        assert gb.find_submission(ASSIGNMENT, "ben").score == 0.0  # ben came with the shard
        assert sorted(s.id for s in gb.students) == ["ada", "ben"]


def _restored(course: Path, nb: dict) -> dict:
    """What RestoreCells, configured for ``course`` as autograde there is, did to ``nb``."""
    from nbformat import from_dict

    from autograder.grading.restore import RESTORED_KEY, RestoreCells

    resources = {"nbgrader": {"assignment": ASSIGNMENT, "notebook": "01_arithmetic_intensity"}}
    out, _ = RestoreCells(course_root=str(course)).preprocess(from_dict(nb), resources)
    return dict(out.metadata[RESTORED_KEY])


def test_a_shard_copy_puts_a_deleted_test_cell_back_as_the_course_does(tmp_path: Path) -> None:
    """A Slurm shard grades in its own course copy; a student who deleted a test cell must get
    it back there as in the course (else the cell is left to the grader, not scored)."""
    import json
    import shutil

    import sample_class as samples

    root = Path(__file__).resolve().parents[1]
    course = tmp_path / "course"
    course.mkdir()
    for name in slurm.COURSE_FILES:
        if (root / name).is_dir():
            shutil.copytree(root / name, course / name)
        else:
            shutil.copy2(root / name, course / name)
    eli = samples.build_notebook(root, "01_arithmetic_intensity",
                                 samples.sample_students()["eli_deletes_tests"])
    folder = course / "submitted" / "eli" / ASSIGNMENT
    folder.mkdir(parents=True)
    (folder / "01_arithmetic_intensity.ipynb").write_text(json.dumps(eli))
    run = tmp_path / "run"
    run.mkdir()
    (run / "base.db").write_bytes(b"")
    plan = {"root": str(course), "shards": [["eli"]]}

    shard, students = slurm.prepare_shard(run, plan, 0)
    assert students == ["eli"]
    assert (shard / "submitted" / "eli" / ASSIGNMENT / "01_arithmetic_intensity.ipynb").exists()
    added = {"metadata_restored": [], "cells_added": ["ai_gemm_tiled_model"]}
    assert _restored(course, eli) == added
    assert _restored(shard, eli) == added

    # Without the release: refused with the reason, never graded as it is.
    shutil.rmtree(shard / "release")
    with pytest.raises(FileNotFoundError, match="no release notebook"):
        _restored(shard, eli)
    shutil.rmtree(course / "release")
    with pytest.raises(local.GradingError, match=f"no release/{ASSIGNMENT}"):
        slurm.prepare_shard(run, plan, 0)
