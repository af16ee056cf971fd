"""Tests for course.perf.timing and course.checks.speedup.

On the simulator nothing may be timed: timing raises NoGPUError and the speedup check raises
NotMeasuredError (never a pass). The verdict logic of check_speedup is tested with a stand-in
for the GPU child process; the real comparison runs only on a GPU (``-m gpu``).
"""

from __future__ import annotations

import dataclasses
import json

import kernels_for_tests as kft
import pytest

from course.checks import speedup
from course.checks.speedup import (
    SPEEDUP_THRESHOLD,
    NotMeasuredError,
    SpeedupCheckError,
    SpeedupReport,
    check_speedup,
    measure_speedup,
)
from course.gemm import inspection
from course.gemm.launch import naive, tiled
from course.perf import timing
from course.perf.timing import Timing, time_gemm, time_launch, time_launches
from course.runtime import backend
from course.runtime.backend import Backend, NoGPUError
from course.trust import runner as isolated
from course.trust.kernel_source import SourceBundle, bundle_from_objects

on_simulator = pytest.mark.skipif(backend.detect().kind == "gpu",
                                  reason="checks the behaviour without a GPU")


# --------------------------------------------------------------------------- no GPU


@on_simulator
def test_time_gemm_refuses_without_a_gpu():
    with pytest.raises(NoGPUError) as info:
        time_gemm([naive(kft.gemm_naive)], 4, 4, 4)
    msg = str(info.value)
    assert msg.startswith("Timing kernels needs a real CUDA GPU")
    assert "never produces timings" in msg


@on_simulator
def test_time_launch_refuses_without_a_gpu():
    calls = []
    with pytest.raises(NoGPUError, match="Timing kernels needs a real CUDA GPU"):
        time_launch(lambda: calls.append(1))
    with pytest.raises(NoGPUError):
        time_launches({"a": lambda: calls.append(1)})
    assert calls == [], "nothing may run (and look timed) on the simulator"


@on_simulator
def test_measure_speedup_is_not_measured_without_a_gpu():
    with pytest.raises(NotMeasuredError) as info:
        measure_speedup(kft.make_gemm_tiled, kft.gemm_naive)
    msg = str(info.value)
    assert "speedup not measured" in msg
    assert "never counted as passed" in msg


@on_simulator
def test_check_speedup_never_passes_without_a_gpu(capsys):
    for factory in (kft.make_gemm_tiled, kft.make_gemm_tiled_global_inner):
        with pytest.raises(NotMeasuredError):
            check_speedup(factory, kft.gemm_naive, size=64)
    assert "✓" not in capsys.readouterr().out


def test_not_measured_is_neither_a_pass_nor_a_fail():
    assert not issubclass(NotMeasuredError, AssertionError)
    assert issubclass(SpeedupCheckError, AssertionError)


def test_speedup_is_not_timed_in_the_students_kernel_during_autograde(monkeypatch):
    # The grader times in its own process; the student's kernel must not use the GPU for it.
    monkeypatch.setenv(backend.AUTOGRADE_ENV, "autograde")
    monkeypatch.delenv(backend.TRUSTED_ENV, raising=False)
    monkeypatch.setattr(backend, "detect", lambda: backend.Backend("gpu", device_name="fake"))
    with pytest.raises(NotMeasuredError, match="measured by the grader"):
        check_speedup(kft.make_gemm_tiled, kft.gemm_naive)


# --------------------------------------------------------------------------- timing maths


def test_summarise_median_and_rates():
    t = timing._summarise("k", [3.0, 1.0, 2.0], flops=2e6, nbytes=4e6)
    assert t == Timing("k", 2.0, 1.0, 3.0, 3, 1.0, 2.0)
    assert str(t) == ("k: median 2.0000 ms (min 1.0000, max 3.0000, 3 runs), 1 GFLOP/s, "
                      "2 GB/s")
    bare = timing._summarise("k", [0.5], flops=0.0, nbytes=0.0)
    assert bare.gflops == 0.0 and bare.gbs == 0.0
    assert "GFLOP/s" not in str(bare)


def test_timing_argument_validation(monkeypatch):
    monkeypatch.setattr(backend, "require_gpu", lambda what: Backend("gpu"))
    with pytest.raises(ValueError, match="repeats and batch must be ≥ 1"):
        time_launches({"a": lambda: None}, repeats=0)
    with pytest.raises(ValueError, match="batch=0"):
        time_launches({"a": lambda: None}, batch=0)


def test_a_batch_is_timed_between_one_pair_of_events_and_divided(monkeypatch):
    """A fake GPU clock: each launch takes 2 ms, plus 0.5 ms of host latency per event pair."""
    from numba import cuda

    monkeypatch.setattr(backend, "require_gpu", lambda what: Backend("gpu"))
    clock = {"now": 0.0, "pairs": 0}

    class Event:
        def record(self):
            self.at = clock["now"]

        def synchronize(self):
            pass

    def launch():
        clock["now"] += 2.0

    def elapsed(start, end):
        clock["pairs"] += 1
        return end.at - start.at + 0.5  # the host's launch cost, once per pair of events

    monkeypatch.setattr(cuda, "event", lambda timing=True: Event(), raising=False)
    monkeypatch.setattr(cuda, "event_elapsed_time", elapsed, raising=False)
    monkeypatch.setattr(cuda, "synchronize", lambda: None)
    calls = []
    got = time_launches({"k": lambda: (calls.append(1), launch())}, repeats=5, warmup=2,
                        batch=4, nbytes=2e6)["k"]
    assert len(calls) == 2 + 5 * 4 and clock["pairs"] == 5
    assert got.median_ms == pytest.approx(2.0 + 0.5 / 4)  # the host cost shared by 4 launches
    assert got.gbs == pytest.approx(2e6 / (got.median_ms * 1e6))
    single = time_launches({"k": launch}, repeats=3, warmup=0)["k"]
    assert single.median_ms == pytest.approx(2.5)  # batch=1 counts all of it


# --------------------------------------------------------------------------- verdict logic


@pytest.fixture
def fake_gpu(monkeypatch):
    """Pretend there is a GPU and let the test decide what the GPU child process measured.

    Simulator jobs (``inspect``: reads, races) really run, in this process, as they would in
    the simulator child; ``speedup`` jobs (timings on the GPU) return what the test installs.
    """
    monkeypatch.setattr(backend, "detect", lambda: Backend("gpu", device_name="Fake"))
    monkeypatch.delenv(speedup.REFERENCE_ENV, raising=False)
    jobs: list[dict] = []

    def install(result):
        def run_job(job, simulator, timeout_s=0):
            if job["task"] == "inspect":
                assert simulator is True
                bundle = SourceBundle.from_json(job["bundles"]["bundle"])
                return inspection.inspect_task(bundle, job["kind"], job["tile"], job["shape"],
                                               job["seed"])
            assert job["task"] == "speedup" and simulator is False
            jobs.append(job)
            return result

        monkeypatch.setattr(isolated, "run_job", run_job)
        return jobs

    return install


def test_check_speedup_passes_a_fast_tiled_kernel(fake_gpu, capsys):
    jobs = fake_gpu({"ms": {"tiled": 1.0, "own naive": 3.0}, "device": "Fake"})
    report = check_speedup(kft.make_gemm_tiled, kft.gemm_naive, size=1024, tile=16)
    assert report.vs_own_naive == 3.0 and report.vs_reference is None
    assert capsys.readouterr().out.startswith("✓ tile 16 at 1024³: 3.00× the speed of your naive")
    (job,) = jobs
    assert job["size"] == 1024 and job["tile"] == 16
    # the child receives source only, and that source passes the whitelist again
    assert set(job["bundles"]) == {"student"}
    assert "def make_gemm_tiled(tile):" in job["bundles"]["student"]["source"]
    SourceBundle.from_json(job["bundles"]["student"])


def test_check_speedup_fails_a_slow_tiled_kernel(fake_gpu):
    fake_gpu({"ms": {"tiled": 1.0, "own naive": 1.25}})
    with pytest.raises(SpeedupCheckError) as info:
        check_speedup(kft.make_gemm_tiled_global_inner, kft.gemm_naive)
    msg = str(info.value)
    assert "runs at 1.25× the speed of the naive kernel" in msg
    assert f"at least {SPEEDUP_THRESHOLD}× is expected" in msg
    assert "reading shared memory only" in msg


def test_reference_kernel_decides_when_the_grader_supplies_it(fake_gpu, monkeypatch, tmp_path):
    ref = tmp_path / "reference.json"
    ref.write_text(json.dumps({"gemm_naive": bundle_from_objects(
        {"gemm_naive": kft.gemm_naive}).to_json()}))
    monkeypatch.setenv(speedup.REFERENCE_ENV, str(ref))
    # A student's deliberately slow naive kernel must not make a slow tiled kernel pass.
    jobs = fake_gpu({"ms": {"tiled": 1.0, "own naive": 10.0, "reference naive": 1.5}})
    with pytest.raises(SpeedupCheckError, match="runs at 1.50× the speed"):
        check_speedup(kft.make_gemm_tiled, kft.gemm_naive)
    assert set(jobs[-1]["bundles"]) == {"student", "reference"}
    fake_gpu({"ms": {"tiled": 1.0, "own naive": 1.0, "reference naive": 5.0}})
    assert check_speedup(kft.make_gemm_tiled, kft.gemm_naive).vs_reference == 5.0


def test_an_error_in_the_gpu_child_is_not_a_pass(fake_gpu):
    fake_gpu({"error": "tiled kernel is not correct: wrong values"})
    with pytest.raises(SpeedupCheckError,
                       match="no speedup points: tiled kernel is not correct"):
        check_speedup(kft.make_gemm_tiled, kft.gemm_naive)


def test_a_gpu_that_stayed_busy_is_not_measured(fake_gpu):
    fake_gpu({"not_measured": "the GPU stayed busy for more than 3600 s"})
    with pytest.raises(NotMeasuredError, match="stayed busy"):
        check_speedup(kft.make_gemm_tiled, kft.gemm_naive)


@pytest.mark.parametrize("variant", ["no_second_barrier", "swapped_tile_index"])
def test_a_wrong_tiled_kernel_is_never_timed(fake_gpu, variant):
    # A racy kernel could be fast and right by luck on a GPU: it must fail every time.
    jobs = fake_gpu({"ms": {"tiled": 1.0, "own naive": 9.0}})
    with pytest.raises(SpeedupCheckError, match="no speedup points yet"):
        check_speedup(kft.BUGGY_TILED[variant], kft.gemm_naive)
    assert jobs == []


def test_refused_source_never_reaches_the_gpu(fake_gpu):
    from course.trust.kernel_source import DisallowedCodeError

    jobs = fake_gpu({"ms": {"tiled": 1.0, "own naive": 9.0}})

    def make_gemm_tiled(tile):
        return open("/dev/null")  # noqa: SIM115 - refused by the whitelist

    with pytest.raises(DisallowedCodeError, match="`open`"):
        check_speedup(make_gemm_tiled, kft.gemm_naive)
    assert jobs == []


def test_the_child_process_knows_the_speedup_task():
    # The child (`python -m course._isolated`) finds the task in its one table
    # (course._isolated.tasks). A student bundle without the kernels: the task itself should
    # report that, cheaply.
    job = {"task": "speedup", "bundles": {"student": {"source": "x = 1\n", "names": ["x"]}},
           "size": 64, "tile": 4, "repeats": 1, "seed": 0}
    out = isolated.run_job(job, simulator=True, timeout_s=120)
    assert "make_gemm_tiled" in out["error"]


def test_the_child_process_refuses_a_task_it_does_not_list():
    # Only the tasks of course._isolated.tasks run; any other name is an error, not an import.
    job = {"task": "os.system", "bundles": {}}
    out = isolated.run_job(job, simulator=True, timeout_s=120)
    assert "no task named 'os.system'" in out["error"]
    assert "speedup" in out["error"]  # the message lists the known tasks


def test_the_threshold_comes_from_the_class_of_the_gpu_it_ran_on(fake_gpu, monkeypatch):
    from course.runtime import gpu_classes

    turing = dataclasses.replace(gpu_classes.CLASSES[1], speedup_threshold=4.0)
    monkeypatch.setattr(gpu_classes, "CLASSES", (gpu_classes.CLASSES[0], turing))
    fake_gpu({"ms": {"tiled": 1.0, "own naive": 3.0}, "device": "Tesla T4",
              "compute_capability": [7, 5]})
    with pytest.raises(SpeedupCheckError, match="at least 4.0× is expected"):
        check_speedup(kft.make_gemm_tiled, kft.gemm_naive)
    fake_gpu({"ms": {"tiled": 1.0, "own naive": 3.0}, "device": "NVIDIA H200",
              "compute_capability": [9, 0]})
    report = check_speedup(kft.make_gemm_tiled, kft.gemm_naive)
    assert report.threshold == 2.0 and report.gpu_class.startswith("Hopper (H100, H200): measured")


def test_speedup_report_text():
    r = SpeedupReport(2048, 32, {"tiled": 1.0, "own naive": 5.5}, None, 5.5, 2.0)
    assert str(r) == ("tile 32 at 2048³: 5.50× the speed of your naive kernel (threshold 2.0×). "
                      "Medians: tiled 1.000 ms, own naive 5.500 ms")


# --------------------------------------------------------------------------- verified timing


class FakeClock:
    """Runs the launches like the real clock and reports 1 ms each: only for verification."""

    def measure(self, fn, batch):
        for _ in range(batch):
            fn()
        return 1.0 * batch


def test_timed_launches_of_a_correct_kernel_are_verified_and_timed():
    t = time_gemm([naive(kft.gemm_naive)], 33, 40, 37, repeats=2, warmup=1, seed=0,
                  clock=FakeClock())
    assert t["gemm_naive"].median_ms == 1.0 and t["gemm_naive"].repeats == 2


def test_a_kernel_lazy_at_the_timed_size_fails_its_timing():
    # Right on the small shapes of the correctness checks (K < 32), lazy at the timed size.
    from course.checks.gemm import check_naive_gemm

    lazy = naive(kft.gemm_naive_lazy_at_large_k)
    check_naive_gemm(kft.gemm_naive_lazy_at_large_k, shapes=((5, 7, 9), (17, 3, 31)),
                     quiet=True)
    with pytest.raises(timing.UnverifiedTimingError) as info:
        time_gemm([naive(kft.gemm_naive), dataclasses.replace(lazy, name="lazy")], 10, 10, 40,
                  repeats=2, warmup=1, seed=0, clock=FakeClock())
    msg = str(info.value)
    assert msg.startswith("lazy: what the timed launches computed is wrong")
    assert "100 of 100 elements of C are not A·B at M=10, N=10, K=40" in msg
    assert "C holds only the NaN it starts as" in msg


def test_a_kernel_that_writes_into_its_inputs_fails_its_timing():
    with pytest.raises(timing.UnverifiedTimingError, match="wrote into A"):
        time_gemm([naive(kft.gemm_naive_writes_into_a)], 8, 8, 8, repeats=1, warmup=1,
                  seed=0, clock=FakeClock())


def test_the_output_is_poisoned_before_every_sample():
    # A kernel that computes only its first launch (the warm-up) must not pass: every timed
    # sample starts from poison, so its output holds only the NaN it starts as.
    calls = []

    class OnlyFirst:
        def measure(self, fn, batch):
            calls.append(1)
            return 1.0  # does not launch: what the warm-up left was poisoned away

    with pytest.raises(timing.UnverifiedTimingError, match="C holds only the NaN it starts as"):
        time_gemm([naive(kft.gemm_naive)], 8, 8, 8, repeats=3, warmup=1, seed=0,
                  clock=OnlyFirst())
    assert calls == [1]  # failed at the first timed sample


def test_the_speedup_task_reports_a_lazy_kernel_as_not_correct_at_the_timed_size(monkeypatch):
    monkeypatch.setattr(timing, "CudaEventClock", FakeClock)
    lazy_tiled = {"make_gemm_tiled": kft.make_gemm_tiled, "gemm_naive":
                  kft.gemm_naive_lazy_at_large_k}
    student = bundle_from_objects(lazy_tiled)
    # The task's quick correctness look uses K < 32 here; the timed size, 40³, does not.
    out = speedup.speedup_task(student, size=40, tile=4, repeats=1, seed=0,
                                check_shape=(9, 7, 5))
    assert out["error"].startswith("the own naive: what the timed launches computed is wrong")
    assert "only counts for launches that computed C = A·B at the timed size, 40³" in out["error"]
    good = bundle_from_objects({"make_gemm_tiled": kft.make_gemm_tiled,
                                "gemm_naive": kft.gemm_naive})
    assert speedup.speedup_task(good, size=24, tile=4, repeats=1, seed=0,
                                 check_shape=(9, 7, 5))["verified"]


def test_the_speedup_task_takes_the_gpu_alone_for_its_timed_launches_only(monkeypatch, tmp_path):
    """Compiles, the reference product and the rest of the set-up happen before the exclusive
    hold (set-up GPU work sharing the lock), so that other graders wait for this timing's
    launches only; the hold is logged when the grader asks (scripts/gpu/throughput.py)."""
    from course.runtime import gpulock

    monkeypatch.setenv(gpulock.LOCK_ENV, str(tmp_path))
    monkeypatch.setenv(gpulock.LOG_ENV, "1")
    lock = gpulock.current()
    seen: list[tuple[str, str | None]] = []
    real_verifier = timing.GemmVerifier

    def verifier(*args, **kwargs):
        seen.append(("reference", lock.mode))
        return real_verifier(*args, **kwargs)

    def compile_for(kernel, args):
        seen.append(("compile", lock.mode))
        return False

    class Clock(FakeClock):
        def measure(self, fn, batch):
            seen.append(("timed", lock.mode))
            return super().measure(fn, batch)

    monkeypatch.setattr(timing, "GemmVerifier", verifier)
    monkeypatch.setattr(timing, "compile_for", compile_for)
    monkeypatch.setattr(timing, "CudaEventClock", Clock)
    good = bundle_from_objects({"make_gemm_tiled": kft.make_gemm_tiled,
                                "gemm_naive": kft.gemm_naive})
    assert speedup.speedup_task(good, size=24, tile=4, repeats=2, seed=0,
                                 check_shape=(9, 7, 5))["verified"]
    assert seen[0] == ("reference", "shared")
    assert seen[1:3] == [("compile", None)] * 2  # tiled and naive, holding nothing
    assert set(seen[3:]) == {("timed", "exclusive")} and len(seen[3:]) == 2 * 2
    assert lock.mode is None
    waited, held = (float(x) for x in (tmp_path / gpulock.HOLDS_LOG).read_text().split())
    assert waited >= 0 and held > 0


def test_compile_for_does_nothing_on_the_simulator():
    from course.gemm.launch import compile_for

    assert compile_for(kft.gemm_naive, ()) is False


# --------------------------------------------------------------------------- real GPU


@pytest.mark.gpu
def test_tiled_is_faster_than_naive_on_a_real_gpu():
    b = backend.detect()
    if b.kind != "gpu":
        pytest.skip(f"needs a real CUDA GPU: this runs on {b.kind} ({b.reason})")
    n = 1024
    # time_gemm keys results by GemmKernel.name, which is the same for every factory at one
    # tile: give the slow variant its own name.
    slow = dataclasses.replace(tiled(kft.make_gemm_tiled_global_inner, 32), name="global inner")
    gemms = [naive(kft.gemm_naive), tiled(kft.make_gemm_tiled, 32), slow]
    t = time_gemm(gemms, n, n, n, repeats=10, seed=0)
    assert set(t) == {"gemm_naive", "make_gemm_tiled(32)", "global inner"}
    naive_ms = t["gemm_naive"].median_ms
    tiled_ms = t["make_gemm_tiled(32)"].median_ms
    assert tiled_ms < naive_ms, t
    assert tiled_ms < t["global inner"].median_ms, t
    assert t["gemm_naive"].gflops > 0 and t["gemm_naive"].repeats == 10


@pytest.mark.gpu
def test_check_speedup_on_a_real_gpu():
    b = backend.detect()
    if b.kind != "gpu":
        pytest.skip(f"needs a real CUDA GPU: this runs on {b.kind} ({b.reason})")
    n = 1024
    # Passes the correct tiled kernel (≈5.5× on an H200 at 1024³) and fails a "tiled" kernel
    # that multiplies from global memory (≈0.8×).
    report = check_speedup(kft.make_gemm_tiled, kft.gemm_naive, size=n, repeats=10)
    assert report.vs_own_naive >= SPEEDUP_THRESHOLD
    with pytest.raises(SpeedupCheckError):
        check_speedup(kft.make_gemm_tiled_global_inner, kft.gemm_naive, size=n, repeats=10)


def test_exact_checks_verify_every_timed_batch_of_a_streaming_kernel():
    import numpy as np
    from numba import cuda

    from course.perf.verify import exact_check

    @cuda.jit
    def add(a, b, c):
        for i in range(cuda.grid(1), c.size, cuda.gridsize(1)):
            c[i] = a[i] + b[i]

    @cuda.jit
    def add_half(a, b, c):  # forgets the second half
        for i in range(cuda.grid(1), c.size // 2, cuda.gridsize(1)):
            c[i] = a[i] + b[i]

    a = np.arange(40, dtype=np.float32)
    b = np.ones(40, dtype=np.float32)
    da, db, dc = cuda.to_device(a), cuda.to_device(b), cuda.device_array(40, np.float32)
    check = exact_check(dc, a + b, "c")
    t = time_launch(lambda: add[1, 8](da, db, dc), "add", repeats=2, warmup=1, batch=2,
                    check=check, clock=FakeClock())
    assert t.repeats == 2
    with pytest.raises(timing.UnverifiedTimingError, match="20 of 40 elements of c are wrong"):
        time_launch(lambda: add_half[1, 8](da, db, dc), "half", repeats=2, warmup=1,
                    check=check, clock=FakeClock())
