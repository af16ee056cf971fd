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


#: what ``import course`` reads to skip counting GPUs (which would load the CUDA driver)
_NO_COUNT_ENV = "COURSE_NO_SIMULATOR"
#: Numba's switch to its simulator (course.runtime.backend.SIM_ENV; named here because
#: importing the course is what must wait)
_SIM_ENV = "NUMBA_ENABLE_CUDASIM"


def _gpu_count_in_a_child() -> int:
    """How many GPUs the CUDA driver sees (``course.runtime.backend.driver_gpu_count``), asked
    in a forked child so that this process never loads the driver: it may then fork check
    processes that each start CUDA afresh. The child imports the course told not to count
    (its import would count once more). 0 where the child cannot tell."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child only counts
        try:
            os.environ[_NO_COUNT_ENV] = "1"
            from course.runtime import backend

            os._exit(min(backend.driver_gpu_count()[0], 100) + 1)
        finally:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return max(os.WEXITSTATUS(status) - 1, 0) if os.WIFEXITED(status) else 0


def _choose_target_without_the_driver() -> bool:
    """Make the choice ``import course`` makes — the GPU, or Numba's simulator where the driver
    sees none — with the GPUs counted in a forked child, and tell the import it is made: this
    process has then not loaded the CUDA driver when it forks its fork server. True where the
    choice is the GPU. Where the simulator is asked for already, or the environment says not
    to choose, nothing is counted (``import course`` would not count either)."""
    if os.environ.get(_SIM_ENV, "0") not in ("", "0") or os.environ.get(_NO_COUNT_ENV):
        return False
    if _gpu_count_in_a_child() == 0:
        os.environ[_SIM_ENV] = "1"  # as course.runtime.backend.choose_numba_target does
        return False
    os.environ[_NO_COUNT_ENV] = "1"  # until the imports are done: counted already
    return True


def _prepare() -> None:
    """The imports every job needs (NumPy, Numba, the checks), once per process; then, on a
    GPU, the fork server for the GPU jobs (:mod:`course.trust.forking`), before this process
    touches the GPU."""
    os.environ["COURSE_TRUSTED_RUN"] = "1"
    # (the variable is course.trust.forking.FORK_ENV: off, the imports count GPUs as ever)
    on_gpu = os.environ.get("COURSE_CHECK_FORK") == "1" and _choose_target_without_the_driver()
    import course.checks.speedup  # noqa: F401
    import course.trust.kernel_source  # noqa: F401
    from course.runtime import backend, gpulock, gpusync
    from course.trust import forking

    if on_gpu:
        forking.start_server()
        os.environ.pop(_NO_COUNT_ENV, None)

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
