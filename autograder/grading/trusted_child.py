"""The child side of the trusted re-check: run test cells on rebuilt definitions.

Started by :func:`autograder.grading.trusted_process.run_jobs` inside the sandbox, as
``python -m autograder.grading.trusted_child``, once per student: it imports the course package
and the standard library once (not nbgrader, nbformat or traitlets, which would cost every check
process seconds of start-up), then serves one request per notebook. A request is a folder whose
path arrives as a line on stdin, holding ``request.json`` (the notebook's jobs and the
environment they speak in). For each job it rebuilds the validated definitions
(:class:`course.trust.kernel_source.SourceBundle`) in a namespace of their own, runs the test
cell's code on them and writes one JSON verdict per line to the folder's ``results.jsonl``,
flushed as soon as it is known, so that the parent knows how far it got if the process hangs or
dies (the parent then stops it, and the next notebook gets a new one).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import io
import json
import os
import time
from pathlib import Path
from typing import Any

NOT_MEASURED = "NotMeasured"
#: a check whose kernel launch outlived the GPU lock's launch limit (the process was ended)
HUNG_LAUNCH = "GpuLaunchTimeout"
MAX_STDOUT = 4000
#: in a request's folder: what the parent asks (``{"jobs": [...], "env": {...}}``).
REQUEST_FILE = "request.json"
#: in a request's folder: one JSON verdict per line, in the order of the jobs.
RESULTS_FILE = "results.jsonl"
#: written in a request's folder when its first job starts: the parent's clock starts.
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
    from course.checks.speedup import NotMeasuredError, take_measured
    from course.runtime import gpulock
    from course.runtime.tracebacks import not_written_line
    from course.trust.kernel_source import SourceBundle

    out = {"grade_id": job["grade_id"], "status": "pass", "stdout": "", "ename": "",
           "evalue": ""}
    if job["setup_error"]:
        out.update(status="fail", ename=job["setup_error"][0], evalue=job["setup_error"][1])
        return out
    buf = _Tail(MAX_STDOUT)
    take_measured()  # nothing an earlier cell measured is this cell's
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
        # an answer left unfilled: the one line the notebook showed, naming it
        evalue = (not_written_line(exc, exc.__traceback__)
                  if isinstance(exc, NotImplementedError) else str(exc))
        out.update(status="fail", ename=type(exc).__name__, evalue=evalue)
    finally:
        gpulock.release()  # the next test cell queues for the GPU afresh
    out["stdout"] = buf.text()
    out["seconds"] = round(time.monotonic() - started, 2)
    measured = take_measured()  # the speedup's numbers (times, GFLOP/s, GPU), beside its verdict
    if measured:
        out["measured"] = measured[-1]
    return out


def _prepare() -> None:
    """The imports every job needs (NumPy, Numba, the checks), once per process."""
    os.environ["COURSE_TRUSTED_RUN"] = "1"
    import course.checks.speedup  # noqa: F401
    import course.trust.kernel_source  # noqa: F401
    from course.runtime import backend, gpulock, gpusync

    # Before any context exists: the checks' waits for the GPU sleep instead of spinning.
    gpusync.block_while_waiting()

    # Correctness checks share the GPU with other students' checks (lock held shared by each
    # kernel launch while it runs); speedup timings take it alone (course.checks.speedup).
    if not backend.simulator_requested() and not gpulock.hold_shared_on_launch():
        _HOLD_PER_CELL[0] = True


def _stop_hung(sink: Any, grade_id: str, reason: str) -> None:
    """A launch outlived the GPU lock's launch limit (:func:`course.runtime.gpulock.shared_launch`):
    record the check's failure, then end this process, the only way to stop the kernel. The
    parent starts a new process for the notebook's other checks."""
    sink.write(json.dumps({"grade_id": grade_id, "status": "fail", "ename": HUNG_LAUNCH,
                           "evalue": reason, "stdout": ""}) + "\n")
    sink.flush()
    os._exit(0)


def run_request(folder: Path) -> None:
    """Run the jobs of one notebook (``folder``/request.json), one verdict per line."""
    from course.runtime import gpulock
    from course.trust import replay

    request = json.loads((folder / REQUEST_FILE).read_text())
    os.environ.update(request.get("env") or {})  # the notebook's language, its GPU heartbeat
    replay.record_to(folder / REPLAY_FILE)
    (folder / READY_FILE).touch()  # the parent's clock starts now
    try:
        with open(folder / RESULTS_FILE, "a") as sink:
            for job in request["jobs"]:
                gpulock.on_hung_launch(functools.partial(_stop_hung, sink, job["grade_id"]))
                sink.write(json.dumps(_run_one(job)) + "\n")
                sink.flush()
    finally:
        gpulock.on_hung_launch(None)
        replay.record_to(None)
        gc.collect()  # what one notebook's checks left behind is not the next one's memory


def serve() -> int:
    """Serve requests, one folder path per line of stdin, until stdin ends.

    The requests arrive on a descriptor of their own; the jobs see an empty stdin, so a test
    cell that reads input cannot swallow the next notebook's request.
    """
    _prepare()  # the course's imports, in the trusted environment
    from course.trust.runner import request_lines

    for line in request_lines():
        run_request(Path(line.strip()))
    return 0


if __name__ == "__main__":
    raise SystemExit(serve())
