"""Running nbgrader's command line in a course directory, and remembering what failed.

The bottom of the grader's own layers: the harness (``make release``, ``make grade``) and the
engines run every nbgrader command through :func:`nbgrader`, which appends its output to the
course's ``.nbgrader.log`` and keeps the tail of a failure for the grade table.

The commands the harness runs once per class (``generate_assignment``, ``generate_feedback``,
``export``) run in the harness's own process, through nbgrader's application classes, as
``python -m autograder.runner.worker`` runs ``autograde``: a process per command paid about a
CPU-second each for importing nbgrader (SQLAlchemy, nbconvert, jupyter_server), which the
harness has imported anyway to read the gradebook. The others (``autograde`` retried alone,
``zip_collect``) still run as ``python -m nbgrader``.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import subprocess
import sys
import threading
import traceback
from pathlib import Path
from unittest import mock

from autograder.runner import worker

_LOG_LOCK = threading.Lock()
#: one in-process command at a time (they change this process's directory and output).
_IN_PROCESS_LOCK = threading.Lock()
#: command -> (module, application class) of the commands run in this process.
IN_PROCESS = {
    "generate_assignment": ("nbgrader.apps.generateassignmentapp", "GenerateAssignmentApp"),
    "generate_feedback": ("nbgrader.apps.generatefeedbackapp", "GenerateFeedbackApp"),
    "export": ("nbgrader.apps.exportapp", "ExportApp"),
}


def nbgrader(*args: str, root: Path, check: bool = True, quiet: bool = False,
             env: dict[str, str] | None = None) -> bool:
    """Run one nbgrader command in the course directory; stop on failure if ``check``.

    With ``check=False`` a failure returns False, and the tail of nbgrader's output is kept
    in ``LAST_FAILURE[args]`` so the caller can say why. ``env``: variables added to the
    command's environment (e.g. the one GPU a grading slot is bound to); a command given
    them runs in its own process, never in this one.
    """
    if not quiet:
        print(f"$ nbgrader {' '.join(args)}", flush=True)
    if args and args[0] in IN_PROCESS and not env:
        ok, text = _in_process(args, root)
    else:
        proc = subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=root,
                              capture_output=True, text=True,
                              env=dict(worker.nbgrader_env(), **(env or {})))
        ok, text = proc.returncode == 0, f"{proc.stdout}{proc.stderr}"
    log = append_log(root, args, text)
    if not ok:
        tail = "\n".join(text.strip().splitlines()[-15:])
        if check:
            raise SystemExit(f"nbgrader {args[0]} failed (full log: {log}):\n{tail}")
        LAST_FAILURE[args] = tail
    return ok


def _in_process(args: tuple[str, ...], root: Path) -> tuple[bool, str]:
    """Run one of :data:`IN_PROCESS` here, as ``nbgrader ARGS`` would in ``root``: whether it
    succeeded, and everything it logged or printed (never on this process's own output)."""
    module, name = IN_PROCESS[args[0]]
    app_class = getattr(importlib.import_module(module), name)
    out = io.StringIO()
    with _IN_PROCESS_LOCK, contextlib.chdir(root), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(out), \
            mock.patch.dict(os.environ, PATH=worker.nbgrader_env()["PATH"]):  # alembic's PATH
        app = app_class()  # its log handler is made on first use: on the captured stderr
        try:
            app.initialize(list(args[1:]))
            app.start()
            ok = True
        except SystemExit as exc:  # nbgrader's "fail": it logged why
            ok = exc.code in (0, None)
        except Exception:  # noqa: BLE001 - said in the log, as the command line would
            traceback.print_exc(file=out)
            ok = False
    return ok, out.getvalue()


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
