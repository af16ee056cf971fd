"""Run a task in a fresh Python process that receives only the kernels' source.

Two reasons to leave the notebook's process:

* The simulator and a real GPU cannot share a process (Numba chooses once, at import), yet
  counting memory traffic and watching barriers needs the simulator even on a GPU machine.
* A measurement made inside the student's process can be bent by the student's code
  (a patched timer, a patched NumPy). The fresh process rebuilds the kernels from validated
  source (:mod:`course.trust.kernel_source`) and measures them itself.

The child is ``python -m course._isolated JOB.json RESULT.json``; the job names one of the
tasks listed there (:mod:`course._isolated.tasks`). This module only starts it and waits, so it
imports nothing above :mod:`course.trust`.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from course.runtime import backend, gpulock, i18n
from course.trust import forking

DEFAULT_TIMEOUT_S = 300.0
#: the child's entry point (a package run with ``python -m``); named, not imported.
CHILD_MODULE = "course._isolated"
#: its argument for serving simulator jobs, one per line of stdin (:class:`_SimulatorServer`)
SERVE_FLAG = "--serve"


class IsolatedRunError(RuntimeError):
    """The fresh process failed, timed out, or returned nothing."""


class ChildDied(IsolatedRunError):
    """The fresh process ended without writing its result."""


def _child_env(simulator: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != backend.SIM_ENV}
    if simulator:
        env[backend.SIM_ENV] = "1"
    env["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "0"
    return env


def write_result(result_path: str | Path, result: dict[str, Any]) -> None:
    """The child's side: write the result whole, then rename it into place (the parent reads it
    as soon as it exists)."""
    partial = f"{result_path}.partial"
    Path(partial).write_text(json.dumps(result))
    os.replace(partial, result_path)


def request_lines() -> Iterator[str]:
    """A serving child's requests, one per line of its stdin, which is moved aside at once: its
    jobs get an empty stdin, so that a job reading input cannot swallow the next request."""
    requests = os.fdopen(os.dup(0), "r")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the process
    return (line.rstrip("\n") for line in requests if line.strip())


class _Child:
    """A child process running ``args`` with its output in ``folder``/stderr.txt."""

    def __init__(self, args: list[str], folder: str, simulator: bool,
                 wrapper: Sequence[str] = (), **popen: Any) -> None:
        self.log = open(Path(folder, "stderr.txt"), "w+")  # noqa: SIM115 - closed by close()
        self.proc = subprocess.Popen([*wrapper, sys.executable, "-m", CHILD_MODULE, *args],
                                     env=_child_env(simulator), stdout=self.log,
                                     stderr=subprocess.STDOUT, text=True, cwd=folder, **popen)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def exit_code(self) -> int | None:
        """The process's exit status once it ended, else None."""
        return self.proc.poll()

    def stderr_tail(self) -> list[str]:
        self.log.seek(0)
        return self.log.read().strip().splitlines()[-3:]

    def close(self) -> None:
        if self.alive:
            self.proc.kill()
        self.proc.wait()
        self.log.close()


class _SimulatorServer(_Child):
    """One warm simulator process that runs this process's simulator jobs one after another.

    Each simulator job (an instrumented run: reads, barriers) would otherwise start a Python
    and import NumPy, Numba's simulator and the course again — about a second of CPU, several
    times per notebook. The server (``python -m course._isolated --serve``) rebuilds each job's
    kernels from source in a namespace of their own, as a fresh process does; it serves only
    this process, is stopped (and the next job starts a new one) when a job is cut short or
    kills it, and ends when this process does (its request pipe closes).
    """

    def __init__(self) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="course-simulator-")
        super().__init__([SERVE_FLAG], self.folder.name, simulator=True, stdin=subprocess.PIPE)

    def ask(self, job_path: Path, result_path: Path) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{job_path}\t{result_path}\n")
        self.proc.stdin.flush()

    def close(self) -> None:
        """Stop it; the next simulator job starts a new one."""
        if _SERVER and _SERVER[0] is self:
            _SERVER.clear()
        with contextlib.suppress(OSError):
            super().close()
            self.folder.cleanup()


_SERVER: list[_SimulatorServer] = []


def _simulator_server() -> _SimulatorServer:
    if _SERVER and not _SERVER[0].alive:
        _SERVER[0].close()
    if not _SERVER:
        _SERVER.append(_SimulatorServer())
        atexit.register(_SERVER[0].close)
    return _SERVER[0]


def stop_simulator() -> None:
    """Stop this process's warm simulator process, if any; the next simulator job starts one."""
    if _SERVER:
        _SERVER[0].close()


def run_job(job: dict[str, Any], simulator: bool, timeout_s: float = DEFAULT_TIMEOUT_S,
            wrapper: Sequence[str] = ()) -> dict[str, Any]:
    """Run ``job`` in a child process (simulator or GPU) and return its JSON result.

    A GPU job gets a fresh process of its own (a timing's budget ends that process when a kernel
    hangs): forked from this process's fork server where it started one (the trusted re-check,
    :mod:`course.trust.forking`; one that dies before it reports runs again cold), else
    started cold. Simulator jobs go to this process's warm
    simulator process (:class:`_SimulatorServer`), which rebuilds each job's kernels from
    source all the same.
    While the child runs, this process lets go of the GPU lock (:mod:`course.runtime.gpulock`): the
    child may need it exclusively. Time the child spends queueing for the GPU (its heartbeat
    is fresh) does not count towards ``timeout_s``.
    """
    # The child cannot find the notebook (no session, no Colab front end): it speaks ours.
    job = dict(job, env={i18n.ENV: i18n.language()})
    beat = Path(os.environ[gpulock.HEARTBEAT_ENV]) if os.environ.get(gpulock.HEARTBEAT_ENV) \
        else None
    with tempfile.TemporaryDirectory(prefix="course-job-") as tmp, gpulock.released():
        job_path, result_path = Path(tmp, "job.json"), Path(tmp, "result.json")
        job_path.write_text(json.dumps(job))
        if simulator:
            server = _simulator_server()
            server.ask(job_path, result_path)
            _finish(server, result_path, timeout_s, beat, keep=True)
        else:
            # forked from this process's pre-imported fork server where it has one, else cold
            forked = None if wrapper else forking.spawn(job_path, result_path, tmp,
                                                        _child_env(simulator=False))
            try:
                if forked is not None:
                    _finish(forked, result_path, timeout_s, beat)
            except ChildDied:
                # a forked process that crashed may owe it to the fork: no verdict from it;
                # the job runs again cold, and later jobs start cold too
                forking.stop_server()
                forked = None
            if forked is None:
                cold = _Child([str(job_path), str(result_path)], tmp, simulator=False,
                              wrapper=wrapper)
                _finish(cold, result_path, timeout_s, beat, wrapper=wrapper)
        return json.loads(result_path.read_text())


def _finish(child: _Child | forking.ForkedChild, result_path: Path, timeout_s: float,
            beat: Path | None, keep: bool = False, wrapper: Sequence[str] = ()) -> None:
    """Wait for ``child``'s result, then stop it: a fresh child is done with its one job; the
    warm simulator process (``keep``) only when its job was cut short (timed out,
    interrupted), so that the next job never queues behind it. A wrapper (a profiler) writes
    its own output after the job's process ends: it gets the rest of the time to finish
    before it is stopped."""
    done = False
    try:
        _wait(child, result_path, timeout_s, beat)
        done = True
    finally:
        if done and wrapper and isinstance(child, _Child):
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.proc.wait(timeout=timeout_s)
        if not keep or not done:
            child.close()


def _wait(child: _Child | forking.ForkedChild, result_path: Path, timeout_s: float,
          beat: Path | None) -> None:
    """Wait for ``result_path`` (written whole, then renamed) or the child's end."""
    last = time.monotonic()
    deadline = last + timeout_s
    while not result_path.exists() and child.alive:
        now = time.monotonic()
        if gpulock.heartbeat_fresh(beat):  # queueing for the GPU: not the student's
            deadline += now - last
        last = now
        if now > deadline:
            raise IsolatedRunError(
                f"the check did not finish within {timeout_s:.0f} s (an endless loop "
                "in the kernel? a barrier some threads never reach?)")
        time.sleep(0.02)
    if not result_path.exists():
        raise ChildDied(
            f"the check process died (exit code {child.exit_code()}) before reporting: "
            + " | ".join(child.stderr_tail()))
