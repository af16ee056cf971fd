"""One trusted re-check process per student (autograder/grading/trusted_process.py).

The process that scores a student's test cells pays its imports once for all of that student's
notebooks. What must not change: each test cell sees only its own rebuilt definitions, no
process serves two students, a hung or killed process is replaced for the next notebook, and a
test cell that reads stdin cannot take the next notebook's request.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.grading import trusted_process
from autograder.sandbox import bwrap as sandbox

pytestmark = pytest.mark.skipif(sandbox.bwrap_path() is None,
                                reason="bubblewrap is not installed (make system-deps)")


def _job(grade_id: str, code: str, source: str = "\n", names: tuple[str, ...] = ()) -> dict:
    return {"grade_id": grade_id, "code": code,
            "bundle": {"source": source, "names": list(names)}, "setup_error": None}


@pytest.fixture(autouse=True)
def _no_warm_checker_left():
    yield
    trusted_process.close_warm_checker()


def _run(jobs: list[dict], course: Path, session: str | None, timeout_s: float = 60) -> list:
    return trusted_process.run_jobs(jobs, course_root=course, timeout_s=timeout_s,
                                    session=session)


def _warm_pid() -> int | None:
    return trusted_process._WARM.current.proc.pid if trusted_process._WARM.current else None


def test_one_process_serves_a_students_notebooks_each_cell_in_a_namespace_of_its_own(
        tmp_path: Path) -> None:
    course = tmp_path / "course"
    course.mkdir()
    first = _run([_job("defines", "secret_answer = 42\nprint(secret_answer)",
                       "def f():\n    return 1\n", ("f",))], course, "week4/ada")
    assert first[0]["status"] == "pass" and first[0]["stdout"] == "42\n", first
    pid = _warm_pid()
    assert pid is not None, "the student's checker was stopped after one notebook"
    second = _run([_job("looks", "print('secret_answer' in globals(), 'f' in globals())")],
                  course, "week4/ada")
    assert _warm_pid() == pid, "a second notebook of the same student started a new process"
    assert second[0]["stdout"] == "False False\n", second
    third = _run([_job("next", "print('hi')")], course, "week4/ben")
    assert _warm_pid() not in (None, pid), "another student was served by ada's process"
    assert third[0]["stdout"] == "hi\n"


def test_a_hung_check_costs_its_process_and_the_next_notebook_gets_a_new_one(
        tmp_path: Path) -> None:
    course = tmp_path / "course"
    course.mkdir()
    _run([_job("warm", "print(1)")], course, "week4/cas")
    pid = _warm_pid()
    hung = _run([_job("hangs", "while True:\n    pass"), _job("after", "print('after')")],
                course, "week4/cas", timeout_s=3)
    assert hung[0]["ename"] == "Timeout" and hung[1]["stdout"] == "after\n", hung
    again = _run([_job("next", "print('next')")], course, "week4/cas")
    assert again[0]["status"] == "pass" and _warm_pid() not in (None, pid)


def test_a_check_that_reads_stdin_gets_nothing_and_the_next_request_arrives(
        tmp_path: Path) -> None:
    course = tmp_path / "course"
    course.mkdir()
    read = _run([_job("reads", "import sys\nprint(repr(sys.stdin.read()))")], course,
                "week4/dee")
    assert read[0]["stdout"] == "''\n", read
    later = _run([_job("later", "print('served')")], course, "week4/dee", timeout_s=20)
    assert later[0]["status"] == "pass" and later[0]["stdout"] == "served\n", later


def test_without_a_session_the_process_ends_with_its_jobs(tmp_path: Path) -> None:
    course = tmp_path / "course"
    course.mkdir()
    out = _run([_job("once", "print('once')")], course, None)
    assert out[0]["stdout"] == "once\n" and trusted_process._WARM.current is None


def test_a_launch_that_outlives_the_gpu_limit_fails_its_check_and_the_rest_go_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that hangs while it holds the GPU lock shared would stall every waiting timing
    (and everyone queued behind it) until its cell's timeout; the launch limit ends its process
    instead, with a reason, and the notebook's next check runs in a new one."""
    from autograder.grading.trusted_child import HUNG_LAUNCH
    from course.runtime import gpulock

    monkeypatch.setenv(gpulock.LAUNCH_LIMIT_ENV, "1")
    course = tmp_path / "course"
    course.mkdir()
    hangs = ("import time\nfrom course.runtime import gpulock\n"
             "with gpulock.shared_launch() as took:\n    print(took)\n    time.sleep(60)")
    notes: list[str] = []
    got = trusted_process.run_jobs(
        [_job("hangs", hangs), _job("after", "print('after')")], course_root=course,
        timeout_s=30, session="week4/fay", notes=notes)
    assert got[0]["ename"] == HUNG_LAUNCH and "within 1 s" in got[0]["evalue"], got
    assert got[1]["status"] == "pass" and got[1]["stdout"] == "after\n", got
    assert any("hangs" in n and "within 1 s" in n for n in notes), notes
