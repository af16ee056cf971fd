"""Student code run by the grader cannot see the course directory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from autograder.sandbox import bwrap as sandbox

pytestmark = pytest.mark.skipif(sandbox.bwrap_path() is None,
                                reason="bubblewrap is not installed (make system-deps)")


def _run(code: str, course: Path, work: Path) -> subprocess.CompletedProcess:
    command = sandbox.wrap([sys.executable, "-c", code], course_root=course, workdir=work)
    return subprocess.run(command.argv, env=command.env, capture_output=True, text=True,
                          timeout=60)


def test_sandbox_hides_course_files_but_not_the_workdir(tmp_path: Path) -> None:
    course = tmp_path / "course"
    (course / "source" / "week4").mkdir(parents=True)
    (course / "source" / "week4" / "secret.ipynb").write_text("SOLUTION")
    (course / "gradebook.db").write_text("HIDDEN")
    work = course / "autograded" / "alice" / "week4"
    work.mkdir(parents=True)
    (work / "mine.txt").write_text("mine")
    probe = (
        "import os, pathlib\n"
        f"root = pathlib.Path({str(course)!r})\n"
        "print(sorted(p.name for p in root.rglob('*')))\n"
        "print(pathlib.Path('mine.txt').read_text())\n"
        "import course; print('course ok')\n"
    )
    out = _run(probe, course, work)
    assert out.returncode == 0, out.stderr
    assert "secret.ipynb" not in out.stdout and "gradebook.db" not in out.stdout
    assert "mine" in out.stdout and "course ok" in out.stdout


def test_sandbox_cannot_write_outside_its_workdir(tmp_path: Path) -> None:
    course, work = tmp_path / "course", tmp_path / "course" / "w"
    work.mkdir(parents=True)
    target = Path(sys.prefix) / "tamper.txt"
    out = _run(f"open({str(target)!r}, 'w').write('x')", course, work)
    assert out.returncode != 0 and not target.exists()


def test_unsandboxed_grading_is_refused_without_consent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    monkeypatch.delenv(sandbox.UNSANDBOXED_ENV, raising=False)
    with pytest.raises(sandbox.SandboxUnavailableError, match="bubblewrap"):
        sandbox.wrap(["true"], course_root=Path("/nonexistent"), workdir=Path("."))


def test_a_pythonpath_entry_at_the_course_root_does_not_unhide_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    course = tmp_path / "course"
    (course / "source").mkdir(parents=True)
    (course / "source" / "secret.ipynb").write_text("SOLUTION")
    work = course / "w"
    work.mkdir()
    monkeypatch.setenv("PYTHONPATH", str(course))
    out = _run(f"import os; print(os.path.exists({str(course / 'source')!r}))", course, work)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
