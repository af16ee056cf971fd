"""Shared test setup: GPU-only tests are skipped, with the reason printed, on CPU machines."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import course  # noqa: F401  (chooses GPU or simulator before anything imports numba)
from course.runtime import backend

ROOT = Path(__file__).resolve().parents[1]
sys.setswitchinterval(5e-4)  # simulator threads hand over faster: about 2× quicker


#: The longest test files, longest first: with `pytest -n 2 --dist loadfile` (make test) a file
#: starts in collection order, so these start at once instead of leaving one long file running
#: alone at the end (the sample class alone is most of a CI run).
LONGEST_FIRST = ("test_sample_class.py", "test_browser.py", "test_slurm.py",
                 "test_notebooks_execute.py", "test_browser_viewing.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    order = {name: rank for rank, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: order.get(item.path.name, len(order)))  # stable
    b = backend.detect()
    if b.kind == "gpu":
        return
    reason = f"needs a real CUDA GPU; this machine runs kernels on the {b.kind} ({b.reason})"
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


def pytest_report_header(config: pytest.Config) -> str:
    b = backend.detect()
    return f"course backend: {b.kind} ({b.device_name or b.reason})"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
