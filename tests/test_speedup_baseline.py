"""When the student's own naive kernel cannot be timed (it prints, or it overran the timing's
budget), the tiled kernel is judged against the course's reference naive kernel, with a note
(course/checks/speedup_baseline.py; issue 32). Everything else fails as before.

Without a GPU: the check's decisions with a stand-in for the GPU child process (the Numba
track's simulator jobs — the race look — really run); the child's side with a stand-in clock
and a budget on that clock, so that a kernel "crawls" without anything sleeping.
"""

from __future__ import annotations

import json
import threading
import time

import kernels_for_tests as kft
import pytest

from course.checks import cuda_speedup, speedup, speedup_baseline
from course.checks.speedup import SpeedupCheckError, check_speedup
from course.gemm import inspection
from course.gemm.cudac import cpu, gpu, nvrtc
from course.perf import timing
from course.perf.budget import LaunchBudget
from course.runtime import backend
from course.runtime.backend import Backend
from course.trust import runner
from course.trust.kernel_source import SourceBundle, bundle_from_objects
from tests import cudac_kernels as k

#: what a budget says when the student's naive kernel overran it (course.perf.budget)
OVERRAN = ("your naive kernel did not finish its 23 launches at 2048³ within 16 s; the "
           "course's naive kernel takes 0.20 s for as many. Does it loop forever, wait at a "
           "barrier some threads never reach, or do far more work than it should?")
FAST = {"ms": {"tiled": 1.0, "reference naive": 5.0}, "device": "Fake"}


@pytest.fixture
def reference(monkeypatch, tmp_path):
    """The grader's reference file (both tracks' naive kernels)."""
    path = tmp_path / "reference.json"
    path.write_text(json.dumps({
        "gemm_naive": bundle_from_objects({"gemm_naive": kft.gemm_naive}).to_json(),
        cuda_speedup.REFERENCE_KEY: k.NAIVE}))
    monkeypatch.setenv(speedup.REFERENCE_ENV, str(path))
    return path


@pytest.fixture
def gpu_child(monkeypatch):
    """Pretend there is a GPU; each speedup job gets the next of the results a test installs."""
    monkeypatch.setattr(backend, "detect", lambda: Backend("gpu", device_name="Fake"))
    monkeypatch.setattr(gpu, "available", lambda: True)
    monkeypatch.delenv(speedup.REFERENCE_ENV, raising=False)
    jobs: list[dict] = []
    results: list[dict] = []

    def run_job(job, simulator, timeout_s=0):
        if job["task"] == "inspect":
            bundle = SourceBundle.from_json(job["bundles"]["bundle"])
            return inspection.inspect_task(bundle, job["kind"], job["tile"], job["shape"],
                                           job["seed"])
        assert job["task"] in ("speedup", "speedup_cuda") and simulator is False
        jobs.append(job)
        return results.pop(0)

    monkeypatch.setattr(runner, "run_job", run_job)

    def install(*outs: dict) -> list[dict]:
        results[:] = list(outs)
        return jobs

    return install


# --------------------------------------------------------------------------- it prints


def test_a_printing_naive_kernel_is_not_timed_and_the_reference_judges(gpu_child, reference,
                                                                        capsys):
    jobs = gpu_child(FAST)
    report = check_speedup(kft.make_gemm_tiled, kft.gemm_naive_prints)
    (job,) = jobs
    assert job["time_own_naive"] is False and set(job["bundles"]) == {"student", "reference"}
    assert report.vs_own_naive is None and report.vs_reference == 5.0
    out = capsys.readouterr().out
    note, tick = out.splitlines()[-2:]
    assert note.startswith("Note: your naive kernel calls print() on the device: device "
                           "printing makes every launch slow")
    assert "Remove it before timing. Your naive kernel was therefore left out of the timing" in note
    assert "timed against the course's reference naive kernel instead" in note
    assert tick.startswith("✓ tile 32 at 2048³: 5.00× the speed of the course's naive kernel")
    assert "your naive kernel was not timed" in tick


def test_a_print_in_the_naive_kernel_never_passes_a_slow_tiled_kernel(gpu_child, reference):
    gpu_child({"ms": {"tiled": 1.0, "reference naive": 1.5}})
    with pytest.raises(SpeedupCheckError) as info:
        check_speedup(kft.make_gemm_tiled_global_inner, kft.gemm_naive_prints)
    msg = str(info.value)
    assert "runs at 1.50× the speed of the naive kernel" in msg
    assert "Your naive kernel was therefore left out of the timing" in msg


def test_a_print_in_a_device_function_counts(gpu_child, reference):
    jobs = gpu_child(FAST)
    check_speedup(kft.make_gemm_tiled, kft.gemm_naive_prints_in_a_helper)
    assert jobs[0]["time_own_naive"] is False


def test_without_the_reference_a_printing_naive_kernel_is_not_timed_at_all(gpu_child):
    jobs = gpu_child()
    with pytest.raises(SpeedupCheckError) as info:
        check_speedup(kft.make_gemm_tiled, kft.gemm_naive_prints)
    msg = str(info.value)
    assert msg.startswith("no speedup points: your naive kernel calls print() on the device")
    assert "Remove it before timing." in msg and "it was not measured" in msg
    assert jobs == []


def test_a_quiet_naive_kernel_is_timed_as_before(gpu_child, reference, capsys):
    jobs = gpu_child({"ms": {"tiled": 1.0, "own naive": 4.0, "reference naive": 5.0}})
    report = check_speedup(kft.make_gemm_tiled, kft.gemm_naive)
    assert jobs[0]["time_own_naive"] is True and report.vs_own_naive == 4.0
    assert "Note:" not in capsys.readouterr().out


# --------------------------------------------------------------------------- it overran


def test_a_naive_kernel_that_overran_is_left_out_and_the_tiled_kernel_timed_again(
        gpu_child, reference, capsys):
    jobs = gpu_child({"error": OVERRAN, "overran": "own naive"}, FAST)
    report = check_speedup(kft.make_gemm_tiled, kft.gemm_naive)
    first, again = jobs
    assert first["time_own_naive"] is True and again["time_own_naive"] is False
    assert again["seed"] != first["seed"] and again["bundles"] == first["bundles"]
    assert report.vs_own_naive is None and report.vs_reference == 5.0
    note = capsys.readouterr().out.splitlines()[-2]
    # the budget's own diagnosis is kept: the student still learns the kernel hangs or crawls
    assert note == (f"Note: {OVERRAN} Your naive kernel was therefore left out of the timing, "
                    "and your tiled kernel was timed against the course's reference naive kernel "
                    "instead, which decides the speedup in grading in any case.")


@pytest.mark.parametrize("out", [
    {"error": "your tiled kernel did not finish its 23 launches at 2048³ within 16 s",
     "overran": "tiled"},
    {"error": "the own naive: what the timed launches computed is wrong (never written)"},
    {"error": "own naive kernel is not correct: wrong values"},
])
def test_anything_else_still_fails_once(gpu_child, reference, out):
    """A tiled kernel that hangs or crawls, and a naive kernel that is wrong, lose the speedup
    as before, and are not timed again."""
    jobs = gpu_child(out)
    with pytest.raises(SpeedupCheckError, match="no speedup points: ") as info:
        check_speedup(kft.make_gemm_tiled, kft.gemm_naive)
    assert str(info.value) == f"no speedup points: {out['error']}" and len(jobs) == 1


def test_without_the_reference_a_naive_kernel_that_overran_fails(gpu_child):
    jobs = gpu_child({"error": OVERRAN, "overran": "own naive"})
    with pytest.raises(SpeedupCheckError, match="your naive kernel did not finish"):
        check_speedup(kft.make_gemm_tiled, kft.gemm_naive)
    assert len(jobs) == 1


def test_a_printing_tiled_kernel_that_fails_is_told_why(gpu_child, reference):
    gpu_child({"error": "your tiled kernel did not finish its 23 launches", "overran": "tiled"})
    with pytest.raises(SpeedupCheckError) as info:
        check_speedup(kft.make_gemm_tiled_prints, kft.gemm_naive)
    assert "your tiled kernel calls print() on the device" in str(info.value)
    gpu_child({"ms": {"tiled": 1.0, "own naive": 1.2, "reference naive": 1.2}})
    with pytest.raises(SpeedupCheckError, match="runs at 1.20×") as info:
        check_speedup(kft.make_gemm_tiled_prints, kft.gemm_naive)
    assert "your tiled kernel calls print() on the device" in str(info.value)


# --------------------------------------------------------------------------- CUDA C

needs_cuda_c_tools = pytest.mark.skipif(not (nvrtc.available() and cpu.available()),
                                        reason="needs NVRTC and the CPU runner's compiler")


@needs_cuda_c_tools
def test_cuda_c_a_printf_in_the_naive_kernel_is_not_timed(gpu_child, reference, capsys):
    jobs = gpu_child({"ms": {"tiled": 1.0, "reference naive": 1.7}, "device": "Fake"})
    report = cuda_speedup.check_speedup_cuda(k.TILED, k.NAIVE_PRINTF)
    (job,) = jobs
    assert job["time_own_naive"] is False and job["reference_source"] == k.NAIVE
    assert report.vs_own_naive is None and report.vs_reference == pytest.approx(1.7)
    assert "your naive kernel calls printf on the device" in capsys.readouterr().out


@needs_cuda_c_tools
def test_cuda_c_a_naive_kernel_that_overran_is_left_out(gpu_child, reference, capsys):
    jobs = gpu_child({"error": OVERRAN, "overran": "own naive"},
                     {"ms": {"tiled": 1.0, "reference naive": 1.7}})
    cuda_speedup.check_speedup_cuda(k.TILED, k.NAIVE_PRINTF_IN_COMMENT)
    assert [j["time_own_naive"] for j in jobs] == [True, False]
    assert f"Note: {OVERRAN} Your naive kernel was therefore left out" in capsys.readouterr().out
    gpu_child({"ms": {"tiled": 1.0, "reference naive": 1.1}})  # tiling that gains nothing
    with pytest.raises(SpeedupCheckError, match="runs at 1.10×"):
        cuda_speedup.check_speedup_cuda(k.TILED, k.NAIVE_PRINTF)


# --------------------------------------------------------------------------- the child's side


class StandInClock:
    """Runs each launch (on the simulator) and reports, and advances a fake monotonic clock by,
    the milliseconds the test gives the kernel that the budget says is running."""

    def __init__(self, ms: dict[str, float]) -> None:
        self.ms, self.t = ms, 0.0
        self.budget: LaunchBudget | None = None
        self.measured: list[str] = []

    def now(self) -> float:
        return self.t

    def measure(self, fn, batch: int) -> float:
        name = self.budget.current if self.budget else "?"
        for _ in range(batch):
            fn()
        self.measured.append(name)
        self.t += self.ms[name] * batch / 1e3
        return self.ms[name] * batch

    def synchronize(self) -> None:
        pass


@pytest.fixture
def stand_in(monkeypatch):
    """The speedup task's clock and budget, on a stand-in clock (no GPU: the task would have
    no budget); the watchdog's overrun stops the timing with TimingBudgetExceeded."""

    def install(ms: dict[str, float]) -> StandInClock:
        clock = StandInClock(ms)
        expired = threading.Event()

        def budget(names, size):
            b = speedup.timing_budget(names, size)
            b.now, b.poll_s, b.on_overrun = clock.now, 0.001, lambda reason: expired.set()
            clock.budget = b
            return b

        real_measure = clock.measure

        def measure(fn, batch):  # the budget started at t = 0: let its watchdog look
            took = real_measure(fn, batch)
            if clock.t > clock.budget.seconds:
                assert expired.wait(5), "the watchdog never saw the deadline pass"
            return took

        clock.measure = measure
        monkeypatch.setattr(speedup, "gpu_timing_budget", budget)
        monkeypatch.setattr(timing, "CudaEventClock", lambda: clock)
        return clock

    return install


def bundles(naive):
    return (bundle_from_objects({"make_gemm_tiled": kft.make_gemm_tiled, "gemm_naive": naive}),
            bundle_from_objects({"gemm_naive": kft.gemm_naive}))


def test_the_task_checks_but_does_not_time_a_naive_kernel_it_is_told_to_leave_out(stand_in,
                                                                                  capsys):
    clock = stand_in({"tiled": 2.0, "reference naive": 10.0, "own naive": 1e6})
    student, ref = bundles(kft.gemm_naive_prints)
    out = speedup.speedup_task(student, ref, size=24, tile=4, repeats=2, seed=0,
                               check_shape=(9, 7, 5), time_own_naive=False)
    assert out["verified"] and set(out["ms"]) == {"tiled", "reference naive"}
    assert out["ms"]["reference naive"] / out["ms"]["tiled"] == 5.0
    assert "own naive" not in clock.measured
    assert "row" in capsys.readouterr().out  # it ran, at the check shape, and printed
    # left out of the timing, still checked: a wrong naive kernel fails as before
    wrong, _ = bundles(kft.gemm_naive_off_by_one)
    out = speedup.speedup_task(wrong, ref, size=24, tile=4, repeats=1, seed=0,
                               check_shape=(9, 7, 5), time_own_naive=False)
    assert out["error"].startswith("own naive kernel is not correct")


def test_a_naive_kernel_that_crawls_is_named_as_the_one_that_overran(stand_in):
    stand_in({"tiled": 2.0, "reference naive": 10.0, "own naive": 1e5})
    student, ref = bundles(kft.gemm_naive)
    started = time.monotonic()
    out = speedup.speedup_task(student, ref, size=24, tile=4, repeats=2, seed=0,
                               check_shape=(9, 7, 5))
    assert out["overran"] == "own naive"
    assert out["error"].startswith("your naive kernel did not finish its 5 launches at 24³")
    assert time.monotonic() - started < 120  # stopped at its first timed sample


def test_a_tiled_kernel_that_crawls_is_named_too(stand_in):
    stand_in({"tiled": 1e5, "reference naive": 10.0, "own naive": 10.0})
    student, ref = bundles(kft.gemm_naive)
    out = speedup.speedup_task(student, ref, size=24, tile=4, repeats=2, seed=0,
                               check_shape=(9, 7, 5), time_own_naive=False)
    assert out["overran"] == "tiled"
    assert out["error"].startswith("your tiled kernel did not finish")


def test_the_task_refuses_to_leave_out_the_only_naive_kernel():
    student, _ = bundles(kft.gemm_naive)
    with pytest.raises(ValueError, match="must be timed"):
        speedup.speedup_task(student, None, size=24, tile=4, repeats=1, seed=0,
                             time_own_naive=False)


def test_the_note_speaks_the_students_language(gpu_child, reference, capsys, monkeypatch):
    from course.runtime import i18n

    monkeypatch.setenv(i18n.ENV, "ko")
    gpu_child(FAST)
    check_speedup(kft.make_gemm_tiled, kft.gemm_naive_prints)
    note, tick = capsys.readouterr().out.splitlines()[-2:]
    assert note.startswith("참고: 여러분의 naive 커널이 device에서 print()를 호출한다")
    assert "그래서 여러분의 naive 커널은 시간 측정에서 뺐고" in note
    assert "시간을 재기 전에 지워라." in note
    assert "직접 작성한 naive 커널은 시간을 재지 않았다" in tick


# --------------------------------------------------------------------------- on a real GPU


@pytest.mark.gpu
def test_on_a_gpu_an_untimeable_naive_kernel_leaves_the_reference_to_judge(reference, capsys):
    """Through the real check processes: a printing naive kernel is not launched at 2048³, and
    one that never ends there is stopped by the budget, then left out of a second timing."""
    if backend.detect().kind != "gpu":
        pytest.skip(f"needs a CUDA GPU ({backend.detect().reason})")
    started = time.monotonic()
    report = check_speedup(kft.make_gemm_tiled, kft.gemm_naive_prints)
    printed = capsys.readouterr().out
    assert report.vs_own_naive is None and "your naive kernel calls print()" in printed
    assert time.monotonic() - started < 60
    report = check_speedup(kft.make_gemm_tiled, kft.gemm_naive_spins_at_large_k)
    printed = capsys.readouterr().out
    assert report.vs_own_naive is None
    assert "Note: your naive kernel did not finish its 23 launches at 2048³" in printed
    assert "Your naive kernel was therefore left out of the timing" in printed
    with pytest.raises(SpeedupCheckError):  # and a fake tiled kernel still fails
        check_speedup(kft.make_gemm_tiled_global_inner, kft.gemm_naive_prints)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu.available(), reason="needs a CUDA GPU and CuPy")
def test_on_a_gpu_a_printf_in_the_cuda_c_naive_kernel_leaves_the_reference_to_judge(
        reference, capsys):
    report = cuda_speedup.check_speedup_cuda(k.TILED, k.NAIVE_PRINTF)
    assert report.vs_own_naive is None
    assert "your naive kernel calls printf on the device" in capsys.readouterr().out
    with pytest.raises(SpeedupCheckError, match="at least"):
        cuda_speedup.check_speedup_cuda(k.TILED_GLOBAL_INNER_LOOP, k.NAIVE_PRINTF)


def test_the_timed_kernels_leave_out_only_the_students_naive_and_only_with_the_reference():
    kernels = {"tiled": 1, "own naive": 2, "reference naive": 3}
    assert speedup_baseline.timed(kernels, True) == kernels
    assert speedup_baseline.timed(kernels, False) == {"tiled": 1, "reference naive": 3}
    with pytest.raises(ValueError, match="must be timed"):
        speedup_baseline.timed({"tiled": 1, "own naive": 2}, False)
