"""What the GPU scripts share: the version line of a report and the cuBLAS reference time.

The scripts run as ``python scripts/<name>.py``, so this folder is on ``sys.path`` and they
import this module by its plain name.
"""

from __future__ import annotations

import contextlib
import platform
from importlib import metadata

PACKAGES = ("numba", "numba-cuda", "numpy", "cupy-cuda13x", "cupy-cuda12x", "nbgrader")


def versions() -> str:
    """'numba 0.68.0, numba-cuda 0.30.4, …, Python 3.12.3' for the packages installed here."""
    found = []
    for name in PACKAGES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found.append(f"{name} {metadata.version(name)}")
    return ", ".join(found) + f", Python {platform.python_version()}"


def cublas_ms(n: int, repeats: int, batch: int = 1) -> float | None:
    """cuBLAS SGEMM (TF32 off) at n³ in ms: the course's own measurement; None without CuPy."""
    from course.perf import ceilings

    try:
        return ceilings.measure_fp32_peak(size=n, repeats=repeats, batch=batch).timing.median_ms
    except ceilings.MissingDependencyError:
        return None
