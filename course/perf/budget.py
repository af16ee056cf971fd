"""A time budget for timed launches, so that a kernel that hangs or crawls holds the GPU briefly.

Speedup timings take the GPU alone (:mod:`course.runtime.gpulock`): while one student's kernels
are timed, every other student's check waits. A kernel that loops forever at the timed size
(right on every small shape the correctness tests use) would keep them waiting until its
check's timeout, ten minutes by default, and a kernel that crawls for nearly as long.

The host cannot interrupt a running GPU kernel: the thread that waits for it (an event's
``synchronize``) blocks until the kernel ends, and a kernel that never ends is stopped only by
ending its process, which destroys its CUDA context. So the budget is a watchdog thread. Its
deadline is derived from what the launches should cost, measured in the same process on the
same GPU just before: the reference naive kernel's time for one launch at the timed size,
times the number of launches, times a generous :data:`MULTIPLE`, plus :data:`FLOOR_S` for the
host's own work. When the deadline passes it calls the overrun handler with a plain reason
("your tiled kernel did not finish its 23 launches at 2048³ within 19 s; the course's naive
kernel takes 0.30 s for as many"). In the fresh check process (:mod:`course._isolated`) the
handler writes that reason as the check's result and ends the process at once
(:func:`exit_on_overrun`): the GPU and its lock are free for the next student. Elsewhere (no
handler set) the timing raises :class:`TimingBudgetExceeded` after the launch in progress
returns. Either way the reason is an :class:`OverrunReason`, which also names the launches that
used most of the budget (``"own naive"``; not simply those running at the deadline, since the
kernels are timed interleaved): the speedup check times the tiled kernel again without the
student's own naive kernel when that is the one that could not be timed
(:mod:`course.checks.speedup_baseline`).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from course.runtime import gpulock
from course.runtime.i18n import _
from course.trust import runner

#: seconds always allowed on top of the derived budget (the host's work: events, checks).
FLOOR_S = 10.0
#: how many times the reference's cost the launches may take.
MULTIPLE = 10.0

class OverrunReason(str):
    """Why a timing was stopped, in the student's language (it is that text), and ``kernel``:
    the name of the launches that used most of its budget (:meth:`LaunchBudget.culprit`)."""

    kernel: str

    def __new__(cls, text: str, kernel: str) -> OverrunReason:
        reason = super().__new__(cls, text)
        reason.kernel = kernel
        return reason


class TimingBudgetExceeded(RuntimeError):
    """The timed launches took longer than their budget (see the module docstring)."""

    @property
    def kernel(self) -> str:
        """The launches that used most of the budget ("" if unknown)."""
        reason = self.args[0] if self.args else ""
        return reason.kernel if isinstance(reason, OverrunReason) else ""


def exit_on_overrun(result_path: str | Path) -> None:
    """In a check process: on overrun, write ``{"error": reason}`` to ``result_path`` and end
    the process at once (its CUDA context, the hung kernel and the GPU lock go with it), with
    ``"overran"``: the launch it stopped, where a budget stopped it. A launch that outlives
    :data:`course.runtime.gpulock.LAUNCH_LIMIT_S` ends it the same way."""

    def give_up(reason: str) -> None:
        result = {"error": str(reason)}
        if isinstance(reason, OverrunReason):  # a budget's: which launch it stopped
            result["overran"] = reason.kernel
        runner.write_result(result_path, result)
        os._exit(0)

    gpulock.on_hung_launch(give_up)


@dataclass
class LaunchBudget:
    """The watchdog of one timing. ``reference`` names the launch whose measured time sets the
    budget; ``labels`` say what each launch is in a sentence ("your tiled kernel");
    ``size`` is the timed size as the reason shows it ("2048³")."""

    reference: str
    size: str
    labels: dict[str, str] = field(default_factory=dict)
    floor_s: float = FLOOR_S
    multiple: float = MULTIPLE
    #: called with the reason when the deadline passes; None: the process's handler, if any.
    on_overrun: Callable[[str], None] | None = None
    now: Callable[[], float] = time.monotonic
    poll_s: float = 0.05
    #: the reason, once the deadline passed; the budget in seconds (set by start, calibrate)
    expired: OverrunReason | None = field(default=None, init=False)
    seconds: float = field(default=0.0, init=False)
    _launches: int = field(default=0, init=False)
    _per_kernel: int = field(default=0, init=False)
    _reference_s: float | None = field(default=None, init=False)
    _current: str = field(default="", init=False)
    _since: float = field(default=0.0, init=False)
    _spent: dict[str, float] = field(default_factory=dict, init=False)
    _started: float = field(default=0.0, init=False)
    _stop: threading.Event = field(default_factory=threading.Event, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)

    def start(self, launches: int, per_kernel: int) -> None:
        """Start the clock: ``launches`` in all, ``per_kernel`` for each kernel. Until the
        reference is measured, only :attr:`floor_s` is allowed."""
        self._launches, self._per_kernel = launches, per_kernel
        self._started, self.seconds = self.now(), self.floor_s
        self._since = self._started
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def calibrate(self, reference_ms: float) -> float:
        """The reference took ``reference_ms`` for one launch: set and return the budget."""
        self._reference_s = reference_ms / 1e3
        self.seconds = self.floor_s + self.multiple * self._reference_s * self._launches
        return self.seconds

    def running(self, name: str) -> None:
        """The launches of ``name`` are the ones in progress (for the reason)."""
        now = self.now()
        if self._current:
            self._spent[self._current] = self._spent.get(self._current, 0.0) + now - self._since
        self._current, self._since = name, now

    def culprit(self) -> str:
        """The launches that used the most of the budget, those in progress counted to now.

        Not simply the ones in progress: launches are interleaved, so a crawling kernel can use
        nearly all of the budget and the deadline still fall during another's launch.
        """
        spent = dict(self._spent)
        if self._current:
            spent[self._current] = spent.get(self._current, 0.0) + self.now() - self._since
        return max(spent, key=lambda name: spent[name]) if spent else self._current

    @property
    def current(self) -> str:
        """The name of the launches in progress (set by :meth:`running`)."""
        return self._current

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def check(self) -> None:
        """Raise :class:`TimingBudgetExceeded` if the deadline passed (no handler ended us)."""
        if self.expired:
            raise TimingBudgetExceeded(self.expired)

    def reason(self) -> str:
        """Why the launches were stopped, in the student's language, with the numbers."""
        culprit = self.culprit()
        label = self.labels.get(culprit) or _("the kernel {name!r}").format(name=culprit)
        ref = self.labels.get(self.reference) or _("the kernel {name!r}").format(
            name=self.reference)
        if self._reference_s is None:
            return _("{label} did not finish its first launches at {size} within {seconds:.0f} "
                     "s; a kernel that loops forever, or waits at a barrier some threads never "
                     "reach?").format(label=label, size=self.size, seconds=self.seconds)
        return _("{label} did not finish its {launches} launches at {size} within {seconds:.0f} "
                 "s; {reference} takes {reference_s:.2f} s for as many. Does it loop forever, "
                 "wait at a barrier some threads never reach, or do far more work than it "
                 "should?").format(label=label, launches=self._per_kernel, size=self.size,
                                   seconds=self.seconds, reference=ref,
                                   reference_s=self._reference_s * self._per_kernel)

    def _watch(self) -> None:
        while not self._stop.wait(self.poll_s):
            if self.now() - self._started > self.seconds:
                self.expired = OverrunReason(self.reason(), self.culprit())
                handler = self.on_overrun or gpulock.hung_launch_handler()
                if handler is not None:
                    handler(self.expired)
                return
