"""One grading slot's long-lived ``nbgrader autograde``: student ids in, one result line out each.

Why: every ``nbgrader autograde --student`` process spends about two CPU-seconds importing
nbgrader and reading the course's configuration before it grades anything, and a class is
graded one student per command (so each student gets a progress line, and a student whose
grading fails is retried alone). This process pays that once per slot and then grades students
one after another exactly as the command would: the same application class, the same
configuration (``nbgrader_config.py`` in its working directory, the course directory), and the
flags ``--create --force``. Student code never runs in it: notebooks run in sandboxed kernels
and checks in sandboxed children, as with the command.

Once a student is graded, the same process writes that student's feedback
(``generate_feedback --force``, for that student): the slots write feedback in parallel, where
one ``generate_feedback`` for the class after grading took about 2 CPU-seconds per student, one
after another (a third of the wall time of 16 students graded at once on the H200).

``python -m autograder.runner.worker [SLOT SLOTS]`` reads one student id per line on stdin and
writes one JSON line per student, ``{"student", "success", "feedback", "log"}``, to its original
stdout (anything else that prints goes to stderr, so it cannot be mistaken for a result). Slot
``SLOT`` of ``SLOTS`` runs each student's notebooks in its own staggered order
(:mod:`autograder.runner.order`). :class:`Worker` is the parent's side
(:class:`autograder.engines.local.LocalEngine`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from autograder.runner import order
from autograder.runner.names import ASSIGNMENT


def nbgrader_env() -> dict[str, str]:
    """The environment nbgrader runs in: this one, with this Python's scripts first on PATH
    (nbgrader runs ``alembic``, the gradebook's migrations, from PATH)."""
    return dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                  os.environ.get("PATH", "")]))


def staggered_autograde(slot: int, slots: int) -> type:
    """nbgrader's ``Autograde`` converter, each student's notebooks in the order of slot
    ``slot`` of ``slots`` (:mod:`autograder.runner.order`); imported here, in the slot's
    process, so that the harness does not pay for nbgrader's import."""
    from nbgrader.converters import Autograde

    class StaggeredAutograde(Autograde):
        def init_notebooks(self) -> None:
            super().init_notebooks()
            if order.stagger_on():
                for folder, found in self.assignments.items():
                    self.assignments[folder] = order.in_grading_order(found, slot, slots)

    return StaggeredAutograde


def _serve(slot: int = 0, slots: int = 1) -> None:
    from nbgrader.apps.autogradeapp import AutogradeApp
    from nbgrader.converters import GenerateFeedback
    from nbgrader.utils import capture_log, temp_attrs

    autograde = staggered_autograde(slot, slots)

    results = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # stray prints go to stderr, never into the results
    sys.stdout = sys.stderr
    app = AutogradeApp()
    app.initialize([])  # reads nbgrader_config.py from the working directory, as the command
    for line in sys.stdin:
        student = line.strip()
        if not student:
            continue
        with temp_attrs(app.coursedir, assignment_id=ASSIGNMENT, student_id=student):
            converter = autograde(coursedir=app.coursedir, parent=app)
            converter.force = True
            converter.create_student = True
            outcome = capture_log(converter)
            feedback = {"success": False}
            if outcome["success"]:  # `generate_feedback --force` for this student, right away
                writer = GenerateFeedback(coursedir=app.coursedir, parent=app)
                writer.force = True
                feedback = capture_log(writer)
        log = outcome.get("log", "") + outcome.get("error", "")
        results.write(json.dumps({"student": student, "success": bool(outcome["success"]),
                                  "feedback": bool(feedback["success"]), "log": log}) + "\n")
        results.flush()


class Worker:
    """The parent's handle on one ``python -m autograder.runner.worker`` in the course directory."""

    def __init__(self, root: Path, env: dict[str, str], slot: int = 0, slots: int = 1) -> None:
        self.root = root
        self.proc = subprocess.Popen([sys.executable, "-m", "autograder.runner.worker",
                                      str(slot), str(slots)], cwd=root,
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)
        self._stderr: list[str] = []
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)
            del self._stderr[:-200]

    def autograde(self, student: str) -> dict[str, Any]:
        """Grade one student; ``success`` False with the reason if the worker itself died."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(student + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except OSError:
            line = ""
        if line:
            return json.loads(line)
        self.proc.wait()
        self._drain.join(timeout=5)
        tail = "".join(self._stderr[-15:])
        return {"student": student, "success": False, "dead": True,
                "log": f"the grading process died (exit code {self.proc.returncode})\n{tail}"}

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Let the worker finish (end of input); stop it if it does not."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


if __name__ == "__main__":
    _serve(*(int(arg) for arg in sys.argv[1:3]))
