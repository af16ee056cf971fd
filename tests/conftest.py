"""Shared test setup: GPU-only tests are skipped, with the reason printed, on CPU machines."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import course  # noqa: F401  (chooses GPU or simulator before anything imports numba)
from autograder.runner import worker
from course.runtime import backend

ROOT = Path(__file__).resolve().parents[1]

# nbgrader's Gradebook runs `alembic` (the gradebook's migrations) from PATH. Where the course
# runs nbgrader it puts this environment's scripts first (autograder.runner.worker,
# autograder.engines.slurm); the tests that build a gradebook in their own process need the
# same, and had it only once an earlier test in their worker had set it (test_languages.py
# alone, outside `make test`'s order, failed).
os.environ["PATH"] = worker.nbgrader_env()["PATH"]


#: The longest test files, longest first: with `pytest -n 2 --dist loadfile` (make test) a file
#: starts in collection order, so these start at once instead of leaving one long file running
#: alone at the end.
LONGEST_FIRST = ("test_browser_viewing.py", "test_slurm.py", "test_browser.py",
                 "test_exchange.py", "test_notebooks_execute.py", "test_newcomer.py",
                 "test_student_errors.py", "test_publish.py", "test_isolation.py",
                 "test_formgrader_offline.py")
#: The files that read the graded sample class, the longer first, collected right after the
#: longest files: the class is graded in the background from the start of the run
#: (tests/sample_class_grading.py) while both workers run those, and is ready, or nearly, when
#: they end (2026-12-07: ready at 275 s, the longest files done at 359 and 387 s). Collected
#: last, as before, the views' 33 s ran alone on one worker at the end of every run; here the
#: many short files behind them even out both workers' ends.
SAMPLE_CLASS_FILES = ("test_sample_class_views.py", "test_sample_class.py")
#: the grading process this worker started (stopped or waited for at the end of the run)
_GRADING: list = []


def shared_tmp(config: pytest.Config) -> Path:
    """The run's temporary folder that every xdist worker shares (each worker's own basetemp
    is a folder in it)."""
    base = config._tmp_path_factory.getbasetemp()  # type: ignore[attr-defined]
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.hookimpl(trylast=True)  # after -k and -m deselected what will not run
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    first = {name: rank for rank, name in enumerate(LONGEST_FIRST + SAMPLE_CLASS_FILES)}
    items.sort(key=lambda item: first.get(item.path.name, len(first)))  # stable
    if not config.option.collectonly and any(
            "sample_class_graded" in getattr(item, "fixturenames", ()) for item in items):
        import sample_class_grading

        proc = sample_class_grading.start(shared_tmp(config))
        if proc is not None:
            _GRADING.append(proc)
    b = backend.detect()
    if b.kind == "gpu":
        return
    reason = f"needs a real CUDA GPU; this machine runs kernels on the {b.kind} ({b.reason})"
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The background grading: waited for (the other worker may still be reading it) when
    the run went on to its end, stopped when it was cut short."""
    import sample_class_grading

    cut_short = exitstatus == pytest.ExitCode.INTERRUPTED or bool(session.shouldstop)
    for proc in _GRADING:
        sample_class_grading.stop(proc, wait=not cut_short)


@pytest.fixture(scope="session")
def sample_class_graded(pytestconfig: pytest.Config) -> tuple[Path, dict, str, dict]:
    """The sample class graded once for the whole run (tests/sample_class_grading.py): the
    course, the grade table, what grading printed, and what the hostile students met."""
    import sample_class_grading

    return sample_class_grading.wait(shared_tmp(pytestconfig))


def pytest_report_header(config: pytest.Config) -> str:
    b = backend.detect()
    return f"course backend: {b.kind} ({b.device_name or b.reason})"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
