"""Running nbgrader's command line in a course directory, and remembering what failed.

The bottom of the grader's own layers: the harness (``make release``, ``make grade``) and the
engines run every nbgrader command through :func:`nbgrader`, which appends its output to the
course's ``.nbgrader.log`` and keeps the tail of a failure for the grade table.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from autograder.runner import worker

_LOG_LOCK = threading.Lock()


def nbgrader(*args: str, root: Path, check: bool = True, quiet: bool = False) -> bool:
    """Run one nbgrader command in the course directory; stop on failure if ``check``.

    With ``check=False`` a failure returns False, and the tail of nbgrader's output is kept
    in ``LAST_FAILURE[args]`` so the caller can say why.
    """
    cmd = [sys.executable, "-m", "nbgrader", *args]
    if not quiet:
        print(f"$ nbgrader {' '.join(args)}", flush=True)
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True,
                          env=worker.nbgrader_env())
    log = append_log(root, args, f"{proc.stdout}{proc.stderr}")
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        if check:
            raise SystemExit(f"nbgrader {args[0]} failed (full log: {log}):\n{tail}")
        LAST_FAILURE[args] = tail
    return proc.returncode == 0


def append_log(root: Path, args: tuple[str, ...], text: str) -> Path:
    """Add one nbgrader command's output to the course's ``.nbgrader.log``; return its path."""
    log = root / ".nbgrader.log"
    with _LOG_LOCK, open(log, "a") as fh:
        fh.write(f"$ {' '.join(args)}\n{text}\n")
    return log


#: nbgrader commands that failed with check=False -> the tail of their output.
LAST_FAILURE: dict[tuple[str, ...], str] = {}
GRADING_FAILED = "GRADING_FAILED.txt"


def record_grading_failure(root: Path, student: str, why: str) -> None:
    """Remember why nbgrader could not grade ``student``, for the grade table's row."""
    folder = root / "autograded" / student
    folder.mkdir(parents=True, exist_ok=True)
    (folder / GRADING_FAILED).write_text(why)
