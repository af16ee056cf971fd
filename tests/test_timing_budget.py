"""The timed launches' budget (course/perf/budget.py): a kernel that hangs or crawls at the timed
size holds the GPU only as long as the reference naive kernel says it should.

On the CPU the launches are stand-ins and so is the clock: each launch advances a fake
monotonic clock by its "milliseconds", and a hanging launch blocks until the watchdog gives up
on it (as ending the check process would stop a real hung kernel). On a GPU, a kernel that
really spins is timed through the speedup check's own process.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import pytest

from course.checks.speedup import timing_budget
from course.perf.budget import FLOOR_S, MULTIPLE, LaunchBudget, TimingBudgetExceeded
from course.perf.timing import time_launches
from course.runtime import backend


class StandInClock:
    """A fake monotonic clock; launches made with :meth:`launch` advance it by their time."""

    def __init__(self) -> None:
        self.t = 0.0
        self.stopped = threading.Event()  # what ending the check process does to a hung kernel
        self.launched: list[str] = []

    def now(self) -> float:
        return self.t

    def synchronize(self) -> None:
        pass

    def launch(self, name: str, ms: float | None):
        """A launch taking ``ms`` on the fake clock; ``None``: it never ends by itself."""

        def run() -> None:
            self.launched.append(name)
            if ms is None:
                self.t += 1e6
                assert self.stopped.wait(10), "the watchdog never stopped the hung kernel"
            else:
                self.t += ms / 1e3
            self._last = ms or 0.0

        return run

    def measure(self, fn, batch: int) -> float:
        for _ in range(batch):
            fn()
        return self._last * batch


def budget_for(clock: StandInClock, reasons: list[str], **kw) -> LaunchBudget:
    """The speedup check's own budget, on the stand-in clock; an overrun stops the hung launch."""

    def stop(reason: str) -> None:
        reasons.append(reason)
        clock.stopped.set()

    return dataclasses.replace(timing_budget(["tiled", "own naive", "reference naive"], 2048),
                               **{"on_overrun": stop, "now": clock.now, "poll_s": 0.01, **kw})


def test_correct_kernels_finish_within_the_budget_derived_from_the_reference():
    clock, reasons = StandInClock(), []
    budget = budget_for(clock, reasons)
    launches = {"tiled": clock.launch("tiled", 2.2), "own naive": clock.launch("own naive", 13),
                "reference naive": clock.launch("reference naive", 13)}
    t = time_launches(launches, repeats=20, clock=clock, budget=budget)
    assert t["tiled"].median_ms == pytest.approx(2.2) and not reasons
    # 3 kernels × (3 warm-up + 20 timed) launches + the reference's measuring launch
    assert budget.seconds == pytest.approx(FLOOR_S + MULTIPLE * 0.013 * (3 * 23 + 1))
    assert clock.launched[:4] == ["reference naive"] * 4  # measured first, before any other


def test_a_tiled_kernel_that_hangs_is_stopped_with_a_plain_reason():
    clock, reasons = StandInClock(), []
    budget = budget_for(clock, reasons)
    launches = {"tiled": clock.launch("tiled", None), "own naive": clock.launch("own naive", 13),
                "reference naive": clock.launch("reference naive", 13)}
    with pytest.raises(TimingBudgetExceeded) as err:
        time_launches(launches, repeats=20, clock=clock, budget=budget)
    assert reasons == [str(err.value)] and err.value.kernel == "tiled"
    seconds = FLOOR_S + MULTIPLE * 0.013 * 70
    assert str(err.value).startswith(
        f"your tiled kernel did not finish its 23 launches at 2048³ within {seconds:.0f} s; "
        "the course's naive kernel takes 0.30 s for as many")


def test_a_kernel_that_crawls_is_stopped_in_the_timed_launches():
    """Not hung, only slow: 100× the reference per launch overruns in the timed samples."""
    clock, reasons = StandInClock(), []
    budget = budget_for(clock, reasons, on_overrun=None)  # no handler: the timing raises

    def crawl() -> None:
        clock.t += 1.3
        clock._last = 1300.0
        time.sleep(0.02)  # let the watchdog look

    launches = {"reference naive": clock.launch("reference naive", 13), "own naive": crawl}
    with pytest.raises(TimingBudgetExceeded,
                       match="your naive kernel did not finish its 23") as err:
        time_launches(launches, repeats=20, clock=clock, budget=budget)
    # which launch overran travels with the reason (the speedup then leaves it out: issue 32)
    assert err.value.kernel == "own naive" and budget.expired.kernel == "own naive"


def test_a_hung_reference_is_stopped_at_the_floor():
    clock, reasons = StandInClock(), []
    budget = budget_for(clock, reasons)
    launches = {"tiled": clock.launch("tiled", 2.0),
                "reference naive": clock.launch("reference naive", None)}
    with pytest.raises(TimingBudgetExceeded, match=f"did not finish its first launches at "
                                                   f"2048³ within {FLOOR_S:.0f} s"):
        time_launches(launches, repeats=5, clock=clock, budget=budget)


def test_a_check_process_that_overruns_ends_with_the_reason_as_its_result(tmp_path):
    """What frees the GPU: the check process writes the verdict and exits, whatever its main
    thread is blocked in (here a sleep stands in for waiting on a kernel that never ends)."""
    result = tmp_path / "result.json"
    code = textwrap.dedent(f"""
        import time
        from course.perf import budget
        budget.exit_on_overrun({str(result)!r})
        b = budget.LaunchBudget(reference="r", size="2048³", labels={{"t": "your tiled kernel"}},
                                floor_s=0.3)
        b.start(10, 5)
        b.running("t")
        time.sleep(60)
    """)
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], timeout=30, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - started < 20
    written = json.loads(result.read_text())
    assert written["error"].startswith(
        "your tiled kernel did not finish its first launches at 2048³ within 0 s")
    assert written["overran"] == "t"  # the launch it stopped, for the speedup check


@pytest.mark.gpu
def test_a_spinning_tiled_kernel_is_stopped_within_its_budget_on_the_gpu():
    """Through the speedup check's own task, on a real GPU: a tiled kernel correct on the
    check shape that spins forever at 2048³ ends the task within the budget."""
    if backend.detect().kind != "gpu":
        pytest.skip(f"needs a CUDA GPU ({backend.detect().reason})")
    import kernels_for_tests as kft

    from course.trust.kernel_source import bundle_from_objects

    student = bundle_from_objects({"make_gemm_tiled": kft.make_gemm_tiled_spins_at_large_k,
                                   "gemm_naive": kft.gemm_naive})
    job = {"task": "speedup", "bundles": {"student": student.to_json()}, "size": 2048,
           "tile": 32, "repeats": 20, "seed": 1}
    with tempfile.TemporaryDirectory() as tmp:
        jp, rp = pathlib.Path(tmp, "job.json"), pathlib.Path(tmp, "result.json")
        jp.write_text(json.dumps(job))
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "course._isolated", str(jp), str(rp)], timeout=300)
        took = time.monotonic() - started
        out = json.loads(rp.read_text())
    assert "your tiled kernel did not finish its 23 launches at 2048³" in out["error"]
    assert took < 60, f"the hung kernel held the GPU {took:.0f} s"


def test_a_clock_that_reads_short_cannot_shrink_the_budget():
    """The deadline is wall time: the reference's launch is also timed by the wall clock, and
    the longer of the two sets the budget (a stand-in clock that reads 0 ms, as in tests of
    the speedup on the simulator, gave a 10 s budget that slow simulated launches overran)."""

    class ReadsZero(StandInClock):
        def measure(self, fn, batch: int) -> float:
            super().measure(fn, batch)
            return 0.0

    clock, reasons = ReadsZero(), []
    budget = budget_for(clock, reasons)
    launches = {"tiled": clock.launch("tiled", 2.2), "own naive": clock.launch("own naive", 13),
                "reference naive": clock.launch("reference naive", 13)}
    time_launches(launches, repeats=20, clock=clock, budget=budget)
    assert not reasons
    assert budget.seconds == pytest.approx(FLOOR_S + MULTIPLE * 0.013 * (3 * 23 + 1))


def test_off_a_gpu_the_speedup_timing_has_no_budget():
    from course.checks.speedup import gpu_timing_budget

    assert gpu_timing_budget(["tiled", "own naive"], 40) is None  # this machine: the simulator


def test_the_budget_blames_the_kernel_that_used_it_not_the_one_running_at_the_deadline():
    """Timed interleaved, a crawling naive kernel can use nearly all of the budget while the
    deadline falls during a tiled launch: the overrun is the naive kernel's (issue 32's
    second timing depends on it), and so is the reason."""
    clock, reasons = StandInClock(), []
    budget = budget_for(clock, reasons, floor_s=10.0)
    budget.start(launches=3, per_kernel=1)
    budget.running("own naive")
    clock.t += 9.5  # the naive kernel crawls through most of the budget
    budget.running("tiled")
    clock.t += 0.2
    assert budget.culprit() == "own naive"
    clock.t += 1.0  # the deadline passes during the tiled launch
    deadline = time.monotonic() + 5
    while not reasons and time.monotonic() < deadline:
        time.sleep(0.01)
    budget.stop()
    assert budget.expired is not None and budget.expired.kernel == "own naive"
    assert "your naive kernel" in reasons[0] and "tiled" not in reasons[0].split(" did ")[0]
