"""The local engine's grading slots: a long-lived nbgrader per slot, and no student ever lost.

The whole pipeline through real workers is tests/test_sample_class.py; here, the slot's
protocol on a course with nothing to grade, a worker that dies, and the engine's retry.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from autograder.engines import local
from autograder.engines.progress import StudentResult
from autograder.runner import nbgrader_cli
from autograder.runner.worker import Worker, nbgrader_env


def test_a_worker_reports_each_student_and_survives_a_failure(tmp_path: Path) -> None:
    # An empty course directory: nbgrader starts, finds no submission, and says so.
    grader = Worker(tmp_path, nbgrader_env())
    try:
        first = grader.autograde("nobody")
        assert first["student"] == "nobody" and first["success"] is False
        assert "No notebooks were matched" in first["log"]
        assert grader.alive  # one student's failure does not end the slot
        second = grader.autograde("someone")
        assert second["student"] == "someone" and second["success"] is False
    finally:
        grader.close()
    assert not grader.alive


def test_a_worker_that_dies_gives_a_failure_with_the_reason(tmp_path: Path) -> None:
    grader = Worker(tmp_path, nbgrader_env())
    os.kill(grader.proc.pid, signal.SIGKILL)
    grader.proc.wait()
    result = grader.autograde("ada")
    assert result["success"] is False and result.get("dead")
    assert "died" in result["log"]


class _FakeWorker:
    """Grades everyone but ``gus``, on whom it dies (as a crashed nbgrader would)."""

    started = 0

    def __init__(self, root: Path, env: dict[str, str], slot: int, slots: int) -> None:
        type(self).started += 1
        self.dead = False

    @property
    def alive(self) -> bool:
        return not self.dead

    def autograde(self, student: str) -> dict:
        if self.dead or student == "gus":
            self.dead = True
            return {"student": student, "success": False, "dead": True, "log": "died"}
        return {"student": student, "success": True, "log": "graded"}

    def close(self) -> None:
        pass


def test_the_engine_retries_a_failed_student_alone_and_never_drops_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "Worker", _FakeWorker)
    _FakeWorker.started = 0
    retried = []

    def fake_nbgrader(*args: str, root: Path, check: bool = True, quiet: bool = False,
                      env: dict | None = None) -> bool:
        retried.append(args)
        nbgrader_cli.LAST_FAILURE[args] = "Traceback: the gradebook is locked"
        return False

    monkeypatch.setattr(local, "nbgrader", fake_nbgrader)
    done: list[StudentResult] = []
    students = ["ada", "ben", "gus", "kim", "lou"]
    with pytest.raises(local.GradingError, match="gus"):
        local.LocalEngine(1).grade(tmp_path, students, done.append)
    assert sorted(r.student for r in done) == sorted(students)  # a line for everyone
    assert [r.student for r in done if not r.ok] == ["gus"]
    assert retried == [("autograde", "week4", "--student", "gus", "--create", "--force")]
    why = (tmp_path / "autograded" / "gus" / nbgrader_cli.GRADING_FAILED).read_text()
    assert "gradebook is locked" in why
    assert _FakeWorker.started == 2  # one slot, started afresh after gus's worker died
    assert "$ autograde week4 --student ada" in (tmp_path / ".nbgrader.log").read_text()


def test_the_class_wide_commands_run_in_this_process_and_fail_as_the_command_line_does(
        tmp_path: Path, capsys) -> None:
    """generate_feedback and export run through nbgrader's application classes in the
    harness's process: a failure returns False (or stops with check=True) with nbgrader's own
    words kept for the table and the log, and nothing reaches the harness's output."""
    args = ("generate_feedback", "week4", "--force")
    assert nbgrader_cli.nbgrader(*args, root=tmp_path, check=False, quiet=True) is False
    said = nbgrader_cli.LAST_FAILURE[args]
    assert "No notebooks were matched" in said, said
    assert capsys.readouterr() == ("", "")
    assert "$ generate_feedback week4 --force" in (tmp_path / ".nbgrader.log").read_text()
    with pytest.raises(SystemExit, match="nbgrader generate_feedback failed"):
        nbgrader_cli.nbgrader(*args, root=tmp_path, quiet=True)
    # export on an empty course succeeds and writes grades.csv, as `nbgrader export` does.
    assert nbgrader_cli.nbgrader("export", root=tmp_path, quiet=True)
    assert (tmp_path / "grades.csv").exists() and Path.cwd() != tmp_path


def test_feedback_is_written_once_per_student_by_the_slot_that_graded_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A grading slot writes its student's feedback right after grading (in parallel); the
    class-wide generate_feedback afterwards leaves those students out, and does not run at all
    when every graded student has fresh feedback."""
    from autograder.cli import harness

    for sid in ("ada", "ben", "cy"):
        (tmp_path / "submitted" / sid / "week4").mkdir(parents=True)
        (tmp_path / "autograded" / sid / "week4").mkdir(parents=True)
    calls: list[tuple[str, ...]] = []

    def fake_nbgrader(*args: str, root: Path, check: bool = True, quiet: bool = False,
                      env: dict | None = None) -> bool:
        calls.append(args)
        return True

    class Engine:
        name, workers = "fake", 1

        def __init__(self, done: set[str]) -> None:
            self.with_feedback = done

        def grade(self, root: Path, students, on_done) -> None:
            pass

    monkeypatch.setattr(harness, "nbgrader", fake_nbgrader)
    harness.autograde_all(tmp_path, Engine({"ada", "cy"}))
    feedback = [c for c in calls if c[0] == "generate_feedback"]
    assert feedback == [("generate_feedback", "week4", "--force",
                         "--CourseDirectory.student_id_exclude=ada,cy")]
    calls.clear()
    harness.autograde_all(tmp_path, Engine({"ada", "ben", "cy"}))
    assert [c[0] for c in calls] == ["export"]
