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

The process is started, fed and watched by :mod:`autograder.grading.trusted_process` (one per
student, a namespace per test cell); its side is :mod:`autograder.grading.trusted_child`, a
module of its own so that it starts without importing nbgrader.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Integer, Unicode

from autograder.grading.execute import (
    DEAD_KERNEL_KEY,
    KERNEL_SECONDS_KEY,
    NOTES_KEY,
    PRECHECK_KEY,
    warm_kernel_server,
)
from autograder.grading.languages import grading_language
from autograder.grading.restore import RESTORED_KEY
from autograder.grading.trusted_child import NOT_MEASURED
from autograder.grading.trusted_process import run_jobs
from autograder.sandbox import bwrap as sandbox
from autograder.sandbox.gpulock import GRADING_GPU_ENV
from course.runtime import i18n


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


def _session(resources: dict[str, Any]) -> str | None:
    """Whose notebook this is (nbgrader's assignment and student), or None where unknown."""
    who = resources.get("nbgrader") or {}
    if not who.get("student"):
        return None
    return f"{who.get('assignment', '')}/{who['student']}"


#: notebook metadata key TrustedRecheck sets; :class:`RequireTrustedVerdicts` checks it.
TRUSTED_MARK = "course_trusted_recheck"


class _TrustedBase(NbGraderPreprocessor):
    timeout = Integer(600, help="Seconds one test cell may take in the trusted re-run."
                      ).tag(config=True)
    course_root = Unicode("", help="The course directory to hide from student code."
                          ).tag(config=True)
    reference_file = Unicode("", help="JSON with the course's reference naive kernel bundle."
                             ).tag(config=True)

    def run_checks(self, nb: NotebookNode, resources: dict[str, Any]) -> dict[str, Any]:
        """Run every test cell of ``nb`` in the trusted process: results, notes, the checks'
        recorded outcomes (for the kernel to replay) and where the test cells are. The
        student's notebooks share one warm process (:class:`WarmChecker`)."""
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
                           language=language, replay=replay,
                           session=_session(resources)) if jobs else []
        return {"results": results, "notes": notes, "replay": "\n".join(replay),
                "where": where}


class TrustedPrecheck(_TrustedBase):
    """Run the trusted re-check *before* the notebook, so that the student's kernel can replay
    the expensive checks' recorded outcomes instead of simulating them again
    (:mod:`course.trust.replay`; :class:`autograder.grading.execute.SurvivingExecute` hands them
    over).
    Its jobs depend only on the notebook's source, which nbgrader has already restored."""

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]):
        warm_kernel_server(resources)  # its imports overlap with these checks
        resources[PRECHECK_KEY] = self.run_checks(nb, resources)
        return nb, resources


class TrustedRecheck(_TrustedBase):
    """Replace every test cell's outputs by a verdict computed outside the student's kernel
    (by :class:`TrustedPrecheck` before the notebook ran, else here)."""

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]):
        found = resources.pop(PRECHECK_KEY, None) or self.run_checks(nb, resources)
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
                   # the GPU this notebook's checks and timings ran on (one per grading slot)
                   "gpu": os.environ.get(GRADING_GPU_ENV) or None,
                   "restored": nb.metadata.get(RESTORED_KEY, {}),
                   "cells": {r["grade_id"]: {**{k: r.get(k) for k in
                                                ("status", "ename", "evalue", "seconds")},
                                             "notebook": shown[r["grade_id"]],
                                             # a speedup's times and GFLOP/s (the report's)
                                             **({"measured": r["measured"]}
                                                if r.get("measured") else {})}
                             for r in results},
                   # each cell's seconds in the student's kernel (SurvivingExecute's clock)
                   "kernel_seconds": resources.get(KERNEL_SECONDS_KEY, {})}
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

