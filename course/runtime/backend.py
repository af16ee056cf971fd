"""What can run CUDA kernels here: a real GPU, Numba's CUDA simulator, or nothing.

Numba decides once, when ``numba.cuda`` is first imported, whether kernels go to a GPU or
to its simulator (the ``NUMBA_ENABLE_CUDASIM`` environment variable). So ``course`` looks for
a GPU *before* Numba is imported: with no GPU it turns the simulator on, and students on a
laptop can still write and check kernels (slowly, and without timings).

The probe talks to the CUDA driver directly through ``ctypes`` (``cuInit`` and
``cuDeviceGetCount``), which costs milliseconds and never raises when there is no driver.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from dataclasses import dataclass
from importlib import metadata
from typing import TypedDict

from course.runtime.i18n import N_, _

SIM_ENV = "NUMBA_ENABLE_CUDASIM"
#: in English; shown as ``_(COLAB_HINT)``.
COLAB_HINT = N_("On Colab: Runtime → Change runtime type → T4 GPU, then run the notebook again.")


class NoGPUError(RuntimeError):
    """Raised when something needs a real CUDA GPU (timings, resource counts) and there is none."""


def load_cuda_driver() -> ctypes.CDLL | None:
    """The CUDA driver library, or None where there is no NVIDIA driver."""
    for name in ("libcuda.so.1", "libcuda.so", "nvcuda.dll"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def driver_gpu_count() -> tuple[int, str]:
    """Count CUDA devices through the driver library; return (count, reason when zero)."""
    lib = load_cuda_driver()
    if lib is None:
        return 0, _("no NVIDIA driver was found on this machine")
    if lib.cuInit(0) != 0:
        return 0, _("the NVIDIA driver is installed but no GPU could be initialised")
    count = ctypes.c_int(0)
    if lib.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return 0, _("the NVIDIA driver reports no GPU")
    return count.value, ""


def simulator_requested() -> bool:
    """True when Numba's CUDA simulator is (or will be) in use in this process."""
    return os.environ.get(SIM_ENV, "0") not in ("", "0")


def choose_numba_target() -> None:
    """Turn the simulator on when there is no GPU, if Numba has not been imported yet.

    Called by ``import course``. Doing nothing is always safe: with Numba already imported,
    :func:`detect` reports what Numba chose and how to change it.
    """
    if simulator_requested() or "numba" in sys.modules:
        return
    if os.environ.get("COURSE_NO_SIMULATOR"):
        return
    count, _why = driver_gpu_count()
    if count == 0:
        os.environ[SIM_ENV] = "1"


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


@dataclass(frozen=True)
class Backend:
    """Where kernels run, in words a student can act on."""

    kind: str  # "gpu", "simulator" or "none"
    reason: str = ""
    device_name: str | None = None
    compute_capability: tuple[int, int] | None = None
    sm_count: int | None = None
    memory_gib: float | None = None
    driver_cuda: str | None = None
    numba: str | None = None
    numba_cuda: str | None = None
    cupy: str | None = None
    on_colab: bool = False

    @property
    def can_run_kernels(self) -> bool:
        return self.kind in ("gpu", "simulator")

    @property
    def can_time(self) -> bool:
        return self.kind == "gpu"


def on_colab() -> bool:
    """True inside Google Colab (its runtime sets COLAB_RELEASE_TAG)."""
    return "google.colab" in sys.modules or "COLAB_RELEASE_TAG" in os.environ


class _Versions(TypedDict):
    """The fields of :class:`Backend` that are the same whatever runs the kernels."""

    numba: str | None
    numba_cuda: str | None
    cupy: str | None
    on_colab: bool


def _cupy_version() -> str | None:
    return _version("cupy") or _version("cupy-cuda12x") or _version("cupy-cuda13x")


@functools.lru_cache(maxsize=1)
def detect() -> Backend:
    """Find out where kernels run. Cached: Numba's choice cannot change inside a process."""
    choose_numba_target()
    versions = _Versions(
        numba=_version("numba"),
        numba_cuda=_version("numba-cuda"),
        cupy=_cupy_version(),
        on_colab=on_colab(),
    )
    try:
        from numba import cuda
    except ImportError as exc:  # pragma: no cover - numba is a hard dependency
        reason = _("Numba is not installed ({error})").format(error=exc)
        return Backend("none", reason=reason, **versions)

    if simulator_requested():
        _count, why = driver_gpu_count()
        reason = why or _("{variable}=1 is set").format(variable=SIM_ENV)
        return Backend("simulator", reason=reason, **versions)
    if not cuda.is_available():
        _count, why = driver_gpu_count()
        reason = _("{why}; Numba was imported before `course`, so the simulator could not be "
                   "switched on: restart the kernel and import course first").format(
            why=why or _("Numba cannot use the GPU"))
        return Backend("none", reason=reason, **versions)

    dev = cuda.get_current_device()
    free, total = cuda.current_context().get_memory_info()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    driver = cuda.cudadrv.driver.driver.get_version()
    return Backend(
        "gpu",
        device_name=name,
        compute_capability=tuple(dev.compute_capability),
        sm_count=int(dev.MULTIPROCESSOR_COUNT),
        memory_gib=total / 2**30,
        driver_cuda=".".join(str(v) for v in driver),
        **versions,
    )


def describe(backend: Backend | None = None) -> str:
    """A few plain lines: what runs here, what needs a GPU, how to get one."""
    b = backend or detect()
    lines = []
    if b.kind == "gpu":
        major, minor = b.compute_capability or (0, 0)
        lines.append(_(
            "GPU: {name} (compute capability {cc}, {sms} SMs, {memory} GiB), CUDA driver "
            "{driver}.").format(name=b.device_name, cc=f"{major}.{minor}", sms=b.sm_count,
                                memory=f"{b.memory_gib:.0f}", driver=b.driver_cuda))
        lines.append(_("Kernels run on the GPU; timings and the roofline use real "
                       "measurements."))
    elif b.kind == "simulator":
        lines.append(_("No GPU: {reason}.").format(reason=b.reason))
        lines.append(_(
            "Your kernels run on Numba's CUDA simulator: correct results, checked the same way, "
            "but slowly (use small sizes) and with no timings."))
        lines.append(_("Timings, occupancy numbers and measured roofline points need a GPU."))
        lines.append(_(COLAB_HINT))
    else:
        lines.append(_("Kernels cannot run here: {reason}.").format(reason=b.reason))
        lines.append(_(COLAB_HINT))
    cupy = b.cupy or _("not installed")
    vers = f"numba {b.numba}, numba-cuda {b.numba_cuda}, cupy {cupy}"
    lines.append(_("Versions: {versions}; Python {python}.").format(
        versions=vers, python=sys.version.split()[0]))
    if b.on_colab:
        lines.append(_("Running on Google Colab."))
    return "\n".join(lines)


def show() -> Backend:
    """Print :func:`describe` for the student and return the backend."""
    b = detect()
    print(describe(b))
    return b


AUTOGRADE_ENV = "NBGRADER_EXECUTION"
TRUSTED_ENV = "COURSE_TRUSTED_RUN"


def autograding() -> bool:
    """True while ``nbgrader autograde`` runs the notebook (it sets NBGRADER_EXECUTION)."""
    return os.environ.get(AUTOGRADE_ENV) == "autograde"


def require_gpu(what: str) -> Backend:
    """Return the GPU backend, or raise :class:`NoGPUError` explaining why ``what`` can't run."""
    b = detect()
    if b.kind != "gpu":
        where = N_("the Numba CUDA simulator") if b.kind == "simulator" else N_("no GPU")
        raise NoGPUError(_(
            "{what} needs a real CUDA GPU, and this runs on {where} ({reason}). The simulator "
            "never produces timings. {hint}").format(what=what, where=_(where),
                                                     reason=b.reason, hint=_(COLAB_HINT)))
    return b


def require_runnable() -> str:
    """The kind of backend ("gpu" or "simulator"), or :class:`NoGPUError` if kernels cannot run."""
    b = detect()
    if not b.can_run_kernels:
        raise NoGPUError(_("kernels cannot run here: {reason}. {hint}").format(
            reason=b.reason, hint=_(COLAB_HINT)))
    return b.kind


@dataclass(frozen=True)
class ByKind:
    """A test's argument that depends on where kernels run: ``gpu`` on a GPU, ``simulator``
    elsewhere (every GPU thread is simulated in Python, one at a time: fewer, smaller shapes).

    A test cell writes ``check_naive_gemm(gemm_naive, shapes=backend.by_kind(gpu=[...],
    simulator=[...]))`` rather than choosing with ``if backend.detect().kind == "gpu"``: the
    check is then called with the *same* arguments wherever it runs, and it picks
    (:func:`resolve`) when it runs. While grading on a GPU machine that matters: the trusted
    re-check runs on the GPU and the student's kernel on the simulator, and a check whose call
    is the same in both replays the re-check's outcome in the kernel
    (:mod:`course.trust.replay`) instead of simulating it again.
    """

    gpu: object
    simulator: object

    def pick(self) -> object:
        """The value for this process's backend."""
        return self.gpu if detect().kind == "gpu" else self.simulator


def by_kind(*, gpu: object, simulator: object) -> ByKind:
    """``gpu`` on a GPU, ``simulator`` elsewhere, chosen by the check that receives it."""
    return ByKind(gpu=gpu, simulator=simulator)


def resolve(value: object) -> object:
    """A :class:`ByKind` argument's value for this backend; anything else as it is."""
    return value.pick() if isinstance(value, ByKind) else value
