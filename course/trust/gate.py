"""The grader's verdict on a test cell's definitions, shown in the student's own notebook.

The grader does not trust the notebook's kernel: it rebuilds the definitions a test cell
uses from the notebook's source, under the code policy (:mod:`course.trust.code_policy`), and runs
the test in a separate process (``autograder/trusted.py``). A definition it cannot rebuild — a
refused construct, or a name bound only by a loop or a plot cell — fails there. If the
student's own run of the same test cell printed ✓, the student would learn of it only from
the grade table.

So every check a test cell calls starts with :func:`begin_check`. Inside an IPython kernel
(JupyterLab, Colab, nbclient) it reads the cells run so far from the kernel's input history,
builds the same bundle the grader will build for the calling test cell, and raises the same
error with the same message when that fails. Outside IPython (plain Python, the grader's own
child process) it does nothing.

Which cells are test cells: those whose first statement is a docstring starting with
"Check" — the course's convention for every test cell, enforced by the notebook format test.
The grader identifies them by nbgrader metadata and leaves them out of the definitions; the
gate leaves out the same cells.
"""

from __future__ import annotations

import ast
import os
from typing import Any

from course.runtime import backend
from course.trust.kernel_source import bundle_for_test_cell

#: per kernel session: input-history length -> the error the gate raised (or None).
_seen: dict[int, BaseException | None] = {}


def looks_like_test_cell(source: str) -> bool:
    """True if ``source`` opens with a docstring that starts with "Check" (a test cell)."""
    lines = [ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        body = ast.parse("\n".join(lines)).body
    except SyntaxError:
        return False
    first = body[0] if body else None
    return (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
            and first.value.value.lstrip().startswith("Check"))


def _history() -> list[str] | None:
    """The raw source of every cell this IPython kernel has run, the running one last."""
    try:
        from IPython import get_ipython  # optional: imported when used
    except ImportError:  # pragma: no cover - no IPython: plain Python
        return None
    shell: Any = get_ipython()
    manager = getattr(shell, "history_manager", None)
    hist = getattr(manager, "input_hist_raw", None)
    return list(hist) if hist else None


def check_cell_definitions(history: list[str]) -> None:
    """Raise what the grader would raise rebuilding the last cell's definitions, if anything.

    ``history`` is the kernel's input history, the running cell last.
    """
    current = history[-1]
    if not looks_like_test_cell(current):
        return
    key = len(history)
    if key in _seen:
        seen = _seen[key]
        if seen is not None:
            raise seen
        return
    earlier = [src for src in history[:-1] if not looks_like_test_cell(src)]
    try:
        bundle_for_test_cell(earlier, current)
    except (ValueError, NameError) as exc:  # DisallowedCodeError is a ValueError
        _seen[key] = exc
        raise
    _seen[key] = None


#: ``off``: during autograde the student's kernel checks definitions only and leaves the
#: checks themselves to the grader (faster grading; the verdict audit then covers the code
#: policy, not the checks' results).
AUDIT_ENV = "COURSE_VERDICT_AUDIT"


class CheckedByTheGrader(RuntimeError):
    """During autograde with the audit off: this check runs only in the grader's process."""


def begin_check(what: str) -> None:
    """Start of every check a test cell calls: show the grader's view of its definitions.

    ``what`` names the check. Does nothing in the grader's own process (``COURSE_TRUSTED_RUN``)
    and outside IPython. During ``nbgrader autograde`` the check then runs in the student's
    kernel too, so that the grader can compare verdicts, unless ``COURSE_VERDICT_AUDIT=off``.
    """
    if os.environ.get(backend.TRUSTED_ENV):
        return
    history = _history()
    if history:
        check_cell_definitions(history)
    if backend.autograding() and os.environ.get(AUDIT_ENV, "on") == "off":
        raise CheckedByTheGrader(f"{what}: checked by the grader in its own process")
