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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from course.runtime import backend, gpulock, i18n

DEFAULT_TIMEOUT_S = 300.0
#: the child's entry point (a package run with ``python -m``); named, not imported.
CHILD_MODULE = "course._isolated"
#: its argument for serving simulator jobs, one per line of stdin (:class:`_SimulatorServer`)
SERVE_FLAG = "--serve"


class IsolatedRunError(RuntimeError):
    """The fresh process failed, timed out, or returned nothing."""


def _child_env(simulator: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != backend.SIM_ENV}
    if simulator:
        env[backend.SIM_ENV] = "1"
    env["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "0"
    return env


class _SimulatorServer:
    """One warm simulator process that runs this process's simulator jobs one after another.

    Each simulator job (an instrumented run: reads, barriers) would otherwise start a Python
    and import NumPy, Numba's simulator and the course again — about a second of CPU, several
    times per notebook. The server (``python -m course._isolated --serve``) rebuilds each job's
    kernels from source in a namespace of their own, as a fresh process does; it serves only
    this process, is stopped (and the next job starts a new one) when a job times out or kills
    it, and ends when this process does (its request pipe closes).
    """

    def __init__(self) -> None:
        self.folder = tempfile.TemporaryDirectory(prefix="course-simulator-")
        self.log = open(Path(self.folder.name, "stderr.txt"), "w+")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", CHILD_MODULE, SERVE_FLAG], env=_child_env(simulator=True),
            stdin=subprocess.PIPE, stdout=self.log, stderr=subprocess.STDOUT, text=True,
            cwd=self.folder.name)

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def ask(self, job_path: Path, result_path: Path) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{job_path}\t{result_path}\n")
        self.proc.stdin.flush()

    def stderr_tail(self) -> list[str]:
        self.log.seek(0)
        return self.log.read().strip().splitlines()[-3:]

    def close(self) -> None:
        if self.alive:
            self.proc.kill()
        self.proc.wait()
        self.log.close()
        self.folder.cleanup()


_SERVER: list[_SimulatorServer] = []


def _simulator_server() -> _SimulatorServer:
    if _SERVER and not _SERVER[0].alive:
        _SERVER.pop().close()
    if not _SERVER:
        _SERVER.append(_SimulatorServer())
        atexit.register(_close_server, _SERVER[0])
    return _SERVER[0]


def _close_server(server: _SimulatorServer) -> None:
    if _SERVER and _SERVER[0] is server:
        _SERVER.clear()
    with contextlib.suppress(OSError):
        server.close()


def stop_simulator() -> None:
    """Stop this process's warm simulator process, if any; the next simulator job starts one."""
    if _SERVER:
        _close_server(_SERVER[0])


def run_job(job: dict[str, Any], simulator: bool, timeout_s: float = DEFAULT_TIMEOUT_S
            ) -> dict[str, Any]:
    """Run ``job`` in a child process (simulator or GPU) and return its JSON result.

    A GPU job gets a fresh process of its own (a timing's budget ends that process when a kernel
    hangs). Simulator jobs go to this process's warm simulator process
    (:class:`_SimulatorServer`), which rebuilds each job's kernels from source all the same.
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
            proc, tail = server.proc, server.stderr_tail
        else:
            err = open(Path(tmp, "stderr.txt"), "w+")  # noqa: SIM115 - closed below
            proc = subprocess.Popen(
                [sys.executable, "-m", CHILD_MODULE, str(job_path), str(result_path)],
                env=_child_env(simulator=False), stdout=err, stderr=subprocess.STDOUT,
                text=True, cwd=tmp)

            def tail() -> list[str]:
                err.seek(0)
                return err.read().strip().splitlines()[-3:]
        try:
            _wait(proc, result_path, timeout_s, beat, tail)
        except BaseException:
            if simulator:  # a job cut short (interrupted, timed out): its process goes with it
                _close_server(server)
            raise
        finally:
            if not simulator:
                proc.wait()
                err.close()
        return json.loads(result_path.read_text())


def _wait(proc: subprocess.Popen, result_path: Path, timeout_s: float, beat: Path | None,
          tail: Callable[[], list[str]]) -> None:
    """Wait for ``result_path`` (written whole, then renamed) or the child's end."""
    last = time.monotonic()
    deadline = last + timeout_s
    while not result_path.exists() and proc.poll() is None:
        now = time.monotonic()
        if gpulock.heartbeat_fresh(beat):  # queueing for the GPU: not the student's
            deadline += now - last
        last = now
        if now > deadline:
            proc.kill()
            proc.wait()
            raise IsolatedRunError(
                f"the check did not finish within {timeout_s:.0f} s (an endless loop "
                "in the kernel? a barrier some threads never reach?)")
        time.sleep(0.02)
    if not result_path.exists():
        raise IsolatedRunError(
            f"the check process died (exit code {proc.poll()}) before reporting: "
            + " | ".join(tail()))
