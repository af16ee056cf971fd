"""GPU check processes forked from a pre-imported copy of the trusted re-check, not started cold.

Each GPU job of :mod:`course.trust.runner` (a speedup timing, a CUDA C timing) gets a fresh
process: a timing whose kernel hangs ends its process, and a measurement must not share a
process with anything the student's code touched. Started cold (``python -m course._isolated``)
each of them paid Python's start-up and the imports of NumPy, Numba, CuPy and the course —
2.9 CPU-s on a 16-core H100 host, three times per full submission (docs/grading-cost.md).

:func:`start_server` forks, once per trusted re-check process (one student), a *fork server*:
a copy of that process made after its imports and before anything in it touched the GPU. The
server imports what the jobs need (:data:`PRELOAD`) and then forks one child per job, which
takes the job's environment and folder and runs :func:`course._isolated.__main__.main` exactly
as a cold ``python -m course._isolated JOB RESULT`` does. What stays as with a cold start:

* **a fresh CUDA**: the server refuses to fork once the CUDA driver library is mapped into it
  (a forked child would share its driver state) or while it runs a second thread; every child
  initialises the driver itself;
* **the same limits**: server and children live in the re-check's sandbox and cgroups;
* **one job, one process**: a child that hangs is killed with its process group and the server
  forks the next job a new one; the server never outlives its re-check process (the end of
  its request pipe ends it), so it never serves two students;
* **never a lost verdict**: no server, a refusal, a dead server or no answer in time make
  :func:`spawn` return None, and the job starts cold, as without a server; a forked child that
  dies before it reports is run again cold (:func:`course.trust.runner.run_job`).

Not :mod:`multiprocessing`'s ``forkserver``: it starts its server as a fresh interpreter,
which would import everything again once per student (one more cold start), where this server
is a copy of the re-check and inherits its imports.

**Off by default**: ``COURSE_CHECK_FORK=1`` turns it on. On an H100 host it graded seven
sample students as expected but saved one CPU-second of a full submission's 31
(docs/grading.md, "GPU checks forked"): too little for a second path in every grading.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: the job's entry point: ``python -m course._isolated`` (course.trust.runner.CHILD_MODULE)
#: runs this module; named, not imported, like the child itself
ENTRY = "course._isolated.__main__"
#: what a GPU job imports: its entry point and, through it, every task's module
PRELOAD = (ENTRY,)
#: "1" turns the fork server on; anything else (the default) starts every GPU job cold
FORK_ENV = "COURSE_CHECK_FORK"


def enabled() -> bool:
    """Whether GPU jobs may be forked here: ``COURSE_CHECK_FORK=1``. Off by default: verified
    on a GPU, it saved about 3 % of a submission's CPU (docs/grading.md)."""
    return os.environ.get(FORK_ENV, "0") == "1"


#: seconds the server may take to answer a job with its child's pid (its imports come first)
ANSWER_S = 120.0
#: seconds a killed child's server may take to report its end before the server is dropped
REAP_S = 10.0


def cuda_library_loaded(maps: str | None = None) -> bool:
    """Whether the CUDA driver library is mapped into this process (then it must not fork).

    The kernel fork-server (``autograder.sandbox.forkserver``) asks the same with its own
    copy: it must not import the course (its import would install the students' traceback
    handler and choose Numba's target there), and the course never imports the grader."""
    if maps is None:
        try:
            maps = Path("/proc/self/maps").read_text()
        except OSError:
            return True  # cannot tell: do not fork
    return "libcuda.so" in maps


def refusal() -> str | None:
    """Why this process must not fork a job's child now, or None."""
    if cuda_library_loaded():
        return "the CUDA driver library is loaded in the fork server"
    if threading.active_count() > 1:
        return "the fork server runs more than one thread"
    return None


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)  # as subprocess reports a killed process
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def _write(fd: int, message: dict[str, Any]) -> None:
    os.write(fd, json.dumps(message).encode() + b"\n")


class _Lines:
    """JSON lines read from a pipe, each within a deadline."""

    def __init__(self, fd: int) -> None:
        self.fd, self.buffer = fd, b""

    def read(self, timeout_s: float | None) -> dict[str, Any] | None:
        """The next message; None when none came in time. Raises EOFError at the pipe's end."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while b"\n" not in self.buffer:
            wait = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            if not select.select([self.fd], [], [], wait)[0]:
                return None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                raise EOFError
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message = json.loads(line)
        return message if isinstance(message, dict) else {}


# --------------------------------------------------------------------------- the server's side


def _serve(requests: int, answers: int) -> None:  # pragma: no cover - runs in the forked server
    """The fork server: import :data:`PRELOAD`, then fork one child per request until the
    request pipe ends."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the re-check's own stdin (its requests) is not the server's
    os.close(devnull)
    why: str | None = None
    try:
        for name in PRELOAD:
            __import__(name)
    except Exception as exc:  # noqa: BLE001 - a server that cannot import refuses; jobs go cold
        why = f"the fork server could not import {name}: {type(exc).__name__}: {exc}"
    lines = _Lines(requests)
    while True:
        try:
            request = lines.read(None)
        except (EOFError, ValueError):
            os._exit(0)
        why = why or refusal()
        if why or request is None:
            _write(answers, {"error": why or "bad request"})
            continue
        pid = os.fork()
        if pid == 0:
            try:
                os.close(requests)
                os.close(answers)
                _become_job(request)
            finally:
                os._exit(70)
        _write(answers, {"pid": pid})
        _, status = os.waitpid(pid, 0)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)  # anything the job started goes with it
        _write(answers, {"exit": _exit_code(status), "pid": pid})


def _become_job(request: dict[str, Any]) -> None:  # pragma: no cover - the forked job's child
    """In the job's child: take the job's folder, output and environment, run the job, exit."""
    import importlib

    main = importlib.import_module(ENTRY).main
    os.setsid()  # its own process group: a kill takes whatever it starts along
    # (signal handlers stay Python's own, as in a cold process: the server changed none)
    folder = str(request["folder"])
    os.chdir(folder)
    log = os.open(os.path.join(folder, "stderr.txt"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})
    sys.argv = ["-m", str(request["job"]), str(request["result"])]
    _reseed()
    code = 1
    try:
        code = main([str(request["job"]), str(request["result"])])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - reported on stderr, as a cold process would
        import traceback

        traceback.print_exc()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def _reseed() -> None:  # pragma: no cover - runs in the forked job's child
    """A fork copies the server's random state: each child gets its own, as a cold one has."""
    import random

    random.seed()
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()


# --------------------------------------------------------------------------- the asker's side


@dataclass
class ForkServer:
    """The fork server of this process, seen from it: the pipes and the server's pid."""

    pid: int
    requests: int
    answers: _Lines
    busy: bool = False
    dead: bool = field(default=False, repr=False)

    def stop(self) -> None:
        """End the server (its request pipe closes; then it is killed) and reap it."""
        if self.dead:
            return
        self.dead = True
        with contextlib.suppress(OSError):
            os.close(self.requests)
        with contextlib.suppress(OSError):
            os.close(self.answers.fd)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


@dataclass
class ForkedChild:
    """One GPU job's forked child, with what :func:`course.trust.runner._wait` asks of a child."""

    server: ForkServer
    pid: int
    folder: str
    code: int | None = None

    def _collect(self, timeout_s: float) -> None:
        """Read the server's report of this child's end, if it comes within ``timeout_s``."""
        try:
            while self.code is None:
                message = self.server.answers.read(timeout_s)
                if message is None:
                    return
                if message.get("pid") == self.pid and "exit" in message:
                    self.code = int(message["exit"])
        except (EOFError, OSError, ValueError):
            self.code = self.code if self.code is not None else 1
            _drop(self.server)

    @property
    def alive(self) -> bool:
        self._collect(0.0)
        return self.code is None

    def exit_code(self) -> int | None:
        """The child's exit status once it ended (negative: the signal that ended it)."""
        self._collect(0.0)
        return self.code

    def stderr_tail(self) -> list[str]:
        try:
            text = Path(self.folder, "stderr.txt").read_text(errors="replace")
        except OSError:
            return []
        return text.strip().splitlines()[-3:]

    def close(self) -> None:
        """Kill the child if it still runs and wait for the server to report its end; a server
        that does not report in time is dropped (the next job starts cold)."""
        if self.alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)  # killed before its own process group existed
            self._collect(REAP_S)
            if self.code is None:
                _drop(self.server)
        self.server.busy = False


_SERVER: list[ForkServer] = []


def _drop(server: ForkServer) -> None:
    server.stop()
    if _SERVER and _SERVER[0] is server:
        _SERVER.clear()


def start_server() -> bool:
    """Fork this process's fork server; True when there is one.

    Call it after the imports every job shares and before anything touches the GPU, in a
    process that serves one student (the trusted re-check). Where this process may not fork
    (:func:`refusal`) or forking is off (:func:`enabled`), there is none and every job starts
    cold."""
    if _SERVER and not _SERVER[0].dead:
        return True
    if not enabled() or refusal() is not None:
        return False
    request_read, request_write = os.pipe()
    answer_read, answer_write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the server
        try:
            os.close(request_write)
            os.close(answer_read)
            _serve(request_read, answer_write)
        finally:
            os._exit(0)
    os.close(request_read)
    os.close(answer_write)
    for fd in (request_write, answer_read):
        os.set_inheritable(fd, False)
    _SERVER[:] = [ForkServer(pid, request_write, _Lines(answer_read))]
    return True


def stop_server() -> None:
    """Stop this process's fork server, if any; later jobs start cold."""
    if _SERVER:
        _drop(_SERVER[0])


def spawn(job_path: Path, result_path: Path, folder: str,
          env: dict[str, str]) -> ForkedChild | None:
    """Run the job in a child forked by this process's server; None (start it cold) where there
    is no server, it refused or it did not answer in time."""
    if not _SERVER or not enabled():
        return None
    server = _SERVER[0]
    if server.dead or server.busy:
        return None
    try:
        _write(server.requests, {"job": str(job_path), "result": str(result_path),
                                 "folder": folder, "env": env})
        while True:
            answer = server.answers.read(ANSWER_S)
            if answer is None or "error" in answer:  # no answer in time, or a refusal
                _drop(server)
                return None
            if "pid" in answer and "exit" not in answer:
                break  # (an earlier child's late report of its end is skipped)
    except (OSError, EOFError, ValueError):
        _drop(server)
        return None
    server.busy = True
    return ForkedChild(server, int(answer["pid"]), folder)
