"""What a notebook shows when a cell fails: the student's message, never the course's insides.

IPython prints a traceback through every frame between the cell and the ``raise``: for a check,
that is ``course/trust/replay.py``, ``course/checks/gemm.py``, ``course/gemm/launch.py`` … —
thirty to seventy lines before the one line the student needs. :func:`install` (called when a
notebook's setup cell imports ``course``) gives the notebook's IPython a handler for every
``Exception`` that shows instead (:func:`student_lines`):

* an answer still holding its placeholder (``NotImplementedError`` raised in the student's
  function, or the course's own "not written yet" message): one line, what to write, where;
* an error of the course's (a check's ``GemmCheckError``, ``AnswerError`` …, any exception class
  defined in ``course``): its name and its message, already in the student's language;
* any other error that went through the course's code on its way (a student's ``IndexError``
  inside a function a check called, a Numba typing error): the student's own frames (cells and
  the definitions the course rebuilt from them) and the error's first line;
* anything else (an error in a cell that never entered the course, a ``SyntaxError``):
  IPython's own traceback, untouched.

The cell still fails exactly as before: IPython records the exception (the kernel's reply is
an error), and the cell's output is an ``error`` output with the same ``ename`` and ``evalue``,
which is what nbgrader scores and what the grader's feedback shows. Only its ``traceback``
lines are shorter.

Instructors who want every frame set ``COURSE_TRACEBACK=full`` in the kernel's environment
(docs/errors.md).
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from pathlib import Path
from types import TracebackType
from typing import Any

from course.runtime.errors import (
    SIM_PREFIX,
    explain,
    first_line,
    not_written_message,
    not_written_yet,
)
from course.runtime.i18n import _

#: set to ``full`` to see IPython's whole traceback, course frames included.
TRACEBACK_ENV = "COURSE_TRACEBACK"
COURSE_DIR = Path(__file__).resolve().parents[1]
RED, RESET = "\x1b[0;31m", "\x1b[0m"
#: at most this many of the student's frames are shown (the innermost ones).
MAX_FRAMES = 2
_NUMBA_FILE = re.compile(r'File "([^"]+)", line (\d+):?\s*\n\s*(.+)')


def full_tracebacks() -> bool:
    """True when the environment asks for IPython's whole traceback (``COURSE_TRACEBACK=full``)."""
    return os.environ.get(TRACEBACK_ENV, "").strip().lower() == "full"


def is_course_error(exc: BaseException) -> bool:
    """An exception class the course defines: its message is written for the student."""
    return type(exc).__module__.split(".")[0] == "course"


def _cell_label(filename: str, shell: Any) -> str | None:
    """``Cell In[7]`` for a notebook cell's file, the rebuilt definitions' name for those."""
    if filename.startswith("<student definitions"):
        return _("your definitions")
    if filename.startswith("<ipython-input"):
        return filename
    compiler = getattr(shell, "compile", None)
    fmt = getattr(compiler, "format_code_name", None)
    try:
        found = fmt(filename) if callable(fmt) else None
    except Exception:  # noqa: BLE001 - an IPython without cell names: no label
        found = None
    return f"{found[0]} {found[1]}" if found else None


def _student_frames(tb: TracebackType | None, shell: Any) -> list[tuple[str, int, str, str]]:
    """(label, line number, function, source line) of each frame in the student's code."""
    frames = []
    for frame in traceback.extract_tb(tb):
        label = _cell_label(frame.filename, shell)
        if label is not None:
            frames.append((label, frame.lineno or 0, frame.name, (frame.line or "").strip()))
    return frames


def _through_course(tb: TracebackType | None) -> bool:
    """Did the error pass through (or start in) the course's own code?"""
    return any(Path(f.filename).resolve().is_relative_to(COURSE_DIR)
               for f in traceback.extract_tb(tb) if not f.filename.startswith("<"))


def _header(exc: BaseException, text: str) -> list[str]:
    """``<red>Name</red>: text``, one list entry per line of ``text``."""
    first, *rest = (text or "").splitlines() or [""]
    return [f"{RED}{type(exc).__name__}{RESET}: {first}", *rest]


def not_written_line(exc: BaseException, tb: TracebackType | None, shell: Any = None) -> str:
    """The one line for an answer that still raises ``NotImplementedError``: which one, and
    what to do."""
    message = str(exc).strip()
    if message and not message.startswith("tid="):  # the course's own sentence: already says
        return message
    names = [name for _label, _line, name, _src in _student_frames(tb, shell)
             if name != "<module>"]
    name = names[-1] if names else _("the answer above")
    return not_written_message(name, then=_("with your code and run its cell, then this one "
                                            "again."))


def _numba_line(exc: BaseException) -> list[str]:
    """A Numba compile error's first line, and the student's line it names."""
    text = str(exc)
    lines = [first_line(text)]
    match = _NUMBA_FILE.search(text)
    if match and not Path(match.group(1)).resolve().is_relative_to(COURSE_DIR):
        lines.append(_("  line {line}: {source}").format(line=match.group(2),
                                                         source=match.group(3).strip()))
    return lines


def student_lines(etype: type[BaseException], exc: BaseException, tb: TracebackType | None,
                  shell: Any = None) -> list[str] | None:
    """The lines a notebook shows for ``exc`` (see the module docstring); None: IPython's own."""
    if full_tracebacks() or isinstance(exc, SyntaxError):
        return None
    if isinstance(exc, NotImplementedError) or (not_written_yet(exc)
                                                and not is_course_error(exc)):
        return [f"{RED}✗{RESET} {not_written_line(exc, tb, shell)}"]
    if is_course_error(exc):
        return _header(exc, str(exc))
    if not _through_course(tb):
        return None
    shown = [f"{label}, line {line}, in {name}\n    {source}" if source else
             f"{label}, line {line}, in {name}"
             for label, line, name, source in _student_frames(tb, shell)[-MAX_FRAMES:]]
    if type(exc).__module__.split(".")[0] == "numba":
        return [*shown, *_header(exc, "\n".join(_numba_line(exc)))]
    if SIM_PREFIX.match(str(exc)):  # raised in a simulated GPU thread: say which, and why
        names = [name for _label, _line, name, _src in _student_frames(tb, shell)
                 if name != "<module>"]
        return [*shown, *_header(exc, explain(exc, names[-1] if names else _("your kernel")))]
    return [*shown, *_header(exc, first_line(str(exc), limit=400))]


def _handler(shell: Any, etype: type[BaseException], value: BaseException,
             tb: TracebackType | None, tb_offset: int | None = None) -> list[str] | None:
    """IPython's custom exception handler: show :func:`student_lines`, or IPython's own."""
    lines = student_lines(etype, value, tb, shell)
    if lines is None:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
        return None
    shell._showtraceback(etype, value, lines)  # noqa: SLF001 - the kernel's way to send it
    return None


def install(shell: Any = None) -> bool:
    """Give the running IPython (if any) the course's handler; True if installed."""
    if shell is None:
        ipython = sys.modules.get("IPython")  # only a notebook's kernel has it loaded
        get = getattr(ipython, "get_ipython", None)
        shell = get() if callable(get) else None
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    shell.set_custom_exc((Exception,), _handler)
    return True
