"""At most one warm sandboxed process per grading process, kept for one student at a time.

Two processes are kept warm between a student's notebooks: the trusted re-check
(:class:`autograder.grading.trusted_process.WarmChecker`) and the kernel fork-server
(:class:`autograder.sandbox.kernel_server.KernelServer`). Both follow one rule, kept here: the
live process whose key (the student, and what it was started with) matches is reused;
anything else — another student, a dead process — stops the old one first, so that a process
never serves two students; and whatever is left is stopped when the grader exits.
"""

from __future__ import annotations

import atexit
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar


class Warm(Protocol):
    """What a kept process offers: its key, whether it lives, and a way to stop it."""

    key: tuple

    @property
    def alive(self) -> bool: ...

    def close(self) -> None: ...


W = TypeVar("W", bound=Warm)


class WarmOne(Generic[W]):
    """The one kept process of its kind in this grading process (or none)."""

    def __init__(self) -> None:
        self.current: W | None = None
        atexit.register(self.close)

    def get(self, key: tuple, start: Callable[[], W]) -> W:
        """The live process for ``key``, else a new one from ``start`` (stopping the old)."""
        if self.current is not None and self.current.key == key and self.current.alive:
            return self.current
        self.close()
        self.current = start()
        return self.current

    def stop(self, process: W) -> None:
        """Stop ``process`` (hung, broken, or done without a session), and no longer keep it."""
        if self.current is process:
            self.current = None
        process.close()

    def close(self) -> None:
        """Stop the kept process, if any (the next student, the end of grading)."""
        current, self.current = self.current, None
        if current is not None:
            current.close()
