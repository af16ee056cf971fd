"""Score every test cell outside the student's kernel, from validated source.

Why: nbgrader scores a test cell by the outputs the student's own kernel reports, and that
kernel runs the student's code. Code that patches NumPy's comparisons, the checker, the
timer, or IPython itself can make any test cell look passed. So after nbgrader has run the
notebook, this preprocessor re-runs each test cell in a fresh, sandboxed process
(:mod:`autograder.sandbox`) that holds only:

* the *definitions* the test cell uses, taken from the cells above it and checked against
  the whitelist of :mod:`course.kernel_source` (no imports beyond math/numpy/numba, no
  attribute assignment, no file access, no classes) — anything else is not carried over;
* the test cell's own code, which nbgrader has already restored from the gradebook.

The cell's outputs are then replaced by that verdict: printed text on success; a one-line
error (name and message, never a traceback with hidden-test source) on failure; and
``NotMeasured`` for checks that need a GPU this machine does not have, which the grade
table shows as "not measured" instead of a silent 0 or a free pass.

``python -m autograder.trusted JOBS.json RESULTS.jsonl`` is the child side.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, Unicode

from autograder import gpulock as gpulock_setup
from autograder import sandbox
from autograder.execute import DEAD_KERNEL_KEY
from autograder.restore import RESTORED_KEY

NOT_MEASURED = "NotMeasured"
MAX_STDOUT = 4000


def is_test_cell(cell: NotebookNode) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def make_job(cells_before: list[NotebookNode], cell: NotebookNode) -> dict[str, Any]:
    """What the child needs for one test cell: its code and the definitions it uses."""
    from course.kernel_source import DisallowedCodeError, bundle_for_test_cell

    grade_id = cell.metadata["nbgrader"]["grade_id"]
    sources = [c.source for c in cells_before if c.cell_type == "code" and not is_test_cell(c)]
    job: dict[str, Any] = {"grade_id": grade_id, "code": cell.source, "bundle": None,
                           "setup_error": None}
    try:
        job["bundle"] = bundle_for_test_cell(sources, cell.source).to_json()
    except (DisallowedCodeError, NameError) as exc:
        job["setup_error"] = [type(exc).__name__, str(exc)]
    return job


# ---------------------------------------------------------------------------------------------
# Child side.


#: True where kernel launches cannot take the GPU lock themselves: hold it per test cell.
_HOLD_PER_CELL = [False]


def _run_one(job: dict[str, Any]) -> dict[str, Any]:
    from course import gpulock
    from course.kernel_source import SourceBundle
    from course.speedup import NotMeasuredError

    out = {"grade_id": job["grade_id"], "status": "pass", "stdout": "", "ename": "",
           "evalue": ""}
    if job["setup_error"]:
        out.update(status="fail", ename=job["setup_error"][0], evalue=job["setup_error"][1])
        return out
    buf = io.StringIO()
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
    out["stdout"] = buf.getvalue()[-MAX_STDOUT:]
    out["seconds"] = round(time.monotonic() - started, 2)
    return out


def _child_main(jobs_path: str, results_path: str) -> int:
    sys.setswitchinterval(5e-4)  # the simulator's Python threads hand over faster
    os.environ[__import__("course.backend").backend.TRUSTED_ENV] = "1"
    from course import backend, gpulock

    # Correctness checks share the GPU with other students' checks (lock held shared from a
    # cell's first kernel launch to its end); speedup timings take it alone (course.speedup).
    if not backend.simulator_requested() and not gpulock.hold_shared_on_launch():
        _HOLD_PER_CELL[0] = True
    jobs = json.loads(Path(jobs_path).read_text())
    with open(results_path, "a") as sink:
        for job in jobs:
            sink.write(json.dumps(_run_one(job)) + "\n")
            sink.flush()
    return 0


# ---------------------------------------------------------------------------------------------
# Parent side.


def run_jobs(jobs: list[dict[str, Any]], *, course_root: Path, timeout_s: float,
             extra_env: dict[str, str] | None = None, extra_ro: tuple[Path, ...] = ()
             ) -> list[dict[str, Any]]:
    """Run jobs in sandboxed children; a job that exceeds ``timeout_s`` fails, the rest go on."""
    import autograder
    from course import gpulock

    results: list[dict[str, Any]] = []
    env = dict(os.environ, **(extra_env or {}))
    # The GPU lock: reachable here, in the sandbox, never from the notebook kernel.
    lock_dir = gpulock_setup.lock_dir_for_children(course_root)
    env[gpulock.LOCK_ENV] = str(lock_dir)
    extra_rw = (lock_dir,)
    env["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(autograder.__file__).parents[1]), *filter(None, [env.get("PYTHONPATH")])])
    while len(results) < len(jobs):
        todo = jobs[len(results):]
        with tempfile.TemporaryDirectory(prefix="trusted-") as tmp:
            jobs_path, results_path = Path(tmp, "jobs.json"), Path(tmp, "results.jsonl")
            jobs_path.write_text(json.dumps(todo))
            results_path.touch()
            beat = Path(tmp, "gpu-queue.heartbeat")
            env[gpulock.HEARTBEAT_ENV] = str(beat)
            argv = sandbox.wrap(
                [sys.executable, "-m", "autograder.trusted", str(jobs_path), str(results_path)],
                course_root=course_root, workdir=Path(tmp),
                extra_ro=(Path(autograder.__file__).parent, *extra_ro), extra_rw=extra_rw)
            proc = subprocess.Popen(argv, env=env, cwd=tmp, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, text=True)
            done, last = 0, time.monotonic()
            while True:
                lines = results_path.read_text().splitlines()
                if len(lines) > done:
                    done, last = len(lines), time.monotonic()
                if gpulock.heartbeat_fresh(beat):  # queueing for the GPU is not hanging
                    last = max(last, time.monotonic() - 0.2)
                if proc.poll() is not None or done == len(todo):
                    proc.wait()
                    lines = results_path.read_text().splitlines()
                    break
                if time.monotonic() - last > timeout_s:
                    proc.kill()
                    proc.wait()
                    lines = results_path.read_text().splitlines()
                    break
                time.sleep(0.2)
            got = [json.loads(line) for line in lines]
            results.extend(got)
            if len(got) < len(todo):  # the job in progress hung or killed the process
                stuck = todo[len(got)]
                died = proc.returncode not in (0, -9)
                why = (f"the check process died (exit code {proc.returncode})" if died else
                       f"the check did not finish within {timeout_s:.0f} s: an endless loop, "
                       "or a barrier that some threads never reach?")
                results.append({"grade_id": stuck["grade_id"], "status": "fail",
                                "ename": "Timeout" if not died else "ProcessDied",
                                "evalue": why, "stdout": ""})
    return results


def outputs_for(result: dict[str, Any]) -> list[NotebookNode]:
    """Notebook outputs that make nbgrader score the cell as the verdict says."""
    outputs = []
    if result.get("stdout"):
        outputs.append(NotebookNode(output_type="stream", name="stdout", text=result["stdout"]))
    if result["status"] != "pass":
        line = f"{result['ename']}: {result['evalue']}"
        outputs.append(NotebookNode(output_type="error", ename=result["ename"],
                                    evalue=result["evalue"], traceback=[line]))
    return outputs


def notebook_verdict(cell: NotebookNode) -> dict[str, str]:
    """What the student's own kernel showed for a test cell, before the grader replaced it.

    ``pass``/``fail`` as nbgrader would score these outputs (an error fails), ``not_measured``
    for a check that needs a GPU, ``not_run`` when the cell never ran (a dead kernel). Used to
    hold the grader to the course's promise: the notebook's ✓ is the grader's ✓.
    """
    if cell.get("execution_count") is None and not cell.get("outputs"):
        return {"status": "not_run", "error": ""}
    for out in cell.get("outputs", []):
        if out.get("output_type") == "error":
            ename, evalue = out.get("ename", ""), out.get("evalue", "")
            status = "not_measured" if ename == NOT_MEASURED else "fail"
            return {"status": status, "error": f"{ename}: {evalue}"[:400]}
    return {"status": "pass", "error": ""}


#: notebook metadata key TrustedRecheck sets; :class:`RequireTrustedVerdicts` checks it.
TRUSTED_MARK = "course_trusted_recheck"


class TrustedRecheck(NbGraderPreprocessor):
    """Replace every test cell's outputs by a verdict computed outside the student's kernel."""

    timeout = Integer(600, help="Seconds one test cell may take in the trusted re-run."
                      ).tag(config=True)
    course_root = Unicode("", help="The course directory to hide from student code."
                          ).tag(config=True)
    reference_file = Unicode("", help="JSON with the course's reference naive kernel bundle."
                             ).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]):
        jobs, where = [], []
        for index, cell in enumerate(nb.cells):
            if is_test_cell(cell):
                jobs.append(make_job(nb.cells[:index], cell))
                where.append(index)
        root = Path(self.course_root or os.getcwd())
        extra_env, extra_ro = {}, ()
        if self.reference_file:
            extra_env["COURSE_REFERENCE_NAIVE"] = self.reference_file
            extra_ro = (Path(self.reference_file),)
        results = run_jobs(jobs, course_root=root, timeout_s=self.timeout,
                           extra_env=extra_env, extra_ro=extra_ro) if jobs else []
        shown = {nb.cells[i].metadata["nbgrader"]["grade_id"]: notebook_verdict(nb.cells[i])
                 for i in where}
        for index, result in zip(where, results, strict=True):
            nb.cells[index].outputs = outputs_for(result)
        folder = Path(resources.get("metadata", {}).get("path") or ".")
        name = resources.get("unique_key", "notebook")
        summary = {"notebook": name, "dead_kernel": resources.get(DEAD_KERNEL_KEY),
                   "sandbox": sandbox.sandbox_status(),
                   "restored": nb.metadata.get(RESTORED_KEY, {}),
                   "cells": {r["grade_id"]: {**{k: r.get(k) for k in
                                                ("status", "ename", "evalue", "seconds")},
                                             "notebook": shown[r["grade_id"]]}
                             for r in results}}
        (folder / f"{name}.trusted.json").write_text(json.dumps(summary, indent=1))
        nb.metadata[TRUSTED_MARK] = True
        return nb, resources


class RequireTrustedVerdicts(NbGraderPreprocessor):
    """Refuse to save grades that did not come from :class:`TrustedRecheck`.

    The student's kernel runs every check too (so that the grader can compare verdicts), and
    a tampered kernel can make its own checks print ✓. If a configuration ever dropped the
    trusted re-check, those outputs would be scored: this stops autograde instead.
    """

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]):
        if not nb.metadata.get(TRUSTED_MARK):
            raise RuntimeError("the trusted re-check did not run on this notebook; refusing to "
                               "score outputs of the student's own kernel (see "
                               "autograder/config.py)")
        del nb.metadata[TRUSTED_MARK]
        return nb, resources


if __name__ == "__main__":
    raise SystemExit(_child_main(*sys.argv[1:3]))
