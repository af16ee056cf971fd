"""The kernels' real memory traffic, read from the GPU's counters by Nsight Compute.

The request model (:mod:`course.gemm.reads`) counts what the threads ask for, with no cache.
The hardware answers from three levels: DRAM (HBM or GDDR), the L2 cache shared by every SM,
and each SM's L1 (the same on-chip memory as its shared memory). Nsight Compute's command line
(``ncu``) reads, for one launch, how many bytes each level moved:

==================  ==========================  ==========================================
level               metric                      what it counts
==================  ==========================  ==========================================
DRAM                ``dram__bytes_read.sum``,    bytes read from and written to device memory
                    ``dram__bytes_write.sum``
L2                  ``lts__t_bytes.sum``         bytes through the L2 cache's tag stage
L1                  ``l1tex__t_bytes.sum``       bytes of global (and local) loads and stores
                                                 through L1; shared memory is not in it
time                ``gpu__time_duration.sum``   the launch's duration
==================  ==========================  ==========================================

and, for the roofs, each level's peak bytes per cycle and its clock (``*.peak_sustained`` and
``*__cycles_elapsed.avg.per_second``: what Nsight Compute's own hierarchical roofline draws).

**Why the command line, in a second process.** A kernel-replaying profiler has to own the
process it profiles: it starts it, saves and restores memory between the passes of one launch,
and flushes the caches before each (``--cache-control all``, its default, so every launch
starts cold). ``ncu`` therefore runs the course's fresh check process
(:mod:`course._isolated`), which rebuilds the student's kernels from their source exactly as
the speedup check does, launches each once with the profiler off (compiling, checking the
result), then once more with it on (``cudaProfilerStart``/``Stop``, ``--profile-from-start
off``). The notebook's own process, its CUDA context and its kernels are never touched, and
the same code serves both tracks. CUPTI's in-process profiling API would avoid the second
process but needs the kernel's replay managed by hand for each metric pass, inside the
notebook's context; the command line is the tool NVIDIA maintains for exactly this.

**When nothing can be measured**, :func:`measure_traffic` returns a :class:`Counters` with no
runs and a sentence saying why: no GPU (the simulator has no counters), grading (counters are
never read there), no ``ncu`` on this machine, no permission to read the counters
(``ERR_NVGPUCTRPERM``: a driver setting only an administrator can change), or the tool failing
in any other way (its first error line is quoted). The notebooks then show the model and that
sentence; nothing raises, and no number is made up.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from course.gemm.cudac import gpu
from course.gemm.cudac.launch import CudaGemm
from course.gemm.cudac.source import NAIVE, TILED
from course.gemm.launch import naive as numba_naive
from course.gemm.launch import tiled as numba_tiled
from course.gemm.operands import random_operands
from course.perf.ncu_csv import NcuOutputError, ProfiledLaunch, parse_raw_csv
from course.perf.recorded import RecordedRun
from course.runtime import backend
from course.runtime.i18n import _
from course.runtime.seeds import fresh_seed
from course.trust import runner
from course.trust.kernel_source import SourceBundle, bundle_from_objects

#: the bytes and the time of one launch (see the module's table).
TRAFFIC_METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
                   "l1tex__t_bytes.sum", "gpu__time_duration.sum")
#: per level: its peak bytes per cycle and its cycles per second (Nsight Compute's roofs).
PEAK_METRICS: dict[str, tuple[str, str]] = {
    "DRAM": ("dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second"),
    "L2": ("lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second"),
    "L1": ("l1tex__t_bytes.sum.peak_sustained", "l1tex__cycles_elapsed.avg.per_second"),
}
#: the path of ``ncu`` to use, or ``off`` to read no counters (a course-wide switch).
NCU_ENV = "COURSE_NCU"
#: where CUDA installs put Nsight Compute, after ``$COURSE_NCU`` and the ``PATH``.
NCU_PLACES = ("/usr/local/cuda/bin/ncu", "/usr/local/cuda-*/bin/ncu",
              "/opt/nvidia/nsight-compute/*/ncu", "/usr/local/cuda/nsight-compute*/ncu")
#: seconds one profiled child may take (compiles, checks, every pass of every launch).
NCU_TIMEOUT_S = 300.0
#: Nsight Compute's options: the clocks as the card runs them (``--clock-control none``: the
#: tool's default locks them to base, which this course never does to a shared GPU), and only
#: the launches between cudaProfilerStart and Stop.
PROFILE_OPTIONS = ("--clock-control", "none", "--profile-from-start", "off")
#: how the saved report is printed: its raw page (every metric of every launch) as CSV.
PRINT_OPTIONS = ("--csv", "--page", "raw", "--print-units", "base")
NCU_OPTIONS = PROFILE_OPTIONS + PRINT_OPTIONS


@dataclass(frozen=True)
class Counters:
    """What the counters said of some launches: one :class:`RecordedRun` each, in the order
    asked, each level's peak bandwidth as Nsight Compute reports it [GB/s], and the tool's
    name and version. ``reason`` is empty when measured, else the sentence saying why not."""

    runs: tuple[RecordedRun, ...] = ()
    peak_gbs: Mapping[str, float] = field(default_factory=dict)
    tool: str = ""
    reason: str = ""
    device: str = ""

    @property
    def measured(self) -> bool:
        return bool(self.runs) and not self.reason

    def run(self, label: str) -> RecordedRun:
        """The run labelled ``label`` (``"naive"``, ``"tiled 32"``)."""
        for r in self.runs:
            if r.label == label:
                return r
        raise KeyError(_("no measured run named {label} (measured: {have})").format(
            label=label, have=", ".join(r.label for r in self.runs) or "-"))


def find_ncu() -> str | None:
    """Nsight Compute's command line: ``$COURSE_NCU``, then the ``PATH``, then where CUDA
    installs it; None if none is there."""
    chosen = os.environ.get(NCU_ENV, "").strip()
    if chosen and chosen.lower() != "off":
        return chosen if os.access(chosen, os.X_OK) else None
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in NCU_PLACES:
        for path in sorted(glob.glob(pattern), reverse=True):
            if os.access(path, os.X_OK):
                return path
    return None


def why_not_measurable() -> str:
    """Why this process cannot read counters, as one sentence; empty if it may try."""
    if backend.autograding():
        return _("Counters are not read while grading: the grade never depends on them.")
    if os.environ.get(NCU_ENV, "").strip().lower() == "off":
        return _("Reading counters is turned off here ({env}=off).").format(env=NCU_ENV)
    b = backend.detect()
    if b.kind != "gpu":
        return _("No counters to read: this machine has no GPU ({reason}), and the simulator "
                 "has no caches or counters.").format(reason=b.reason)
    if find_ncu() is None:
        return _("Nsight Compute's command line (ncu) is not installed here, so the GPU's "
                 "counters cannot be read. It comes with the CUDA toolkit (or from NVIDIA's "
                 "Nsight Compute download); set {env} to its path if it is somewhere "
                 "else.").format(env=NCU_ENV)
    return ""


def tool_version(ncu: str) -> str:
    """``Nsight Compute 2025.3.1.0`` from ``ncu --version`` (or just ``ncu`` if it says nothing)."""
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=30,
                             check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return "Nsight Compute"
    versions = [line.split()[1] for line in out.splitlines()
                if line.startswith("Version ") and len(line.split()) > 1]
    return f"Nsight Compute {versions[0]}" if versions else "Nsight Compute"


#: what a failing ncu says, and the sentence a student reads for it.
_KNOWN_FAILURES = (
    ("ERR_NVGPUCTRPERM", lambda: _(
        "This machine does not let this user read the GPU's performance counters "
        "(ERR_NVGPUCTRPERM: a driver setting only an administrator can change; hosted "
        "notebooks such as Colab usually keep it off).")),
)


def explain_failure(log: str, problem: str = "") -> str:
    """The sentence for a profiler whose output gave no counters: a known error, else its first
    ``==ERROR==`` line, else what was wrong with its table (``problem``), else its first
    warning, else a plain "no table"."""
    for marker, sentence in _KNOWN_FAILURES:
        if marker in log:
            return sentence()
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    errors = [line.split("==ERROR==", 1)[1].strip() for line in lines if "==ERROR==" in line]
    warnings = [line.split("==WARNING==", 1)[1].strip() for line in lines
                if "==WARNING==" in line]
    first = errors[0] if errors else problem or (warnings[0] if warnings else _(
        "it printed no table of counters"))
    return _("Nsight Compute could not read the counters here: {error}").format(error=first)


def _launch_list(tiles: Sequence[int], naive: bool) -> list[list[Any]]:
    return ([["naive", None]] if naive else []) + [["tiled", int(t)] for t in tiles]


def _job(kernels: Any, size: int, tiles: Sequence[int], naive: bool) -> dict[str, Any]:
    """The child's job for a track's two kernels (Numba objects or CUDA C strings)."""
    naive_kernel, tiled_kernel = kernels
    job: dict[str, Any] = {"task": "traffic", "size": int(size), "seed": fresh_seed(),
                           "launches": _launch_list(tiles, naive)}
    if isinstance(tiled_kernel, str):
        job["bundles"] = {}
        job.update(naive_source=naive_kernel if isinstance(naive_kernel, str) else None,
                   tiled_source=tiled_kernel)
    else:
        objects = {"make_gemm_tiled": tiled_kernel}
        if naive:
            objects["gemm_naive"] = naive_kernel
        job["bundles"] = {"student": bundle_from_objects(objects).to_json()}
    return job


def _profile(job: dict[str, Any], metrics: Sequence[str], ncu: str) -> tuple[dict[str, Any], str]:
    """Run ``job`` under ncu collecting ``metrics`` into a report, then print the report's raw
    page as CSV: the child's result, and ncu's messages followed by that table."""
    with tempfile.TemporaryDirectory(prefix="course-ncu-") as tmp:
        log, report = Path(tmp, "ncu.log"), Path(tmp, "traffic")
        wrapper = [ncu, *PROFILE_OPTIONS, "--log-file", str(log), "--export", str(report),
                   "--force-overwrite", "--metrics", ",".join(metrics)]
        try:
            result = runner.run_job(job, simulator=False, timeout_s=NCU_TIMEOUT_S,
                                    wrapper=wrapper)
        except runner.IsolatedRunError as exc:
            result = {"error": str(exc)}
        text = log.read_text(errors="replace") if log.is_file() else ""
        saved = report.with_suffix(".ncu-rep")
        if saved.is_file():
            try:
                text += subprocess.run([ncu, "--import", str(saved), *PRINT_OPTIONS],
                                       capture_output=True, text=True, timeout=120,
                                       check=False).stdout
            except (OSError, subprocess.SubprocessError) as exc:
                text += f"\n==ERROR== reading the report: {exc}\n"
    return result, text


def _unknown_metric(log: str) -> bool:
    """Whether ncu refused a metric name (an older or newer tool than the one measured)."""
    return any("==ERROR==" in line and "metric" in line.lower() for line in log.splitlines())


def _runs(result: Mapping[str, Any], launches: list[ProfiledLaunch], size: int
          ) -> tuple[RecordedRun, ...]:
    track = result.get("track", "")
    runs = []
    for (kernel, tile), launch in zip(result["launched"], launches, strict=True):
        m = launch.metrics
        runs.append(RecordedRun(track, kernel, tile, size, 2.0 * size**3,
                                m["gpu__time_duration.sum"], m["dram__bytes_read.sum"],
                                m["dram__bytes_write.sum"], m["lts__t_bytes.sum"],
                                m["l1tex__t_bytes.sum"]))
    return tuple(runs)


def _peaks(launch: ProfiledLaunch) -> dict[str, float]:
    out = {}
    for level, (per_cycle, clock) in PEAK_METRICS.items():
        if per_cycle in launch.metrics and clock in launch.metrics:
            out[level] = launch.metrics[per_cycle] * launch.metrics[clock] / 1e9
    return out


def measure_traffic(kernels: Any, size: int = 2048, tiles: Sequence[int] = (8, 16, 32), *,
                    naive: bool = True) -> Counters:
    """Bytes per memory level and time of one launch of each kernel at ``size``³, from the
    GPU's counters: the naive kernel (unless ``naive=False``) and the tiled one at each of
    ``tiles``. ``kernels`` is a track's pair, ``(gemm_naive, make_gemm_tiled)`` (Numba) or
    ``(GEMM_NAIVE_CUDA, GEMM_TILED_CUDA)`` (CUDA C strings), or a
    :class:`course.notebooks.tracks.TrackKernels`. Never raises for a machine that cannot
    measure: the result then has no runs and ``reason`` says why (module docstring)."""
    pair = (kernels.naive, kernels.tiled) if hasattr(kernels, "tiled") else tuple(kernels)
    reason = why_not_measurable()
    if reason:
        return Counters(reason=reason)
    ncu = find_ncu()
    assert ncu is not None  # why_not_measurable() said so
    job = _job(pair, size, tiles, naive)
    tool = tool_version(ncu)
    metrics = [*TRAFFIC_METRICS, *(m for pair_ in PEAK_METRICS.values() for m in pair_)]
    result, log = _profile(job, metrics, ncu)
    if _unknown_metric(log):
        metrics = list(TRAFFIC_METRICS)  # an older tool without a peak metric: bytes only
        result, log = _profile(job, metrics, ncu)
    if result.get("error"):
        return Counters(tool=tool, reason=_("The kernels could not be profiled: {error}").format(
            error=result["error"]))
    try:
        launches = parse_raw_csv(log, tuple(metrics))
    except NcuOutputError as exc:
        return Counters(tool=tool, reason=explain_failure(log, str(exc)))
    if len(launches) != len(result.get("launched", ())):
        return Counters(tool=tool, reason=_(
            "Nsight Compute profiled {got} launches where {want} were made; the counters "
            "cannot be matched to the kernels.").format(got=len(launches),
                                                        want=len(result.get("launched", ()))))
    return Counters(_runs(result, launches, size), _peaks(launches[0]), tool,
                    device=result.get("device", ""))


# --- the child's side (a task of course._isolated, run under ncu) ---------------------------

def _profiler(start: bool, cuda_c: bool) -> None:
    """cudaProfilerStart/Stop: the launches between them are the ones ncu profiles."""
    if cuda_c:
        rt = gpu.cupy_module().cuda.runtime
        (rt.profilerStart if start else rt.profilerStop)()
        return
    from numba import cuda

    (cuda.profile_start if start else cuda.profile_stop)()


def _close(C: np.ndarray, ref: np.ndarray) -> bool:
    return bool(np.isfinite(C).all()) and float(
        np.linalg.norm(C - ref) / np.linalg.norm(ref)) < 1e-3


def traffic_task(student: SourceBundle | None = None, *, launches: list[list[Any]], size: int,
                 seed: int, naive_source: str | None = None, tiled_source: str | None = None
                 ) -> dict[str, Any]:
    """Child-process side: rebuild the kernels, run each once and check C = A·B, then launch
    each once more between cudaProfilerStart and Stop (the launches ncu reads), in order."""
    rng = np.random.default_rng(seed)
    A, B = random_operands(size, size, size, rng)
    ref = A @ B
    cuda_c = student is None
    run = _cuda_c_runner(A, B, naive_source, tiled_source) if cuda_c else \
        _numba_runner(A, B, student)
    order = [(kind, tile) for kind, tile in launches]
    for kind, tile in order:  # compile, warm up, and refuse to profile a wrong kernel
        C = run(kind, tile)
        if not _close(C, ref):
            label = kind if tile is None else f"{kind} {tile}"
            return {"error": _("your {kernel} kernel does not compute C = A·B at {size}³, so "
                               "its traffic would mean nothing").format(kernel=label, size=size)}
    _profiler(True, cuda_c)
    for kind, tile in order:
        run(kind, tile, fetch=False)
    _profiler(False, cuda_c)
    return {"launched": order, "track": "CUDA C" if cuda_c else "Numba",
            "device": backend.detect().device_name or ""}


def _numba_runner(A: np.ndarray, B: np.ndarray, student: SourceBundle | None) -> Any:
    from numba import cuda

    assert student is not None
    ns = student.load()
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    dC = cuda.device_array((A.shape[0], B.shape[1]), np.float32)
    kernels: dict[tuple[str, int | None], Any] = {}

    def run(kind: str, tile: int | None, fetch: bool = True) -> np.ndarray | None:
        key = (kind, tile)
        if key not in kernels:
            kernels[key] = numba_naive(ns["gemm_naive"]) if tile is None else \
                numba_tiled(ns["make_gemm_tiled"], tile)
        kernels[key].launch(dA, dB, dC)
        return dC.copy_to_host() if fetch else None

    return run


def _cuda_c_runner(A: np.ndarray, B: np.ndarray, naive_source: str | None,
                   tiled_source: str | None) -> Any:
    cp = gpu.cupy_module()
    dA, dB = cp.asarray(A), cp.asarray(B)
    dC = cp.empty((A.shape[0], B.shape[1]), cp.float32)
    n = np.int32(A.shape[0])
    built: dict[tuple[str, int | None], tuple[Any, Any]] = {}

    def run(kind: str, tile: int | None, fetch: bool = True) -> np.ndarray | None:
        key = (kind, tile)
        if key not in built:
            source = naive_source if tile is None else tiled_source
            if not isinstance(source, str):
                raise TypeError(_("the {kernel} kernel must be a CUDA C string").format(
                    kernel=kind))
            gemm = CudaGemm(NAIVE if tile is None else TILED, source, tile)
            built[key] = (gpu.raw_kernel(gemm.source, gemm.spec, gemm.tile),
                          gemm.launch_for(A.shape[0], B.shape[1]))
        kernel, cfg = built[key]
        gpu.launch(kernel, cfg.grid, cfg.block, (n, n, n, dA, dB, dC))
        return cp.asnumpy(dC) if fetch else None

    return run


__all__ = ["Counters", "find_ncu", "measure_traffic", "traffic_task", "why_not_measurable"]
