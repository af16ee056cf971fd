"""What went wrong when a student's kernel ran, in one plain line instead of a traceback.

The cells that run a kernel before the tests ("try it on a small product") would otherwise
show Numba's raw errors: on the simulator ``NotImplementedError: tid=[0, 6, 0] ctaid=[0, 0,
0]`` through ``threading.py`` for a kernel not written yet, on a GPU a page of typing errors.
This module is the one place that turns them into a sentence:

* :func:`not_written_yet` — does this exception mean "the answer still raises
  ``NotImplementedError``"? (The simulator re-raises it from a thread, sometimes wrapped.)
* :func:`explain` — one line for any exception a launch can raise: not written yet, an index
  out of range (with the simulated thread and block), a name that is not defined, a kernel
  that does not compile, a launch the GPU refuses, a broken GPU context.
* :func:`plain_errors` — a ``with`` block for notebook cells that prints that line and stops
  the block, instead of a traceback.

It imports nothing else from ``course``, so every level of the package can use it.
"""

from __future__ import annotations

import re
from types import TracebackType

from course.runtime.i18n import _

#: the prefix Numba's simulator puts on errors raised inside a simulated thread.
SIM_PREFIX = re.compile(r"^\s*tid=\[(\d+), (\d+), (\d+)\] ctaid=\[(\d+), (\d+), (\d+)\]:?\s*")


class MissingAnswerError(RuntimeError):
    """The earlier notebook is missing, or its answer has not been written yet."""


def not_written_yet(exc: BaseException) -> bool:
    """True when ``exc`` comes from an answer that still raises ``NotImplementedError``."""
    if isinstance(exc, NotImplementedError):
        return True
    return "NotImplementedError" in f"{type(exc).__name__} {exc}"


def not_written_message(name: str, placeholder: str = "`raise NotImplementedError()`",
                        then: str | None = None) -> str:
    """The one sentence every check says about an answer still holding its placeholder.

    ``then``: what to replace it with, already in the student's language (default: "with
    your kernel").
    """
    then = _("with your kernel") if then is None else then
    return _("{name} is not written yet: replace {placeholder} {then}").format(
        name=name, placeholder=placeholder, then=then)


def _where(message: str) -> tuple[str, str]:
    """(message without the simulator's prefix, ' in thread (x, y) of block (x, y)' or '')."""
    match = SIM_PREFIX.match(message)
    if not match:
        return message.strip(), ""
    tx, ty, _tz, bx, by, _bz = match.groups()
    return message[match.end():].strip(), _(" in thread ({tx}, {ty}) of block ({bx}, {by})"
                                            ).format(tx=tx, ty=ty, bx=bx, by=by)


def first_line(text: str, limit: int = 200) -> str:
    """The first informative line of a (Numba) message, shortened."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # Numba's typing errors open with "Failed in cuda mode pipeline (step: …)": say what failed.
    lines = [ln for ln in lines if not ln.startswith(("Failed in", "During:", "File "))] or lines
    line = lines[0] if lines else ""
    return line if len(line) <= limit else line[:limit - 1] + "…"


def explain(exc: BaseException, name: str) -> str:
    """One line saying what went wrong when running ``name``, and what to look at."""
    kind = type(exc).__name__
    message, where = _where(str(exc))
    if not_written_yet(exc):
        return not_written_message(name, then=_("with your code and run its cell, then "
                                                "this one again."))
    first = first_line(message)
    if kind in ("TypingError", "UnsupportedError", "LoweringError", "NumbaError"):
        return _("{name} does not compile: {first}. Only what a kernel may use works inside "
                 "@cuda.jit (numbers, arrays, cuda.*, math.*).").format(name=name, first=first)
    if kind in ("CudaAPIError", "CudaDriverError", "CudaSupportError"):
        if "ILLEGAL_ADDRESS" in message:
            return _("{name} read or wrote outside an array on the GPU (a missing bounds "
                     "test). The GPU cannot be used again in this session: restart it (on "
                     "Colab: Runtime → Restart session) and run the notebook from the top."
                     ).format(name=name)
        if "OUT_OF_RESOURCES" in message:
            return _("the GPU refused to launch {name}: a block needs more registers or "
                     "threads than an SM has.").format(name=name)
        return _("the GPU refused to run {name}: {first}.").format(name=name, first=first)
    if isinstance(exc, IndexError):
        return _("{name}: an index out of range{where} ({message}): a thread outside the "
                 "matrix, or a tile element past K, needs its bounds test.").format(
                     name=name, where=where, message=message)
    if isinstance(exc, NameError):
        return _("{name}: {message}{where}: define it (or spell it as in the notes) inside "
                 "the kernel.").format(name=name, message=message, where=where)
    if kind in ("NotAKernelError", "GemmInputError"):
        return message
    return _("{name} failed{where}: {kind}: {first}").format(name=name, where=where, kind=kind,
                                                             first=first)


class plain_errors:  # noqa: N801 - used like a function: `with plain_errors("gemm_naive"):`
    """``with plain_errors("gemm_naive"): …`` prints one ✗ line instead of a traceback.

    Any ``Exception`` raised in the block ends the block and is replaced by
    ``✗ <explain(exc, name)>``; ``KeyboardInterrupt`` and friends pass through.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self.error: BaseException | None = None

    def __enter__(self) -> plain_errors:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        if exc is None or not isinstance(exc, Exception):
            return False
        self.error = exc
        print(f"✗ {explain(exc, self.name)}")
        return True
