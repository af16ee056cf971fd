"""One GPU, many graders: a reader–writer lock between processes, on ``flock``.

When several students are graded at once on one GPU machine, their correctness checks may
share the GPU, but a speedup *timing* must run alone: another process's kernels on the same
SMs would bend the ratio it measures. So correctness checks hold the lock **shared** and a
timing holds it **exclusive** (:func:`exclusive`, taken by :mod:`course.checks.speedup` around its
timed launches).

The lock is a directory named by ``COURSE_GPU_LOCK``; without it every function here does
nothing (a student's own notebook, Colab, the tests). The grader creates the directory
where student code cannot reach it (see ``autograder/gpulock.py``). It holds two files,
locked with ``flock``, so a process that dies — killed for a timeout, crashed — lets go at
once (the kernel drops a dead process's locks):

* ``gpu.lock``: shared by checks, exclusive for a timing;
* ``turnstile.lock``: everyone passes it on the way in and a timing holds it while it waits,
  so a stream of checks cannot starve a waiting timing (writer preference).

Rules that keep it free of deadlock: a process never waits for the lock while holding it —
:func:`exclusive` first drops a shared hold, and :func:`released` drops it while this
process waits for a child (:mod:`course.trust.runner`) that may want the lock itself.

Waiting is polled, and while it waits a process touches the file named by
``COURSE_GPU_LOCK_HEARTBEAT`` (if set) each second, so that the timeouts that guard
against a hanging student do not count time spent queueing for the GPU. After
``COURSE_GPU_LOCK_MAX_WAIT`` seconds (default 3600) it gives up with
:class:`GpuLockTimeout`, which the grader reports as "not measured", never as a fail.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from course.runtime.backend import TRUSTED_ENV
from course.runtime.i18n import _

LOCK_ENV = "COURSE_GPU_LOCK"
HEARTBEAT_ENV = "COURSE_GPU_LOCK_HEARTBEAT"
MAX_WAIT_ENV = "COURSE_GPU_LOCK_MAX_WAIT"
#: "1": every exclusive hold appends "<seconds waited> <seconds held>" to :data:`HOLDS_LOG` in the
#: lock's directory (what ``scripts/gpu/throughput.py`` reports; off unless it asks).
LOG_ENV = "COURSE_GPU_LOCK_LOG"
HOLDS_LOG = "exclusive-holds.log"
#: a heartbeat younger than this means "still waiting for the GPU, not hanging" (a waiter
#: beats every second and removes the file when it gets the lock).
HEARTBEAT_FRESH_S = 3.0
_POLL_S = 0.05
_BEAT_S = 1.0


class GpuLockTimeout(BaseException):
    """The GPU stayed busy longer than ``COURSE_GPU_LOCK_MAX_WAIT`` seconds.

    A ``BaseException``, like ``KeyboardInterrupt``: a check's ``except Exception`` must not
    turn the grader's own trouble into a verdict on the student's kernel.
    """


class GpuLock:
    """This process's hold on the lock in ``directory``: none, ``"shared"`` or ``"exclusive"``."""

    def __init__(self, directory: Path, *, heartbeat: Path | None = None,
                 max_wait_s: float = 3600.0) -> None:
        self.directory = Path(directory)
        self.heartbeat = heartbeat
        self.max_wait_s = max_wait_s
        self.mode: str | None = None
        self._fd: int | None = None
        self._mutex = threading.RLock()

    def _open(self, name: str) -> int:
        return os.open(self.directory / name, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    def _wait_for(self, fd: int, op: int, started: float, last_beat: list[float]) -> None:
        """Poll ``flock(fd, op)`` until granted, beating the heartbeat, up to the limit."""
        while True:
            try:
                fcntl.flock(fd, op | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
            now = time.monotonic()
            if now - started > self.max_wait_s:
                raise GpuLockTimeout(
                    f"the GPU stayed busy for more than {self.max_wait_s:.0f} s "
                    f"(lock {self.directory}); nothing was measured")
            if self.heartbeat is not None and now - last_beat[0] >= _BEAT_S:
                with contextlib.suppress(OSError):
                    self.heartbeat.touch()
                last_beat[0] = now
            time.sleep(_POLL_S)

    def acquire(self, mode: str) -> None:
        """Take the lock in ``mode`` ("shared" or "exclusive"); drop any hold first."""
        if mode not in ("shared", "exclusive"):
            raise ValueError(f"mode must be 'shared' or 'exclusive', got {mode!r}")
        with self._mutex:
            if self.mode == mode:
                return
            self.release()
            started, last_beat = time.monotonic(), [0.0]
            turnstile = self._open("turnstile.lock")
            try:
                self._wait_for(turnstile, fcntl.LOCK_EX, started, last_beat)
                fd = self._open("gpu.lock")
                try:
                    op = fcntl.LOCK_SH if mode == "shared" else fcntl.LOCK_EX
                    self._wait_for(fd, op, started, last_beat)
                except BaseException:
                    os.close(fd)
                    raise
            finally:
                os.close(turnstile)  # closing the descriptor lets the next one through
                if last_beat[0] and self.heartbeat is not None:  # done queueing: say so
                    with contextlib.suppress(OSError):
                        self.heartbeat.unlink()
            self._fd, self.mode = fd, mode

    def release(self) -> None:
        """Let go of whatever this process holds (nothing happens if it holds nothing)."""
        with self._mutex:
            if self._fd is not None:
                os.close(self._fd)
            self._fd, self.mode = None, None


_lock: GpuLock | None = None
_lock_key: tuple[str, str, str] | None = None


def current() -> GpuLock | None:
    """The lock named by ``COURSE_GPU_LOCK`` (one object per process), or None."""
    global _lock, _lock_key
    key = (os.environ.get(LOCK_ENV, ""), os.environ.get(HEARTBEAT_ENV, ""),
           os.environ.get(MAX_WAIT_ENV, ""))
    if not key[0]:
        return None
    if _lock is None or key != _lock_key:
        if _lock is not None:
            _lock.release()
        directory = Path(key[0])
        if not directory.is_dir():
            if os.environ.get(TRUSTED_ENV):  # the grader made it for us: its absence is a bug
                raise FileNotFoundError(f"{LOCK_ENV}={key[0]} is not a directory: the grader "
                                        "creates it before grading starts")
            return None  # e.g. a notebook kernel, whose sandbox hides the grader's lock
        _lock = GpuLock(directory, heartbeat=Path(key[1]) if key[1] else None,
                        max_wait_s=float(key[2] or 3600))
        _lock_key = key
    return _lock


def ensure_shared() -> None:
    """Hold the lock at least shared (no-op when exclusive already, or when unconfigured)."""
    lock = current()
    if lock is not None and lock.mode is None:
        lock.acquire("shared")


def release() -> None:
    """Drop this process's hold, if any."""
    lock = current()
    if lock is not None:
        lock.release()


@contextlib.contextmanager
def exclusive() -> Iterator[None]:
    """Run the block with the GPU to this process alone; afterwards hold what was held before."""
    lock = current()
    if lock is None or lock.mode == "exclusive":
        yield
        return
    before = lock.mode
    asked = time.monotonic()
    lock.acquire("exclusive")
    got = time.monotonic()
    try:
        yield
    finally:
        held = time.monotonic() - got
        if before == "shared":
            lock.acquire("shared")
        else:
            lock.release()
        if os.environ.get(LOG_ENV) == "1":
            with contextlib.suppress(OSError), open(lock.directory / HOLDS_LOG, "a") as log:
                log.write(f"{got - asked:.3f} {held:.3f}\n")


@contextlib.contextmanager
def released() -> Iterator[None]:
    """Hold nothing during the block (e.g. while a child process may want the lock)."""
    lock = current()
    before = lock.mode if lock is not None else None
    if lock is not None:
        lock.release()
    try:
        yield
    finally:
        if lock is not None and before is not None:
            lock.acquire(before)


def hold_shared_on_launch() -> bool:
    """Make every CUDA kernel launch in this process hold the lock shared while it runs.

    A launch that finds the lock free of this process takes it shared, launches, waits for
    the GPU to finish and lets go: the hold covers the kernel's run and nothing else — not
    Numba's compile before it (which happens before ``_Kernel.launch``), not the Python
    between two launches. So a timing that waits for the lock waits for kernels already
    running (milliseconds), not for other students' whole test cells (seconds each: with 16
    graders the waits for whole cells added up to 13–65 s per speedup check on the H200, and
    every check queued behind each waiting timing). A process that already holds the lock
    (a timing, or a check that holds it throughout) launches under that hold unchanged.
    Returns False where Numba's launch path is not where this expects it (another
    numba-cuda); the caller then holds the lock per check.
    """
    if current() is None:
        return True
    try:
        from numba.cuda.dispatcher import _Kernel
    except ImportError:
        return False
    original = getattr(_Kernel, "launch", None)
    if original is None:
        return False
    if getattr(original, "_course_gpulock", False):
        return True

    def launch(self, *args, **kwargs):
        with shared_launch() as took_it:
            result = original(self, *args, **kwargs)
            if took_it:
                _synchronize()  # the kernel has finished before the next timing may start
            return result

    launch._course_gpulock = True  # type: ignore[attr-defined]
    _Kernel.launch = launch
    return True


#: seconds one launch may hold the lock shared (``COURSE_GPU_LAUNCH_LIMIT`` overrides): a check's
#: launches take milliseconds, and while one runs every waiting timing (and, behind it, every
#: other check) waits. A kernel that never ends there would otherwise stall the class until its
#: test cell's timeout (10 minutes by default).
LAUNCH_LIMIT_S = 10.0
LAUNCH_LIMIT_ENV = "COURSE_GPU_LAUNCH_LIMIT"
_HUNG_LAUNCH: list[Callable[[str], None]] = []


def launch_limit() -> float:
    """:data:`LAUNCH_LIMIT_S`, or ``COURSE_GPU_LAUNCH_LIMIT`` when it is a positive number (an
    instructor's typo must not fail a student's check: anything else means the default)."""
    try:
        value = float(os.environ.get(LAUNCH_LIMIT_ENV) or LAUNCH_LIMIT_S)
    except ValueError:
        return LAUNCH_LIMIT_S
    return value if value > 0 else LAUNCH_LIMIT_S


def on_hung_launch(handler: Callable[[str], None] | None) -> None:
    """Who is told (with the reason) when a launch outlives the limit, or a timing its budget;
    it must end the process, the only way to stop a running kernel. None: the default, which
    writes the reason to stderr and ends the process (a budget without a handler raises
    :class:`course.perf.budget.TimingBudgetExceeded` after the launch instead)."""
    _HUNG_LAUNCH[:] = [handler] if handler else []


def hung_launch_handler() -> Callable[[str], None] | None:
    """The handler :func:`on_hung_launch` set, if any: a timing's budget
    (:mod:`course.perf.budget`) ends its process through the same one."""
    return _HUNG_LAUNCH[0] if _HUNG_LAUNCH else None


def hung_launch_reason(seconds: float) -> str:
    """What a check stopped by the launch limit says (in the student's language)."""
    return _("a kernel launch did not finish within {seconds} s, on a GPU shared with the "
             "other students' checks, so it was stopped there. A correct launch at the checks' "
             "sizes takes milliseconds: does the kernel loop forever, or wait at a barrier "
             "that some threads never reach?").format(seconds=f"{seconds:g}")


def _end_hung_launch(seconds: float) -> None:
    reason = hung_launch_reason(seconds)
    if _HUNG_LAUNCH:
        _HUNG_LAUNCH[0](reason)
        return
    with contextlib.suppress(OSError):
        os.write(2, (reason + "\n").encode())
    os._exit(70)


@contextlib.contextmanager
def shared_launch() -> Iterator[bool]:
    """Hold the lock shared for one kernel launch (which must end by synchronizing) where
    this process holds nothing; under a hold it already has, the launch just runs. Yields
    whether it took the lock for this launch.

    A launch that holds the lock longer than :data:`LAUNCH_LIMIT_S` ends its process (the
    handler of :func:`on_hung_launch` says why first), which lets go of the lock: a kernel that
    hangs costs its own check, not the other students' time.

    The CUDA C track's launches (:mod:`course.gemm.cudac.gpu`) and Numba's (the hook of
    :func:`hold_shared_on_launch`) both go through here.
    """
    lock = current()
    if lock is None or lock.mode is not None:
        yield False
        return
    limit = launch_limit()
    lock.acquire("shared")
    watchdog = threading.Timer(limit, _end_hung_launch, args=(limit,))
    watchdog.daemon = True
    watchdog.start()
    try:
        yield True
    finally:
        watchdog.cancel()
        lock.release()


def _synchronize() -> None:
    """Wait for this process's GPU work (Numba's; imported here, after the target is chosen)."""
    from numba import cuda

    cuda.synchronize()


def heartbeat_fresh(path: Path | None) -> bool:
    """True while a process waiting for the lock keeps touching ``path``."""
    if path is None:
        return False
    try:
        return time.time() - path.stat().st_mtime < HEARTBEAT_FRESH_S
    except OSError:
        return False
