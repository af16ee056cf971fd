"""The setup every GPU runner shares, the head of its report and the cuBLAS reference time.

The runners run as ``python scripts/gpu/<name>.py`` (so this folder is on ``sys.path``; the
tests put it there before they load one) and import this module first, by its plain name::

    from common import ROOT, versions

Importing it is the setup each runner used to repeat at its top:

* the repository (``course``, ``autograder``, ``sample_class``) and the instructor references
  (``scripts/reference``: the CUDA C ladder, the GEMM model) go on ``sys.path``;
* ``CUPY_TF32=0`` unless it is set: cuBLAS is the FP32 reference, not TF32 tensor cores (CuPy
  reads it when it loads; :mod:`course.perf.ceilings` insists on it too).
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

#: the repository root
ROOT = Path(__file__).resolve().parents[2]
#: the source notebooks, solutions included
SOURCE = ROOT / "source" / "week4"
PACKAGES = ("numba", "numba-cuda", "numpy", "cupy-cuda13x", "cupy-cuda12x", "nbgrader")

for _path in (ROOT / "scripts" / "reference", ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
os.environ.setdefault("CUPY_TF32", "0")


def versions() -> str:
    """'numba 0.68.0, numba-cuda 0.30.4, …, Python 3.12.3' for the packages installed here."""
    found = []
    for name in PACKAGES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            found.append(f"{name} {metadata.version(name)}")
    return ", ".join(found) + f", Python {platform.python_version()}"


def build_scratch_release(base: Path) -> subprocess.CompletedProcess:
    """A scratch course directory at ``base`` (made empty first) with the release built, as the
    demo builds it: the sources, the Korean catalogs, the figures and the course's
    ``nbgrader_config.py`` copied, then ``build_release`` run in a fresh process (``release``
    would also sync the README and the figures, which the scratch copy does not have). The
    finished process is returned: its return code says whether the build worked."""
    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    for folder in ("source", "i18n", "assets"):  # the Korean release needs its catalogs
        if (ROOT / folder).is_dir():
            shutil.copytree(ROOT / folder, base / folder)
    shutil.copy(ROOT / "nbgrader_config.py", base)
    return subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                           "from autograder.cli.harness import build_release; "
                           "build_release(Path(sys.argv[1]))", str(base)],
                          capture_output=True, text=True, cwd=base,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                              filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))))


def report_head(title: str, gpu: Any, when: str = "%Y-%m-%d") -> list[str]:
    """A report's first lines: its title with the date (UTC, ``when`` as for strftime), the GPU
    (what :func:`course.runtime.backend.detect` says) and :func:`versions`."""
    return [f"# {title}, {time.strftime(when, time.gmtime())}", "",
            f"- GPU: {gpu.device_name}, cc {gpu.compute_capability}, {gpu.sm_count} SMs, "
            f"driver CUDA {gpu.driver_cuda}", f"- Versions: {versions()}"]


def cublas_ms(n: int, repeats: int, batch: int = 1) -> float | None:
    """cuBLAS SGEMM (TF32 off) at n³ in ms: the course's own measurement; None without CuPy."""
    from course.perf import ceilings

    try:
        return ceilings.measure_fp32_peak(size=n, repeats=repeats, batch=batch).timing.median_ms
    except ceilings.MissingDependencyError:
        return None
