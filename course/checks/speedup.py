"""Is the tiled kernel really faster? A fair, hard-to-fool measurement on a real GPU.

The timing happens in a fresh process that receives only the kernels' source (validated by
:mod:`course.trust.kernel_source`), so nothing the notebook did to ``time``, CUDA events, NumPy or
``course`` can reach it. Inside, the student's tiled kernel, the student's naive kernel and
(when the grader supplies it) the course's reference naive kernel run interleaved on the
same fresh inputs, and the verdict is a *ratio* of medians measured in that one run —
independent of how fast the particular GPU is. The reference decides wherever it is timed; when
the student's own naive kernel cannot be timed (it prints, or it overran the time budget), the
tiled kernel is timed against the reference alone, with a note
(:mod:`course.checks.speedup_baseline`).

The threshold belongs to the class of GPU the measurement ran on
(:func:`course.runtime.gpu_classes.for_device`): measured on an H200 (docs/results-gpu.md: a correct
tile-32 kernel ran 5.3–6.0× faster than the reference naive kernel at 1024³–2048³, while a
"tiled" kernel that still reads A and B from global memory in its inner loop ran at 0.8×),
estimated for a T4 (docs/t4-estimate.md). The report names the class and its basis.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from course.checks import speedup_baseline
from course.checks.speedup_baseline import untimed_note
from course.checks.success_lines import PrintedReport
from course.gemm import device_print, inspection
from course.gemm.diagnosis import diagnose
from course.gemm.launch import naive, tiled
from course.gemm.operands import random_operands, run_guarded
from course.perf.budget import LaunchBudget, TimingBudgetExceeded
from course.perf.timing import GemmTiming, UnverifiedTimingError
from course.runtime import backend, gpu_classes, gpulock
from course.runtime.i18n import N_, _
from course.runtime.seeds import fresh_seed
from course.trust import gate, runner
from course.trust.kernel_source import SourceBundle, bundle_from_objects

#: the bar where the GPU's class has no other (see course.runtime.gpu_classes).
SPEEDUP_THRESHOLD = gpu_classes.OTHER.speedup_threshold
SPEEDUP_SIZE = 2048
SPEEDUP_TILE = 32
SPEEDUP_REPEATS = 20
#: the grader points this at a JSON file {"gemm_naive": bundle} holding the reference kernel.
REFERENCE_ENV = "COURSE_REFERENCE_NAIVE"
#: the kernels a speedup times, as the report names them (translated when shown).
TIMED_KERNELS = (N_("tiled"), N_("own naive"), N_("reference naive"))


class SpeedupCheckError(AssertionError):
    """The tiled kernel is not enough faster than the naive one."""


class NotMeasuredError(RuntimeError):
    """The speedup cannot be measured here (no GPU). Never a pass, never a fail."""


@dataclass(frozen=True)
class SpeedupReport(PrintedReport):
    size: int
    tile: int
    ms: dict[str, float]
    vs_reference: float | None
    vs_own_naive: float | None  # None: the student's naive kernel was not timed (untimed)
    threshold: float
    gpu_class: str = ""  # course.runtime.gpu_classes.GpuClass.describe() of the GPU it ran on
    #: why the student's naive kernel was not timed (course.checks.speedup_baseline); "" if it was
    untimed: str = ""
    #: what a failure adds about the tiled kernel's source (it prints); "" if nothing
    tiled_hint: str = ""
    #: the name of the GPU the kernels were timed on (as its driver gives it); "" if unknown
    device: str = ""

    def measured(self) -> dict[str, Any]:
        """The measurement as plain data, for the grader's records (the class report reads it):
        the medians, GFLOP/s of each timed kernel at the timed size, the ratios, the GPU."""
        flop = 2.0 * self.size ** 3
        return {"size": self.size, "tile": self.tile, "ms": dict(self.ms),
                "gflops": {k: round(flop / (v * 1e6), 3) for k, v in self.ms.items() if v > 0},
                "speedup": round(self.decisive, 4),
                "vs_reference": self.vs_reference, "vs_own_naive": self.vs_own_naive,
                "threshold": self.threshold, "gpu_class": self.gpu_class,
                "device": self.device}

    @property
    def decisive(self) -> float:
        """The ratio the verdict uses: against the course's naive kernel where it was timed."""
        ratio = self.vs_reference if self.vs_reference is not None else self.vs_own_naive
        if ratio is None:
            raise ValueError("a speedup needs a naive kernel the tiled one was timed against")
        return ratio

    def __str__(self) -> str:
        times = ", ".join(f"{_(k)} {v:.3f} ms" for k, v in self.ms.items())
        where = (_("; threshold for {gpu}").format(gpu=self.gpu_class) if self.gpu_class
                 else "")
        if self.vs_own_naive is None:
            return _("tile {tile} at {size}³: {ratio}× the speed of the course's naive kernel "
                     "(threshold {threshold}×{where}; your naive kernel was not timed). "
                     "Medians: {times}").format(
                tile=self.tile, size=self.size, ratio=f"{self.decisive:.2f}",
                threshold=self.threshold, where=where, times=times)
        ref = (_("{ratio}× the speed of the course's naive kernel, ").format(
            ratio=f"{self.vs_reference:.2f}") if self.vs_reference is not None else "")
        return _("tile {tile} at {size}³: {ref}{ratio}× the speed of your naive kernel "
                 "(threshold {threshold}×{where}). Medians: {times}").format(
            tile=self.tile, size=self.size, ref=ref, ratio=f"{self.vs_own_naive:.2f}",
            threshold=self.threshold, where=where, times=times)


def report_from(out: dict[str, Any], size: int, tile: int, threshold: float, gpu_class: str = "",
                untimed: str = "", tiled_hint: str = "") -> SpeedupReport:
    """The report of a speedup job's medians (``out["ms"]``), with the student's naive kernel
    left out where it was not timed."""
    ms = out["ms"]
    vs_ref = ms["reference naive"] / ms["tiled"] if "reference naive" in ms else None
    vs_own = ms["own naive"] / ms["tiled"] if "own naive" in ms else None
    return SpeedupReport(size, tile, ms, vs_ref, vs_own, threshold, gpu_class, untimed,
                         tiled_hint, str(out.get("device") or ""))


#: the measurements :func:`judge` saw since :func:`take_measured` last emptied it: the trusted
#: re-check keeps them beside the verdict (never instead of it).
_MEASURED: list[dict[str, Any]] = []


def take_measured() -> list[dict[str, Any]]:
    """The measurements judged since the last call (:meth:`SpeedupReport.measured`), emptied."""
    taken = list(_MEASURED)
    _MEASURED.clear()
    return taken


def judge(report: SpeedupReport) -> SpeedupReport:
    """Pass (print the note, if any, and the ✓ line) if the decisive ratio reaches the
    threshold; else raise :class:`SpeedupCheckError` saying what to look at."""
    note = untimed_note(report.untimed) if report.untimed else ""
    _MEASURED.append(report.measured())  # recorded whatever the verdict; it never decides it
    if report.decisive < report.threshold:
        raise SpeedupCheckError(_(
            "your tiled kernel runs at {ratio}× the speed of the naive kernel; at least "
            "{threshold}× is expected. {report}. Is the multiply loop reading shared memory "
            "only? Does each block load each tile exactly once?").format(
                ratio=f"{report.decisive:.2f}", threshold=report.threshold, report=report)
            + report.tiled_hint + (f"\n{note}" if note else ""))
    if note:
        print(note)
    print(f"✓ {report}")
    return report


#: what each timed kernel is, in the reason a timing that overran its budget gives.
KERNEL_LABELS = {"tiled": N_("your tiled kernel"), "own naive": N_("your naive kernel"),
                 "reference naive": N_("the course's naive kernel")}


def timing_budget(names: list[str], size: int) -> LaunchBudget:
    """The budget of a speedup timing (:mod:`course.perf.budget`): derived from the course's
    naive kernel where the grader supplies it, else from the student's own."""
    reference = "reference naive" if "reference naive" in names else "own naive"
    return LaunchBudget(reference=reference, size=f"{size}³",
                        labels={name: _(label) for name, label in KERNEL_LABELS.items()})


def gpu_timing_budget(names: list[str], size: int) -> LaunchBudget | None:
    """:func:`timing_budget` on a GPU; None on the simulator. The budget exists to free the GPU
    for the next student; the simulator (which times only in tests, with a stand-in clock)
    holds no GPU, and its launches run at no GPU's pace."""
    return timing_budget(names, size) if backend.detect().kind == "gpu" else None


#: the quick correctness look before timing: ragged, and not a multiple of any tile.
CHECK_SHAPE = (97, 61, 75)


def speedup_task(student: SourceBundle, reference: SourceBundle | None = None, *,
                  size: int, tile: int, repeats: int, seed: int,
                  check_shape: tuple[int, int, int] = CHECK_SHAPE,
                  time_own_naive: bool = True) -> dict[str, Any]:
    """Child-process side: rebuild kernels from source, check them once, then time them,
    verifying every timed launch (:class:`course.perf.timing.GemmTiming`).

    ``time_own_naive=False``: the student's naive kernel is checked but not timed, and the
    tiled kernel is timed against the reference only (:mod:`course.checks.speedup_baseline`)."""
    import numpy as np

    ns = student.load()
    gemms = {"tiled": tiled(ns["make_gemm_tiled"], tile), "own naive": naive(ns["gemm_naive"])}
    if reference is not None:
        gemms["reference naive"] = naive(reference.load()["gemm_naive"])
    rng = np.random.default_rng(seed)
    A, B = random_operands(*check_shape, rng)
    for name, gk in gemms.items():  # a fast wrong kernel must not pass
        C, outside = run_guarded(gk, A, B)
        problem = diagnose(C, A, B, gk.tile or 16, outside, naive=gk.tile is None)
        if problem:
            return {"error": _("{name} kernel is not correct: {problem}").format(
                name=_(name), problem=problem)}
    renamed = [type(gk)(name, gk.kernel, gk.launch_for, gk.tile)
               for name, gk in speedup_baseline.timed(gemms, time_own_naive).items()]
    # Compiles, the reference product and the rest of the set-up first, sharing the GPU; then
    # the GPU alone for the timed launches only: other graders wait for those, not for this.
    timing = GemmTiming(renamed, size, size, size, seed=seed)
    try:
        with gpulock.exclusive():  # other graders' kernels must not share the GPU while timing
            timings = timing.run(repeats=repeats, budget=gpu_timing_budget(
                [gk.name for gk in renamed], size))
    except TimingBudgetExceeded as exc:
        return {"error": str(exc), "overran": exc.kernel}
    except UnverifiedTimingError as exc:
        return {"error": _("the {problem} The correctness tests use small shapes; a speedup "
                           "only counts for launches that computed C = A·B at the timed size, "
                           "{size}³").format(problem=exc, size=size)}
    b = backend.detect()
    return {"ms": {k: t.median_ms for k, t in timings.items()}, "device": b.device_name,
            "compute_capability": b.compute_capability, "verified": True}


def _reference_bundle() -> SourceBundle | None:
    path = os.environ.get(REFERENCE_ENV)
    if not path:
        return None
    with open(path) as fh:
        return SourceBundle.from_json(json.load(fh)["gemm_naive"])


def measure_speedup(make_gemm_tiled: Callable[[int], Any], gemm_naive: Any, *,
                    size: int = SPEEDUP_SIZE, tile: int = SPEEDUP_TILE,
                    repeats: int = SPEEDUP_REPEATS) -> SpeedupReport:
    """Time tiled vs naive in a fresh GPU process; raise NotMeasuredError without a GPU."""
    gate.begin_check("measure_speedup")
    if backend.autograding() and not os.environ.get(backend.TRUSTED_ENV):
        # The grader measures in its own process; timing here, in the student's kernel, would
        # only disturb other students' measurements on a shared GPU.
        raise NotMeasuredError("speedup: measured by the grader in a separate process")
    b = backend.detect()
    if b.kind != "gpu":
        raise NotMeasuredError(_(
            "speedup not measured: this machine has no GPU ({reason}). It is measured when the "
            "notebook runs on a GPU; it is never counted as passed without one.").format(
                reason=b.reason)
        )
    student = bundle_from_objects({"make_gemm_tiled": make_gemm_tiled, "gemm_naive": gemm_naive})
    # First a deterministic look on the simulator: a kernel with a barrier race can pass or
    # fail a GPU run by luck, and the same submission must always get the same verdict.
    seen = inspection.inspect_tiled(make_gemm_tiled, 8, (11, 9, 19), fresh_seed())
    problem = seen.get("error") or (seen.get("races") or [None])[0] or \
        (seen.get("uninitialised") or [None])[0] or seen.get("problem")
    if problem:
        raise SpeedupCheckError(_("no speedup points yet: make_gemm_tiled(8) is not correct "
                                  "({problem}); fix the correctness tests first").format(
                                      problem=problem))
    reference = _reference_bundle()
    bundles = {"student": student.to_json()}
    if reference is not None:
        bundles["reference"] = reference.to_json()
    job = {"task": "speedup", "bundles": bundles, "size": size, "tile": tile,
           "repeats": repeats, "seed": fresh_seed()}
    tiled_prints = device_print.python_prints(student.source, "make_gemm_tiled")
    out, untimed, tiled_hint = speedup_baseline.run_speedup_job(
        job, has_reference=reference is not None,
        naive_prints=device_print.python_prints(student.source, "gemm_naive"),
        tiled_prints=tiled_prints, call="print()", size=size)
    if out.get("not_measured"):
        raise NotMeasuredError(_("speedup not measured: {why}").format(why=out["not_measured"]))
    if out.get("error"):
        raise SpeedupCheckError(_("no speedup points: {why}").format(why=out["error"]))
    cc = out.get("compute_capability")
    gpu_class = gpu_classes.for_device(out.get("device"), tuple(cc) if cc else None)
    return report_from(out, size, tile, gpu_class.speedup_threshold, gpu_class.describe(),
                       untimed, tiled_hint)


def check_speedup(make_gemm_tiled: Callable[[int], Any], gemm_naive: Any, **kwargs: Any
                  ) -> SpeedupReport:
    """Pass if the tiled kernel beats the naive one by the threshold (ratio of medians)."""
    return judge(measure_speedup(make_gemm_tiled, gemm_naive, **kwargs))
