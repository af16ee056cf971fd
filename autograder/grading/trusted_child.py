"""The child side of the trusted re-check: run test cells on rebuilt definitions.

Started by :func:`autograder.grading.trusted.run_jobs` inside the sandbox, as
``python -m autograder.grading.trusted_child JOBS.json RESULTS.jsonl``. It imports only the course
package and the standard library (not nbgrader, nbformat or traitlets, which would cost every
check process seconds of start-up), rebuilds each job's validated definitions
(:class:`course.trust.kernel_source.SourceBundle`), runs the test cell's code on them and writes one
JSON verdict per line, flushed as soon as it is known, so that the parent knows how far it got
if the process hangs or dies.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

NOT_MEASURED = "NotMeasured"
MAX_STDOUT = 4000
#: written beside the results once the child's imports are done: the parent's clock starts.
READY_FILE = "ready"
#: beside the results: the checks' recorded outcomes, for the student's kernel to replay
#: (:mod:`course.trust.replay`).
REPLAY_FILE = "replay.jsonl"


class _Tail(io.TextIOBase):
    """A stdout that keeps only the last ``keep`` characters (memory stays bounded)."""

    def __init__(self, keep: int) -> None:
        self.keep, self.total, self.kept = keep, 0, ""

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        self.total += len(s)
        self.kept = (self.kept + s[-self.keep:])[-self.keep:]
        return len(s)

    def text(self) -> str:
        cut = self.total - len(self.kept)
        return (f"[… {cut} characters of output cut …]\n" if cut else "") + self.kept


#: True where kernel launches cannot take the GPU lock themselves: hold it per test cell.
_HOLD_PER_CELL = [False]


def _run_one(job: dict[str, Any]) -> dict[str, Any]:
    from course.checks.speedup import NotMeasuredError
    from course.runtime import gpulock
    from course.trust.kernel_source import SourceBundle

    out = {"grade_id": job["grade_id"], "status": "pass", "stdout": "", "ename": "",
           "evalue": ""}
    if job["setup_error"]:
        out.update(status="fail", ename=job["setup_error"][0], evalue=job["setup_error"][1])
        return out
    buf = _Tail(MAX_STDOUT)
    started = time.monotonic()
    try:
        if _HOLD_PER_CELL[0]:
            gpulock.ensure_shared()
        with contextlib.redirect_stdout(buf):
            namespace = SourceBundle.from_json(job["bundle"]).load()
            exec(compile(job["code"], f"<test cell {job['grade_id']}>", "exec"), namespace)  # noqa: S102
    except (NotMeasuredError, gpulock.GpuLockTimeout) as exc:
        out.update(status="not_measured", ename=NOT_MEASURED, evalue=str(exc))
    except BaseException as exc:  # noqa: BLE001 - any failure of student code is a verdict
        out.update(status="fail", ename=type(exc).__name__, evalue=str(exc))
    finally:
        gpulock.release()  # the next test cell queues for the GPU afresh
    out["stdout"] = buf.text()
    out["seconds"] = round(time.monotonic() - started, 2)
    return out


def main(jobs_path: str, results_path: str) -> int:
    """Run every job of ``jobs_path``; append one JSON result line per job to ``results_path``."""
    os.environ["COURSE_TRUSTED_RUN"] = "1"
    import course.checks.speedup  # noqa: F401
    import course.trust.kernel_source  # noqa: F401  (the imports every job needs: NumPy, Numba)
    from course.runtime import backend, gpulock
    from course.trust import replay

    replay.record_to(Path(results_path).with_name(REPLAY_FILE))
    # Correctness checks share the GPU with other students' checks (lock held shared by each
    # kernel launch while it runs); speedup timings take it alone (course.checks.speedup).
    if not backend.simulator_requested() and not gpulock.hold_shared_on_launch():
        _HOLD_PER_CELL[0] = True
    jobs = json.loads(Path(jobs_path).read_text())

    Path(results_path).with_name(READY_FILE).touch()  # the parent's clock starts now
    with open(results_path, "a") as sink:
        for job in jobs:
            sink.write(json.dumps(_run_one(job)) + "\n")
            sink.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:3]))
