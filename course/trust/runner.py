"""Run a kernel check in a fresh Python process that receives only the kernel's source.

Two reasons to leave the notebook's process:

* The simulator and a real GPU cannot share a process (Numba chooses once, at import), yet
  counting memory traffic and watching barriers needs the simulator even on a GPU machine.
* A measurement made inside the student's process can be bent by the student's code
  (a patched timer, a patched NumPy). The fresh process rebuilds the kernels from validated
  source (:mod:`course.kernel_source`) and measures them itself.

``python -m course.isolated JOB.json RESULT.json`` is the child's entry point.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from course import backend, gpulock
from course.errors import not_written_yet
from course.kernel_source import SourceBundle, bundle_from_objects

DEFAULT_TIMEOUT_S = 300.0


class IsolatedRunError(RuntimeError):
    """The fresh process failed, timed out, or returned nothing."""


def run_job(job: dict[str, Any], simulator: bool, timeout_s: float = DEFAULT_TIMEOUT_S
            ) -> dict[str, Any]:
    """Run ``job`` in a child process (simulator or GPU) and return its JSON result.

    While the child runs, this process lets go of the GPU lock (:mod:`course.gpulock`): the
    child may need it exclusively. Time the child spends queueing for the GPU (its heartbeat
    is fresh) does not count towards ``timeout_s``.
    """
    env = {k: v for k, v in os.environ.items() if k != backend.SIM_ENV}
    if simulator:
        env[backend.SIM_ENV] = "1"
    env["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "0"
    beat = Path(os.environ[gpulock.HEARTBEAT_ENV]) if os.environ.get(gpulock.HEARTBEAT_ENV) \
        else None
    with tempfile.TemporaryDirectory(prefix="course-job-") as tmp, gpulock.released():
        job_path, result_path = Path(tmp, "job.json"), Path(tmp, "result.json")
        job_path.write_text(json.dumps(job))
        with open(Path(tmp, "stderr.txt"), "w+") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "course.isolated", str(job_path), str(result_path)],
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


# ---------------------------------------------------------------------------------------------
# Tasks, run inside the child (or in-process when this process already is a simulator).


def _inspect(bundle: SourceBundle, kind: str, tile: int | None, shape: list[int],
             seed: int) -> dict[str, Any]:
    import numpy as np

    from course.checks import diagnose, random_operands
    from course.instrument import instrumented_run
    from course.launch import naive, tiled

    namespace = bundle.load()
    gk = naive(namespace["gemm_naive"]) if kind == "naive" else \
        tiled(namespace["make_gemm_tiled"], int(tile))
    M, N, K = shape
    A, B = random_operands(M, N, K, np.random.default_rng(seed))
    result: dict[str, Any] = {"shape": [M, N, K], "tile": tile, "error": None}
    try:
        C, report = instrumented_run(gk, A, B)
    except NotImplementedError:
        raise
    except (IndexError, RuntimeError) as exc:
        if not_written_yet(exc):
            raise NotImplementedError from None
        result.update(reads_a=0, reads_b=0, races=[], uninitialised=[],
                      error=f"index out of range for M={M}, N={N}, K={K}: {exc}")
        return result
    result.update(reads_a=report.reads_a, reads_b=report.reads_b, races=report.races,
                  uninitialised=report.uninitialised,
                  problem=diagnose(C, A, B, tile or 16))
    return result


TASKS: dict[str, Callable[..., dict[str, Any]]] = {"inspect": _inspect}


def register_task(name: str, fn: Callable[..., dict[str, Any]]) -> None:
    """Let other course modules (e.g. :mod:`course.speedup`) add child-process tasks."""
    TASKS[name] = fn


def _main(job_path: str, result_path: str) -> int:
    import sys as _sys

    _sys.setswitchinterval(5e-4)  # the simulator's threads hand over faster: about 2× quicker
    job = json.loads(Path(job_path).read_text())
    # The module that registers the job's task (course.speedup unless the job names another
    # course module, such as course.cudac.speedup).
    module = str(job.pop("module", "course.speedup"))
    if not module.startswith("course."):
        raise SystemExit(f"refusing to import {module!r} for a job")
    importlib.import_module(module)

    if not backend.simulator_requested() and not gpulock.hold_shared_on_launch():
        gpulock.ensure_shared()  # no launch hook in this numba-cuda: hold it throughout
    bundles = {k: SourceBundle.from_json(v) for k, v in job.pop("bundles").items()}
    # Run as `python -m course.isolated`, this file is `__main__`; other modules register
    # their tasks in the importable `course.isolated`, so look them up there.
    registry = importlib.import_module("course.isolated").TASKS
    task = registry[job.pop("task")]
    try:
        result = task(**bundles, **job)
    except NotImplementedError:
        result = {"error": "the kernel is not written yet (it still raises NotImplementedError)"}
    except gpulock.GpuLockTimeout as exc:
        result = {"not_measured": str(exc)}
    except Exception as exc:  # the child reports; the parent decides what it means
        result = {"error": f"{type(exc).__name__}: {exc}"}
    Path(result_path).write_text(json.dumps(result))
    return 0


# ---------------------------------------------------------------------------------------------
# What the checks call.


def inspect_tiled(factory: Callable[[int], Any], tile: int, shape: tuple[int, int, int],
                  seed: int) -> dict[str, Any]:
    """Instrumented simulator run of ``factory(tile)``: reads, races, diagnosis."""
    bundle = bundle_from_objects({"make_gemm_tiled": factory})
    return _inspect_bundle(bundle, "tiled", tile, shape, seed)


def inspect_naive(kernel: Any, shape: tuple[int, int, int], seed: int) -> dict[str, Any]:
    """Instrumented simulator run of ``gemm_naive``."""
    bundle = bundle_from_objects({"gemm_naive": kernel})
    return _inspect_bundle(bundle, "naive", None, shape, seed)


def _inspect_bundle(bundle: SourceBundle, kind: str, tile: int | None,
                    shape: tuple[int, int, int], seed: int) -> dict[str, Any]:
    if backend.detect().kind == "simulator":
        return _inspect(bundle, kind, tile, list(shape), seed)
    job = {"task": "inspect", "bundles": {"bundle": bundle.to_json()}, "kind": kind,
           "tile": tile, "shape": list(shape), "seed": seed}
    return run_job(job, simulator=True)


if __name__ == "__main__":
    raise SystemExit(_main(*sys.argv[1:3]))
