"""What this notebook runs on, in plain words, and (on Colab) what is still missing.

``show()`` is the first thing notebook 00 calls: the GPU (or the simulator, and why), the
versions that matter, and whether this is Colab. It never needs a GPU and never raises
because one is missing.

On Colab, ``colab_install()`` installs only what is missing, with the same
``python -m pip install …`` that ``%pip install`` runs:

* ``numba-cuda[cu12]`` (or ``[cu13]``, matching the driver's major CUDA version) only when a
  GPU is present but Numba cannot compile and run a one-line kernel on it;
* CuPy (``cupy-cuda12x``), used for the cuBLAS comparison and the measured FP32 peak, only
  when a GPU is present and CuPy is not installed;
* the course package itself from :mod:`course.runtime.config` when ``course`` is not importable.
  Obviously it is importable when this module runs; that entry exists so the check is
  complete, and every notebook's first cell (:mod:`course.runtime.setup_cell`) installs it in a
  fresh runtime.

Nothing is ever upgraded: Colab's preinstalled numba-cuda, NumPy and ipywidgets are what
its other libraries were built against, and the course works with them.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import course
from course.runtime import backend, config
from course.runtime.devices import DEFAULT_SIMULATOR_DEVICE, lookup
from course.runtime.i18n import _

__all__ = [
    "EnvironmentReport",
    "MissingPackage",
    "colab_install",
    "colab_missing_packages",
    "describe",
    "on_colab",
    "report",
    "report_first_kernel",
    "show",
]

#: Seconds the out-of-process "can Numba run a kernel on this GPU?" probe may take.
KERNEL_PROBE_TIMEOUT_S = 300

# Run in a fresh interpreter: this process may already have Numba on the simulator.
_KERNEL_PROBE = """
import numpy as np
from numba import cuda
@cuda.jit
def one(x):
    x[0] = 1.0
x = cuda.device_array(1, dtype=np.float32)
one[1, 1](x)
assert x.copy_to_host()[0] == 1.0, "the kernel ran but did not write its result"
print("ok")
"""


def on_colab() -> bool:
    """True inside Google Colab (``google.colab`` is loaded or ``COLAB_RELEASE_TAG`` is set)."""
    return backend.on_colab()


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _driver_cuda_version() -> tuple[int, int] | None:
    """The CUDA version the installed driver supports, e.g. (12, 8); None without a driver."""
    lib = backend.load_cuda_driver()
    if lib is None:
        return None
    version = ctypes.c_int(0)
    try:
        if lib.cuDriverGetVersion(ctypes.byref(version)) != 0 or version.value <= 0:
            return None
    except AttributeError:
        return None
    return version.value // 1000, (version.value % 1000) // 10


@dataclass(frozen=True)
class EnvironmentReport:
    """Where kernels run and which versions are installed; every field may be None."""

    backend: str  # "gpu", "simulator" or "none" (see course.runtime.backend)
    reason: str  # why there is no GPU, in words ("" on a GPU)
    simulator: bool
    on_colab: bool
    gpu_name: str | None
    compute_capability: tuple[int, int] | None
    sm_count: int | None
    memory_gib: float | None
    driver_cuda: str | None  # the CUDA version the driver supports, e.g. "12.8"
    python: str
    numpy: str | None
    numba: str | None
    numba_cuda: str | None
    cupy: str | None
    course: str | None

    @property
    def has_gpu(self) -> bool:
        return self.backend == "gpu"


def report() -> EnvironmentReport:
    """Collect the facts (a second or two: Numba is imported once). Never needs a GPU."""
    import numpy

    b = backend.detect()
    driver = b.driver_cuda
    if driver is None:
        found = _driver_cuda_version()
        driver = f"{found[0]}.{found[1]}" if found else None
    return EnvironmentReport(
        backend=b.kind,
        reason=b.reason,
        simulator=b.kind == "simulator",
        on_colab=on_colab(),
        gpu_name=b.device_name,
        compute_capability=b.compute_capability,
        sm_count=b.sm_count,
        memory_gib=b.memory_gib,
        driver_cuda=driver,
        python=sys.version.split()[0],
        numpy=numpy.__version__,
        numba=b.numba,
        numba_cuda=b.numba_cuda,
        cupy=b.cupy,
        course=getattr(course, "__version__", None),
    )


def describe(r: EnvironmentReport) -> str:
    """The report as a few plain sentences."""

    lines = []
    if r.backend == "gpu":
        major, minor = r.compute_capability or (0, 0)
        memory = (_("{gib:.1f} GiB").format(gib=r.memory_gib) if r.memory_gib
                  else _("memory unknown"))
        lines.append(_("GPU: {gpu}, compute capability {major}.{minor}, {sms} SMs, {memory}; the "
                       "driver supports CUDA {cuda}.").format(
            gpu=r.gpu_name, major=major, minor=minor, sms=r.sm_count, memory=memory,
            cuda=r.driver_cuda or _("unknown")))
        lines.append(_("Your kernels run on this GPU: results, timings and measured roofline "
                       "points are all real."))
        spec = lookup(r.gpu_name or "")
        if spec is not None:
            lines.append(_("Datasheet ({gpu}): {peak:,.0f} GFLOP/s FP32, {bandwidth:,.0f} GB/s, "
                           "ridge point {ridge:.1f} FLOP/byte.").format(
                gpu=spec.name, peak=spec.fp32_peak_gflops, bandwidth=spec.bandwidth_gbs,
                ridge=spec.ridge_ai))
        else:
            lines.append(_("course.tools.DATASHEET has no datasheet numbers for this GPU; "
                           "notebook 05 measures its ceilings instead."))
    elif r.backend == "simulator":
        lines.append(_("No GPU ({reason}): kernels run on Numba's CUDA simulator.").format(
            reason=r.reason))
        lines.append(_("On the simulator the GPU threads run one at a time, in Python: "
                       "results are exact and checked the same way, but it is slow (keep "
                       "sizes small) and nothing can be timed."))
        lines.append(_("Roofline plots use the datasheet of a {gpu} (Colab's free GPU) instead "
                       "of measured numbers.").format(gpu=DEFAULT_SIMULATOR_DEVICE))
    else:
        lines.append(_("Kernels cannot run here: {reason}.").format(reason=r.reason))
    if r.backend != "gpu":
        lines.append(_(backend.COLAB_HINT))
    if r.driver_cuda and r.backend != "gpu":
        lines.append(_("(An NVIDIA driver supporting CUDA {cuda} is installed.)").format(
            cuda=r.driver_cuda))
    missing = _("missing")
    lines.append(_("Versions: Python {python}, NumPy {numpy}, numba {numba}, numba-cuda "
                   "{numba_cuda}, CuPy {cupy}, course {course}.").format(
        python=r.python, numpy=r.numpy, numba=r.numba or missing,
        numba_cuda=r.numba_cuda or missing, cupy=r.cupy or _("not installed"), course=r.course))
    lines.append(_("Google Colab: yes.") if r.on_colab else _("Google Colab: no."))
    return "\n".join(lines)


def show() -> EnvironmentReport:
    """Print :func:`describe` of :func:`report` and return the report."""
    r = report()
    print(describe(r))
    return r


def report_first_kernel(r: EnvironmentReport, result: Any) -> bool:
    """Notebook 00's first kernel: print whether it ran and added one to eight zeros.

    ``result`` is what the kernel left in its array (``None`` where kernels cannot run, as
    ``r.backend`` says). Prints a ✓ line when it holds eight ones, else a ✗ line saying what to
    do; returns whether it passed.
    """
    import numpy as np  # third-party, imported where used as in report()

    if r.backend not in ("gpu", "simulator") or result is None:
        print(_("✗ Kernels cannot run here ({reason}); section 2 says what to do.").format(
            reason=r.reason))
        return False
    where = _("on the GPU") if r.has_gpu else _("on Numba's CUDA simulator")
    ok = bool(np.array_equal(result, np.ones(8, dtype=np.float32)))
    if ok:
        print(_("✓ A kernel ran {where}: {result}").format(where=where, result=result))
    else:
        print(_("✗ The kernel ran {where} but returned {result}; expected eight ones. Restart "
                "the kernel and run this notebook from the top.").format(where=where,
                                                                         result=result))
    return ok


# --------------------------------------------------------------------------------- Colab


@dataclass(frozen=True)
class MissingPackage:
    """Something to install: what, the pip requirement, and why it is needed."""

    name: str
    requirement: str
    why: str


def _cuda_extra() -> str:
    """'cu12' or 'cu13': the numba-cuda extra matching the driver's major CUDA version."""
    found = _driver_cuda_version()
    major = found[0] if found else 12
    return f"cu{max(12, min(major, 13))}"


def _kernel_in_process() -> str | None:
    """Compile and run a one-line kernel here (this process already uses the GPU)."""
    try:
        import numpy as np
        from numba import cuda

        @cuda.jit
        def one(x):
            x[0] = 1.0

        x = cuda.device_array(1, dtype=np.float32)
        one[1, 1](x)
        if x.copy_to_host()[0] != 1.0:
            return "a one-line kernel ran but did not write its result"
    except Exception as exc:  # noqa: BLE001 - any failure means numba-cuda is not usable
        return f"{type(exc).__name__}: {exc}"
    return None


def _kernel_in_subprocess() -> str | None:
    """Compile and run a one-line kernel in a fresh interpreter that may use the GPU."""
    env = {k: v for k, v in os.environ.items() if k != backend.SIM_ENV}
    try:
        proc = subprocess.run([sys.executable, "-c", _KERNEL_PROBE], env=env,
                              capture_output=True, text=True, timeout=KERNEL_PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the probe could not run ({type(exc).__name__})"
    if proc.returncode == 0:
        return None
    tail = (proc.stderr or proc.stdout or "").strip().splitlines()
    return tail[-1] if tail else f"exit code {proc.returncode}"


def _numba_cuda_problem() -> str | None:
    """Why Numba cannot run a kernel on this machine's GPU, or None when it can."""
    if backend.detect().kind == "gpu":
        return _kernel_in_process()
    return _kernel_in_subprocess()


def _installed(module: str) -> bool:
    """True when ``module`` can be found by the import system (without importing it)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def colab_missing_packages() -> list[MissingPackage]:
    """What this runtime lacks for the course; empty when nothing needs installing.

    Without a GPU nothing is missing (kernels use the simulator); switching the runtime to a
    GPU is the fix there, and :func:`show` says so.
    """
    missing: list[MissingPackage] = []
    if not _installed("course"):  # pragma: no cover - this module is part of course
        missing.append(MissingPackage("course", config.pip_requirement(),
                                      _("the course package is not installed")))
    gpus, _why = backend.driver_gpu_count()
    if gpus == 0:
        return missing
    extra = _cuda_extra()
    problem = _numba_cuda_problem()
    if problem:
        missing.append(MissingPackage(
            "numba-cuda", f"numba-cuda[{extra}]",
            _("there is a GPU, but Numba cannot compile and run a one-line kernel on it "
              "({problem})").format(problem=problem)))
    if not _installed("cupy"):
        missing.append(MissingPackage(
            "cupy", f"cupy-cuda{extra[2:]}x",
            _("CuPy is not installed: cuBLAS comparisons and the measured FP32 peak need it")))
    return missing


def pip_command(requirements: list[str]) -> list[str]:
    """``python -m pip install -q …`` for this interpreter: what ``%pip install`` runs."""
    return [sys.executable, "-m", "pip", "install", "-q", *requirements]


def colab_install(dry_run: bool = False, force: bool = False) -> list[list[str]]:
    """Install what :func:`colab_missing_packages` reports; return the commands (run or not).

    Does nothing outside Colab unless ``force`` is set (a laptop's environment is the
    student's own business). With ``dry_run`` the commands are printed, not run.
    """
    if not (on_colab() or force):
        print(_("Not on Colab: nothing to install. (Outside Colab, install the course package "
                "with: pip install \"{requirement}\")").format(
            requirement=config.pip_requirement()))
        return []
    missing = colab_missing_packages()
    if not missing:
        print(_("Everything the course needs is installed."))
        return []
    commands = [pip_command([m.requirement for m in missing])]
    for m in missing:
        print(_("missing: {name} ({why})").format(name=m.name, why=m.why))
    for cmd in commands:
        shown = " ".join(["%pip install -q", *cmd[5:]])
        if dry_run:
            print(_("would run: {command}").format(command=shown))
            continue
        print(_("running: {command}").format(command=shown))
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-5:])
            print(_("pip failed (exit code {code}):\n{tail}").format(code=proc.returncode,
                                                                    tail=tail))
            return commands
    if not dry_run:
        print(_("Installed. Restart the session (Runtime → Restart session) and run the "
                "notebook again from the top, so that Python loads the new packages."))
    return commands
