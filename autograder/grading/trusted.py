"""Score every test cell outside the student's kernel, from validated source.

Why: nbgrader scores a test cell by the outputs the student's own kernel reports, and that
kernel runs the student's code. Code that patches NumPy's comparisons, the checker, the
timer, or IPython itself can make any test cell look passed. So after nbgrader has run the
notebook, this preprocessor re-runs each test cell in a fresh, sandboxed process
(:mod:`autograder.sandbox`) that holds only:

* the *definitions* the test cell uses, taken from the cells above it and checked by the
  code policy of :mod:`course.trust.code_policy` (ordinary Python; no imports beyond the course's
  modules, no attribute patching, no file access, no classes) — nothing else is carried over;
* the test cell's own code, which nbgrader has already restored from the gradebook.

Before replacing a cell's outputs it records what the student's own kernel showed for it, so
that the grade table can flag any test whose verdicts differ (the notebook's ✓ is the
grader's ✓; see docs/grading.md).

The cell's outputs are then replaced by that verdict: printed text on success; a one-line
error (name and message, never a traceback with hidden-test source) on failure; and
``NotMeasured`` for checks that need a GPU this machine does not have, which the grade
table shows as "not measured" instead of a silent 0 or a free pass.

The child side is :mod:`autograder.grading.trusted_child`
(``python -m autograder.grading.trusted_child``),
a module of its own so that each check process starts without importing nbgrader.
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

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, Unicode

from autograder.grading.execute import DEAD_KERNEL_KEY, NOTES_KEY, PRECHECK_KEY
from autograder.grading.languages import grading_language
from autograder.grading.restore import RESTORED_KEY
from autograder.grading.trusted_child import NOT_MEASURED, READY_FILE, REPLAY_FILE
from autograder.sandbox import bwrap as sandbox
from autograder.sandbox import gpulock as gpulock_setup
from autograder.sandbox import limits as limits_mod
from course.runtime import i18n

#: Seconds a check process may take to start (imports), on top of any check's timeout.
STARTUP_S = 300.0
#: a re-check's recorded outcomes larger than this are not replayed (the kernel recomputes).
MAX_REPLAY_BYTES = 32 << 20


def is_test_cell(cell: NotebookNode) -> bool:
    meta = cell.get("metadata", {}).get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def make_job(cells_before: list[NotebookNode], cell: NotebookNode) -> dict[str, Any]:
    """What the child needs for one test cell: its code and the definitions it uses."""
    from course.trust.kernel_source import DisallowedCodeError, bundle_for_test_cell

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
# Parent side.


def run_jobs(jobs: list[dict[str, Any]], *, course_root: Path, timeout_s: float,
             extra_env: dict[str, str] | None = None, extra_ro: tuple[Path, ...] = (),
             limits: limits_mod.Limits | None = None, notes: list[str] | None = None,
             language: str = i18n.DEFAULT,
             replay: list[str] | None = None) -> list[dict[str, Any]]:
    """Run jobs in sandboxed children, within the notebook's limits; never lose a verdict.

    A job that exceeds ``timeout_s`` fails and the rest go on, sharing ``after_timeout``
    seconds from then on; jobs past that budget fail as "not run". A child that breaks a
    memory or process limit is stopped, and its job fails saying so. ``notes`` collects what
    the grade table should say, and the failures say why, in ``language`` (the notebook's);
    ``replay``, the checks' recorded outcomes (JSON lines, see :mod:`course.trust.replay`).
    """
    def _(message: str) -> str:
        return i18n.in_language(language, message)

    import autograder
    from course.runtime import gpulock

    limits = limits or limits_mod.Limits.from_env()
    notes = [] if notes is None else notes
    results: list[dict[str, Any]] = []
    env = dict(os.environ, **(extra_env or {}))
    # The GPU lock: reachable in the checks' sandbox, never from the notebook kernel.
    lock_dir = gpulock_setup.lock_dir_for_children(course_root)
    env[gpulock.LOCK_ENV] = str(lock_dir)
    env["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(autograder.__file__).parents[1]), *filter(None, [env.get("PYTHONPATH")])])
    budget: float | None = None  # seconds of checking left, once one check timed out
    while len(results) < len(jobs):
        todo = jobs[len(results):]
        if budget is not None and budget <= 0:
            notes.append(_("{count} check(s) not run: the notebook's time after a timeout "
                           "({seconds} s) was spent").format(
                count=len(todo), seconds=f"{limits.after_timeout:g}"))
            results += [{"grade_id": j["grade_id"], "status": "fail", "ename": "NotRun",
                         "evalue": _("not run: an earlier check timed out and the notebook's "
                                     "remaining time was spent"), "stdout": ""} for j in todo]
            break
        with tempfile.TemporaryDirectory(prefix="trusted-") as tmp:
            jobs_path, results_path = Path(tmp, "jobs.json"), Path(tmp, "results.jsonl")
            jobs_path.write_text(json.dumps(todo))
            results_path.touch()
            beat = Path(tmp, "gpu-queue.heartbeat")
            env[gpulock.HEARTBEAT_ENV] = str(beat)
            box = limits_mod.Box.create(limits)
            try:
                command = sandbox.wrap(
                    [sys.executable, "-m", "autograder.grading.trusted_child", str(jobs_path),
                     str(results_path)],
                    course_root=course_root, workdir=Path(tmp), gpu=True, env=env, box=box,
                    extra_ro=(Path(autograder.__file__).parent, *extra_ro),
                    extra_rw=(lock_dir,))
                with open(Path(tmp, "stderr.txt"), "w") as err:
                    proc = subprocess.Popen(command.launcher_argv(), env=command.env, cwd=tmp,
                                            stdout=subprocess.DEVNULL, stderr=err)
                    lines, stopped, ran, used = _watch(proc, box, results_path, len(todo),
                                                       timeout_s, budget, beat)
                    if budget is not None:
                        budget -= used
                recorded = Path(tmp, REPLAY_FILE)
                if replay is not None and recorded.exists() \
                        and recorded.stat().st_size <= MAX_REPLAY_BYTES:
                    replay += recorded.read_text().splitlines()
            finally:
                box.remove()
            got = [json.loads(line) for line in lines]
            results.extend(got)
            if len(got) < len(todo):  # the job in progress hung or killed the process
                stuck = todo[len(got)]
                if stopped == "timeout":
                    if budget is None:
                        budget = limits.after_timeout
                        notes.append(_("check {cell} timed out after {seconds} s; the other "
                                       "checks of the notebook had {after} s").format(
                            cell=stuck["grade_id"], seconds=f"{timeout_s:.0f}",
                            after=f"{limits.after_timeout:g}"))
                    ename, why = "Timeout", _(
                        "the check did not finish within {seconds} s (or the notebook's "
                        "remaining time): an endless loop, or a barrier that some threads "
                        "never reach?").format(seconds=f"{timeout_s:.0f}")
                elif stopped == "startup":
                    ename, why = "Timeout", _(
                        "the check process did not start within {seconds} s (the grading "
                        "machine is overloaded?); grade this notebook again").format(
                            seconds=f"{STARTUP_S:.0f}")
                    notes.append(why)
                elif stopped:
                    ename = "LimitExceeded"
                    why = _("the check was stopped: {reason}").format(reason=stopped)
                    notes.append(_("check {cell} was stopped: {reason}").format(
                        cell=stuck["grade_id"], reason=stopped))
                else:
                    ename = "ProcessDied"
                    why = _("the check process died (exit code {code})").format(
                        code=proc.returncode)
                results.append({"grade_id": stuck["grade_id"], "status": "fail",
                                "ename": ename, "evalue": why, "stdout": "",
                                "seconds": round(ran, 2)})
    return results


def _watch(proc: subprocess.Popen, box: limits_mod.Box, results_path: Path, count: int,
           timeout_s: float, budget: float | None, beat: Path | None = None
           ) -> tuple[list[str], str | None, float, float]:
    """Wait for the child; return its result lines, why it was stopped (or None), how long
    the job in progress had run, and how long the child spent on jobs.

    The clocks start when the child is ready (imports done): a busy machine's slow start is
    not the student's time. Starting may take ``STARTUP_S`` (stopped: "startup"). Time spent
    queueing for the GPU (the child keeps ``beat`` fresh meanwhile) is not the student's either.
    """
    from course.runtime import gpulock

    ready_file = results_path.with_name(READY_FILE)
    started = time.monotonic()
    done, last, ready, stopped = 0, started, None, None
    while True:
        lines = results_path.read_text().splitlines()
        now = time.monotonic()
        if ready is None and ready_file.exists():
            ready = last = now
        if len(lines) > done:
            done, last = len(lines), now
        if beat is not None and ready is not None and gpulock.heartbeat_fresh(beat):
            last = max(last, now - 0.2)  # queueing for the GPU is not hanging
        if proc.poll() is not None or done == count:
            break
        if ready is None:
            late = "startup" if now > started + max(timeout_s, STARTUP_S) else None
        else:
            deadline = last + timeout_s
            if budget is not None:
                deadline = min(deadline, ready + budget)
            late = "timeout" if now > deadline else None
        stopped = box.breach() or late
        if stopped:
            box.kill()
            proc.kill()
            break
        time.sleep(0.2)
    proc.wait()
    end = time.monotonic()
    if stopped is None and proc.returncode not in (0, None):
        stopped = box.breach()
    lines = results_path.read_text().splitlines()[:count]
    return lines, stopped, end - last, (end - ready) if ready is not None else 0.0


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
            status = ("not_measured" if ename in (NOT_MEASURED, "NotMeasuredError") else
                      "not_run" if ename == "CheckedByTheGrader" else "fail")
            return {"status": status, "error": f"{ename}: {evalue}"[:400]}
    return {"status": "pass", "error": ""}


#: notebook metadata key TrustedRecheck sets; :class:`RequireTrustedVerdicts` checks it.
TRUSTED_MARK = "course_trusted_recheck"


class _TrustedBase(NbGraderPreprocessor):
    timeout = Integer(600, help="Seconds one test cell may take in the trusted re-run."
                      ).tag(config=True)
    course_root = Unicode("", help="The course directory to hide from student code."
                          ).tag(config=True)
    reference_file = Unicode("", help="JSON with the course's reference naive kernel bundle."
                             ).tag(config=True)

    def run_checks(self, nb: NotebookNode) -> dict[str, Any]:
        """Run every test cell of ``nb`` in the trusted process: results, notes, the checks'
        recorded outcomes (for the kernel to replay) and where the test cells are."""
        jobs, where = [], []
        for index, cell in enumerate(nb.cells):
            if is_test_cell(cell):
                jobs.append(make_job(nb.cells[:index], cell))
                where.append(index)
        root = Path(self.course_root or os.getcwd())
        language = grading_language(nb)  # the checks speak the notebook's language
        extra_env: dict[str, str] = {i18n.ENV: language}
        extra_ro: tuple[Path, ...] = ()
        if self.reference_file:
            extra_env["COURSE_REFERENCE_NAIVE"] = self.reference_file
            extra_ro = (Path(self.reference_file),)
        notes: list[str] = []
        replay: list[str] = []
        results = run_jobs(jobs, course_root=root, timeout_s=self.timeout,
                           extra_env=extra_env, extra_ro=extra_ro, notes=notes,
                           language=language, replay=replay) if jobs else []
        return {"results": results, "notes": notes, "replay": "\n".join(replay),
                "where": where}


class TrustedPrecheck(_TrustedBase):
    """Run the trusted re-check *before* the notebook, so that the student's kernel can replay
    the expensive checks' recorded outcomes instead of simulating them again
    (:mod:`course.trust.replay`; :class:`autograder.grading.execute.SurvivingExecute` hands them
    over).
    Its jobs depend only on the notebook's source, which nbgrader has already restored."""

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]):
        resources[PRECHECK_KEY] = self.run_checks(nb)
        return nb, resources


class TrustedRecheck(_TrustedBase):
    """Replace every test cell's outputs by a verdict computed outside the student's kernel
    (by :class:`TrustedPrecheck` before the notebook ran, else here)."""

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]):
        found = resources.pop(PRECHECK_KEY, None) or self.run_checks(nb)
        results, where = found["results"], found["where"]
        notes = list(resources.get(NOTES_KEY, [])) + found["notes"]
        language = grading_language(nb)
        shown = {nb.cells[i].metadata["nbgrader"]["grade_id"]: notebook_verdict(nb.cells[i])
                 for i in where}
        for index, result in zip(where, results, strict=True):
            nb.cells[index].outputs = outputs_for(result)
        folder = Path(resources.get("metadata", {}).get("path") or ".")
        name = resources.get("unique_key", "notebook")
        summary = {"notebook": name, "language": language,
                   "dead_kernel": resources.get(DEAD_KERNEL_KEY),
                   "notes": notes, "sandbox": sandbox.sandbox_status(),
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
                               "autograder/grading/config.py)")
        del nb.metadata[TRUSTED_MARK]
        return nb, resources

