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

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from course.runtime import backend, gpulock, i18n

DEFAULT_TIMEOUT_S = 300.0
#: the child's entry point (a package run with ``python -m``); named, not imported.
CHILD_MODULE = "course._isolated"


class IsolatedRunError(RuntimeError):
    """The fresh process failed, timed out, or returned nothing."""


def run_job(job: dict[str, Any], simulator: bool, timeout_s: float = DEFAULT_TIMEOUT_S
            ) -> dict[str, Any]:
    """Run ``job`` in a child process (simulator or GPU) and return its JSON result.

    While the child runs, this process lets go of the GPU lock (:mod:`course.runtime.gpulock`): the
    child may need it exclusively. Time the child spends queueing for the GPU (its heartbeat
    is fresh) does not count towards ``timeout_s``.
    """
    env = {k: v for k, v in os.environ.items() if k != backend.SIM_ENV}
    if simulator:
        env[backend.SIM_ENV] = "1"
    env["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "0"
    # The child cannot find the notebook (no session, no Colab front end): it speaks ours.
    env[i18n.ENV] = i18n.language()
    beat = Path(os.environ[gpulock.HEARTBEAT_ENV]) if os.environ.get(gpulock.HEARTBEAT_ENV) \
        else None
    with tempfile.TemporaryDirectory(prefix="course-job-") as tmp, gpulock.released():
        job_path, result_path = Path(tmp, "job.json"), Path(tmp, "result.json")
        job_path.write_text(json.dumps(job))
        with open(Path(tmp, "stderr.txt"), "w+") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", CHILD_MODULE, str(job_path), str(result_path)],
                env=env, stdout=err, stderr=subprocess.STDOUT, text=True, cwd=tmp)
            last = time.monotonic()
            deadline = last + timeout_s
            while proc.poll() is None:
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
                time.sleep(0.05)
            err.seek(0)
            stderr = err.read()
        if not result_path.exists():
            tail = stderr.strip().splitlines()[-3:]
            raise IsolatedRunError(
                f"the check process died (exit code {proc.returncode}) before reporting: "
                + " | ".join(tail)
            )
        return json.loads(result_path.read_text())
