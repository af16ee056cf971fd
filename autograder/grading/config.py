"""The nbgrader configuration of this course, in one place (``nbgrader_config.py`` calls it).

What it changes from nbgrader's defaults, and why:

* autograde runs the notebook in a *sandboxed* kernel (:mod:`autograder.sandbox`), so student
  code cannot read the solutions, the gradebook or other submissions;
* a dead kernel no longer drops the student from the class (:mod:`autograder.grading.execute`);
* every test cell is re-scored outside the student's kernel (:mod:`autograder.grading.trusted`),
  before the notebook runs, so that the kernel replays the expensive checks' outcomes instead
  of simulating them a second time (:mod:`course.trust.replay`);
* cells are recognised against the release and deleted graded cells put back, also when a
  notebook lost its nbgrader metadata (:mod:`autograder.grading.restore`, before
  ``OverwriteCells``),
  both from the release of the notebook's language (:mod:`autograder.grading.languages`); copied
  cells are settled first, in place of nbgrader's ``DeduplicateIds``, which failed the whole
  notebook over one copy (:mod:`autograder.grading.normalise`);
* feedback never shows hidden-test source (``ClearHiddenTests`` in feedback too);
* nothing a student wrote or printed runs script where a person looks at it: the autograded
  notebook is cleaned when it is written (``CleanForViewing``, last), and every HTML exporter
  (the formgrader's pages, the feedback) renders markdown and outputs through the same
  sanitizer (:mod:`autograder.viewing`);
* nbgrader's check of each cell's metadata builds its schema's validator once per process, not
  once per cell (:mod:`autograder.grading.metadata_schema`: the same errors, 0.7 CPU-s less per
  full submission on 2 cores);
* one cell may run for ``COURSE_CELL_TIMEOUT`` seconds (default 600: JIT, the simulator);
  a cell that runs longer is interrupted and scored 0, and grading goes on; the rest of that
  notebook then shares ``COURSE_AFTER_TIMEOUT`` seconds (:mod:`autograder.sandbox.limits`, which
  also bounds memory, processes, disk and output).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from autograder.runner.names import ASSIGNMENT, COURSE_ID
from autograder.sandbox import bwrap as sandbox

KERNEL_NAME = "week4-sandboxed"
REFERENCE_NOTEBOOK = "02_naive_gemm.ipynb"
#: the CUDA C track's reference naive kernel: the GEMM_NAIVE_CUDA string of this notebook
REFERENCE_NOTEBOOK_CUDA = "02c_naive_gemm_cuda.ipynb"


def cell_timeout() -> int:
    return int(os.environ.get("COURSE_CELL_TIMEOUT", "600"))


def install_sandboxed_kernelspec(root: Path) -> Path:
    """Write a kernelspec that starts IPython inside the sandbox; return its JUPYTER_PATH dir."""
    # One folder per course directory and Python (not a new temp folder per nbgrader run).
    tag = hashlib.sha1(f"{root}|{sys.executable}".encode()).hexdigest()[:12]
    base = Path(tempfile.gettempdir()) / f"week4-kernels-{tag}"
    spec = base / "kernels" / KERNEL_NAME
    spec.mkdir(parents=True, exist_ok=True)
    spec.joinpath("kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "autograder.sandbox", "-f", "{connection_file}"],
        "display_name": "Python 3 (week 4 grading sandbox)",
        "language": "python",
        # Interrupt through the control channel: a signal would reach bwrap, not IPython.
        "interrupt_mode": "message",
        "env": {sandbox.ROOT_ENV: str(root)},
    }))
    return base


def reference_bundle_file(root: Path, folder: Path) -> str:
    """The course's reference naive kernel, from the source notebook's solution, as JSON."""
    from course.trust.kernel_source import bundle_from_cells

    path = root / "source" / ASSIGNMENT / REFERENCE_NOTEBOOK
    if not path.exists():
        return ""
    cells = [
        "".join(c["source"]) for c in json.loads(path.read_text())["cells"]
        if c["cell_type"] == "code"
    ]
    cells = [c.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", "") for c in cells]
    bundle = bundle_from_cells(cells, {"gemm_naive"})
    reference: dict[str, object] = {"gemm_naive": bundle.to_json()}
    cuda = _reference_cuda_source(root / "source" / ASSIGNMENT / REFERENCE_NOTEBOOK_CUDA)
    if cuda is not None:
        reference["GEMM_NAIVE_CUDA"] = cuda
    out = folder / "reference-naive.json"
    out.write_text(json.dumps(reference))
    return str(out)


def _reference_cuda_source(path: Path) -> str | None:
    """The string literal assigned to GEMM_NAIVE_CUDA in the source notebook's solution."""
    import ast

    if not path.exists():
        return None
    for cell in json.loads(path.read_text())["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] != "code" or "GEMM_NAIVE_CUDA" not in text:
            continue
        for node in ast.parse(text).body:
            if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] \
                    == ["GEMM_NAIVE_CUDA"] and isinstance(node.value, ast.Constant):
                return str(node.value.value)
    return None


def configure(c: Any, root: Path) -> None:
    """Fill the traitlets config ``c`` for the course directory ``root``."""
    from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import (
        AssignLatePenalties,
        CheckCellMetadata,
        ClearHiddenTests,
        GetGrades,
        IgnorePattern,
        LimitOutput,
        OverwriteKernelspec,
        SaveAutoGrades,
    )

    from autograder.grading.execute import SurvivingExecute
    from autograder.grading.languages import LocalizedOverwriteCells
    from autograder.grading.metadata_schema import install as check_metadata_schema_once
    from autograder.grading.normalise import NormaliseCells
    from autograder.grading.trusted import RequireTrustedVerdicts, TrustedPrecheck, TrustedRecheck
    from autograder.grading.ungraded import ClearOutputOfGraded
    from autograder.viewing import exporter, mathjax
    from autograder.viewing.notebook import CleanForViewing

    check_metadata_schema_once()  # nbgrader's check of each cell's metadata, made cheap
    root = root.resolve()
    c.CourseDirectory.course_id = COURSE_ID
    c.CourseDirectory.root = str(root)
    c.ClearSolutions.code_stub = {"python": "# YOUR CODE HERE\nraise NotImplementedError()"}
    c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

    timeout = cell_timeout()
    c.Execute.timeout = timeout
    c.Execute.interrupt_on_timeout = True
    c.Execute.kernel_name = KERNEL_NAME
    c.SurvivingExecute.timeout = timeout
    c.SurvivingExecute.kernel_name = KERNEL_NAME
    # The sandboxed kernel starts slower (launcher, bwrap), and a busy machine slower still.
    c.SurvivingExecute.startup_timeout = 300
    # After an interrupt, wait this long for the cell's last output (nbclient: 4 s) before
    # deciding the cell ignored the interrupt and stopping the kernel: a busy machine is slow.
    c.SurvivingExecute.iopub_timeout = 15
    # nbgrader's own add_missing_cells can fail the whole notebook (KeyError on a deleted
    # test cell after a markdown cell); RestoreCells does that job first, against the release.
    c.OverwriteCells.add_missing_cells = False
    c.NormaliseCells.course_root = str(root)
    # OverwriteCells, plus read-only markdown put back in the notebook's own language
    # (a Korean submission's feedback stays Korean: autograder/grading/languages.py).
    c.LocalizedOverwriteCells.course_root = str(root)
    # NormaliseCells (a RestoreCells) replaces DeduplicateIds: that step empties the metadata
    # of every copy of a cell but the last, and CheckCellMetadata then fails the notebook.
    # ClearOutputOfGraded: a notebook with nothing graded keeps the outputs it was handed in
    # with and is not run again (autograder/grading/ungraded.py).
    c.Autograde.sanitize_preprocessors = [
        ClearOutputOfGraded, NormaliseCells, OverwriteKernelspec, LocalizedOverwriteCells,
        CheckCellMetadata,
    ]
    kernels = install_sandboxed_kernelspec(root)
    reference = reference_bundle_file(root, kernels)
    for trusted in (c.TrustedPrecheck, c.TrustedRecheck):
        trusted.timeout = timeout
        trusted.course_root = str(root)
        trusted.reference_file = reference
    # The trusted re-check runs first; the student's kernel then replays its checks' recorded
    # outcomes instead of simulating them again (course/trust/replay.py), and TrustedRecheck
    # scores every test cell from the re-check's verdicts and compares what the kernel showed.
    c.Autograde.autograde_preprocessors = [
        TrustedPrecheck, SurvivingExecute, TrustedRecheck, RequireTrustedVerdicts, IgnorePattern,
        ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades, AssignLatePenalties,
        CheckCellMetadata, CleanForViewing,
    ]
    c.GenerateFeedback.preprocessors = [GetGrades, ClearHiddenTests, CSSHTMLHeaderPreprocessor]
    # The formgrader's exporter and generate_feedback's both read c.HTMLExporter.
    exporter.configure(c)
    # grades.csv holds the grade table's total (one track, not-measured checks out of the
    # maximum), not nbgrader's sum of every notebook: autograder/results/export.py
    c.ExportApp.plugin_class = "autograder.results.export.CourseExport"

    paths = [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    os.environ["JUPYTER_PATH"] = os.pathsep.join(
        [str(kernels), *(p for p in paths if p != str(kernels))])
    os.environ[sandbox.ROOT_ENV] = str(root)
    # the formgrader's math from this server, not a CDN (after the kernels' folder: first)
    mathjax.configure()
