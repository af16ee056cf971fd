"""The one timing helper of the course: CUDA events, warm-up, repeats, median.

Kernel launches are asynchronous, so a host clock around a launch measures almost nothing.
CUDA events are recorded *in the GPU's stream* before and after each launch; the time
between them is what the GPU spent. The first launch also pays for JIT compilation, so a
few warm-up launches run first and are not counted. The median of many launches resists
the odd slow one (another process, a clock change).

A launch from Python also costs the *host* tens of microseconds (argument checks, marshalling).
If the GPU is idle when the first event is recorded, that event fires at once and the clock
runs while the host is still preparing the launch, so the host's cost is counted as kernel
time, a sizeable error for a kernel of a few hundred microseconds. ``batch`` queues
several launches between one pair of events; the GPU then runs them back to back, only the
first one's host cost falls inside the clock, and it is shared by all of them.

Only what is verified is timed: before every timed sample an :class:`OutputCheck` poisons the
kernel's output, after it the check looks at what *those* launches computed. A kernel that
is lazy, partial or shape-dependent at the timed size (right on the small shapes the
correctness checks use, fast because it skips work here) fails with
:class:`UnverifiedTimingError` instead of reporting an impossible speed.

The simulator cannot time anything: its "GPU" is Python code running one thread at a time.
Timing there raises :class:`course.runtime.backend.NoGPUError` instead of returning a made-up
number (tests pass a fake :class:`Clock` to exercise the verification on the simulator).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from course.gemm.launch import compile_for, quiet_numba
from course.gemm.operands import random_operands
from course.perf.budget import LaunchBudget, TimingBudgetExceeded
from course.perf.verify import GemmVerifier, OutputCheck, UnverifiedTimingError, warm_reference
from course.runtime import backend, gpulock, gpusync
from course.runtime.i18n import _

__all__ = ["Clock", "CudaEventClock", "GemmTiming", "LaunchBudget", "OutputCheck", "Timing",
           "TimingBudgetExceeded", "UnverifiedTimingError", "time_gemm", "time_launch",
           "time_launches"]


@dataclass(frozen=True)
class Timing:
    """Milliseconds per launch and the rate they imply."""

    label: str
    median_ms: float
    min_ms: float
    max_ms: float
    repeats: int
    gflops: float  # at the median; 0 when no FLOP count was given
    gbs: float  # at the median; 0 when no byte count was given

    def __str__(self) -> str:
        rate = f", {self.gflops:,.0f} GFLOP/s" if self.gflops else ""
        rate += f", {self.gbs:,.0f} GB/s" if self.gbs else ""
        return _("{label}: median {median_ms:.4f} ms (min {min_ms:.4f}, max {max_ms:.4f}, "
                 "{repeats} runs){rate}").format(
            label=self.label, median_ms=self.median_ms, min_ms=self.min_ms,
            max_ms=self.max_ms, repeats=self.repeats, rate=rate)


def _summarise(label: str, times_ms: Sequence[float], flops: float, nbytes: float) -> Timing:
    arr = np.asarray(times_ms, dtype=np.float64)
    med = float(np.median(arr))
    return Timing(label, med, float(arr.min()), float(arr.max()), len(arr),
                  flops / (med * 1e6) if flops and med > 0 else 0.0,
                  nbytes / (med * 1e6) if nbytes and med > 0 else 0.0)


class Clock(Protocol):
    """Measures ``batch`` calls of ``fn``; returns milliseconds for all of them. A clock may
    also have ``synchronize()`` (wait for the device), else Numba's is used."""

    def measure(self, fn: Callable[[], None], batch: int) -> float: ...


class CudaEventClock:
    """The GPU's own clock: a pair of CUDA events around the launches (see module docstring)."""

    def __init__(self) -> None:
        backend.require_gpu("Timing kernels")

    def measure(self, fn: Callable[[], None], batch: int) -> float:
        from numba import cuda

        start, end = cuda.event(timing=True), cuda.event(timing=True)
        start.record()
        for _i in range(batch):
            fn()
        end.record()
        gpusync.wait_for_event(end, cuda.synchronize)  # blocks rather than spins
        return float(cuda.event_elapsed_time(start, end))


def time_launches(launches: Mapping[str, Callable[[], None]], *, repeats: int = 20,
                  warmup: int = 3, flops: float | dict[str, float] = 0.0,
                  nbytes: float | dict[str, float] = 0.0, batch: int = 1,
                  checks: Mapping[str, OutputCheck] | None = None,
                  clock: Clock | None = None, budget: LaunchBudget | None = None
                  ) -> dict[str, Timing]:
    """Time several launch functions, interleaved, each with its own pair of CUDA events.

    Interleaving (a, b, c, a, b, c, …) exposes all of them to the same clock and thermal
    state, so their *ratios* are fair even when absolute times drift. Each sample is
    ``batch`` launches between one pair of events, divided by ``batch`` (see the module
    docstring: it hides the host's launch cost from short kernels). ``flops`` and ``nbytes``
    are per launch. ``checks[name]`` verifies every sample of ``name`` (poisoned output
    before, checked after); a failed check raises :class:`UnverifiedTimingError`.

    ``budget`` (:mod:`course.perf.budget`): the launches must end within a time derived from
    ``budget.reference``'s own launch, measured first; a kernel that hangs or crawls is stopped
    there with a reason (:class:`TimingBudgetExceeded`, or the check process ends).
    """
    clock = clock or CudaEventClock()
    if repeats < 1 or warmup < 0 or batch < 1:
        raise ValueError(f"repeats and batch must be ≥ 1 and warmup ≥ 0, got repeats="
                         f"{repeats}, batch={batch}, warmup={warmup}")
    checks = checks or {}
    unknown = set(checks) - set(launches)
    if unknown:
        raise ValueError(f"checks for launches that are not timed: {sorted(unknown)}")
    sync = getattr(clock, "synchronize", _synchronize)
    if budget is None:
        samples = _sample(launches, repeats, warmup, batch, checks, clock, sync, None)
    else:
        per_kernel = (warmup + repeats) * batch
        budget.start(per_kernel * len(launches) + 1, per_kernel)
        try:
            samples = _sample(launches, repeats, warmup, batch, checks, clock, sync, budget)
        finally:
            budget.stop()
        budget.check()

    def pick(v: float | dict[str, float], name: str) -> float:
        return v.get(name, 0.0) if isinstance(v, dict) else v

    return {name: _summarise(name, s, pick(flops, name), pick(nbytes, name))
            for name, s in samples.items()}


def _sample(launches: Mapping[str, Callable[[], None]], repeats: int, warmup: int, batch: int,
            checks: Mapping[str, OutputCheck], clock: Clock, sync: Callable[[], None],
            budget: LaunchBudget | None) -> dict[str, list[float]]:
    """Warm up, then take ``repeats`` interleaved samples of every launch (see above)."""
    if budget is not None and budget.reference in launches:
        ref = launches[budget.reference]
        budget.running(budget.reference)
        for _i in range(warmup):
            ref()
        sync()
        # The deadline is wall time: calibrate from the launch's wall time too (the events'
        # time where that is longer), so a clock that reads short cannot shrink the budget.
        started = budget.now()
        event_ms = clock.measure(ref, 1)
        sync()
        budget.calibrate(max(event_ms, (budget.now() - started) * 1e3))
        budget.check()
    for name, fn in launches.items():
        if budget is not None:
            budget.running(name)
        for _i in range(warmup):
            fn()
        if budget is not None:  # one kernel at a time: the reason names the one that hangs
            sync()
            budget.check()
    sync()
    samples: dict[str, list[float]] = {name: [] for name in launches}
    for sample in range(repeats):
        for name, fn in launches.items():
            check = checks.get(name)
            if check is not None:
                check.poison()
                sync()
            if budget is not None:
                budget.running(name)
            samples[name].append(clock.measure(fn, batch) / batch)
            if budget is not None:
                budget.check()
            if check is not None:
                problem = check.check()
                if problem:
                    raise UnverifiedTimingError(_(
                        "{name}: what the timed launches computed is wrong ({problem}); seen "
                        "in timed run {run} of {repeats}, so its time would mean nothing"
                    ).format(name=name, problem=problem, run=sample + 1, repeats=repeats))
    return samples


def _synchronize() -> None:
    from numba import cuda

    cuda.synchronize()


def time_launch(fn: Callable[[], None], label: str = "kernel", *, repeats: int = 20,
                warmup: int = 3, flops: float = 0.0, nbytes: float = 0.0, batch: int = 1,
                check: OutputCheck | None = None, clock: Clock | None = None) -> Timing:
    """Time one launch function (see :func:`time_launches`)."""
    return time_launches({label: fn}, repeats=repeats, warmup=warmup, flops=flops,
                         nbytes=nbytes, batch=batch, checks={label: check} if check else None,
                         clock=clock)[label]


class GemmTiming:
    """A GEMM timing set up and ready to run: :func:`time_gemm` in two halves.

    Building it does everything that is not the timed launches themselves: the operands and
    their float64 reference (CuPy), every kernel compiled for the timed arrays, each kernel's
    output, and the verification kernel compiled. :meth:`run` then only warms up, times and
    verifies. The speedup checks build it *before* they take the GPU alone
    (:func:`course.runtime.gpulock.exclusive`), so that another student's timing never waits
    for this one's compiles and imports (seconds of CPU) — only for its launches. The set-up's
    own GPU work (copies, the reference product) holds the lock shared, like any check.
    """

    def __init__(self, gemms: Sequence, M: int, N: int, K: int, *, seed: int | None = None):
        from numba import cuda

        names = [gk.name for gk in gemms]
        if len(set(names)) != len(names):
            raise ValueError(f"each kernel needs its own name to be timed, got {names}")
        self.M, self.N, self.K = M, N, K
        self.A, self.B = random_operands(M, N, K, np.random.default_rng(seed))
        warm_reference()  # CuPy's imports and compiles, before the lock
        with gpulock.shared_launch() as took_lock:  # copies and the reference product
            self.verifier = verifier = GemmVerifier(self.A, self.B)
            outputs = {name: cuda.device_array((M, N), dtype=np.float32) for name in names}
            if took_lock:
                cuda.synchronize()
        dA, dB = verifier.dA, verifier.dB
        self.launches: dict[str, Callable[[], None]] = {}
        self.checks: dict[str, OutputCheck] = {}
        for gk in gemms:
            cfg = gk.launch_for(M, N)
            dC = outputs[gk.name]
            compile_for(gk.kernel, (dA, dB, dC))
            verifier.compile_check(dC)

            def run(gk=gk, cfg=cfg, dC=dC) -> None:
                with quiet_numba():
                    gk.kernel[cfg.grid, cfg.block](dA, dB, dC)

            self.launches[gk.name] = run
            self.checks[gk.name] = verifier.output_check(
                dC, block=gk.out_tile or gk.tile or 16,
                naive=gk.tile is None and gk.out_tile is None)

    def run(self, *, repeats: int = 20, warmup: int = 3, batch: int = 1,
            clock: Clock | None = None, budget: LaunchBudget | None = None
            ) -> dict[str, Timing]:
        """Warm up, time and verify every launch (:func:`time_launches`); then check that A and
        B are unchanged."""
        timings = time_launches(self.launches, repeats=repeats, warmup=warmup,
                                flops=2.0 * self.M * self.N * self.K, batch=batch,
                                checks=self.checks, clock=clock or CudaEventClock(),
                                budget=budget)
        problem = self.verifier.inputs_changed()
        if problem:
            raise UnverifiedTimingError(problem)
        return timings


def time_gemm(gemms: Sequence, M: int, N: int, K: int, *, repeats: int = 20, warmup: int = 3,
              seed: int | None = None, batch: int = 1, clock: Clock | None = None,
              budget: LaunchBudget | None = None) -> dict[str, Timing]:
    """Time GEMM kernels (:class:`course.gemm.launch.GemmKernel`) on the same fresh random inputs.

    Every timed sample of every kernel is verified against a float64 reference (tolerance
    scaled for K), each kernel writing its own output; A and B are checked unchanged at the
    end. See :mod:`course.perf.verify`, and :class:`GemmTiming` for the same in two halves.
    """
    clock = clock or CudaEventClock()
    return GemmTiming(gemms, M, N, K, seed=seed).run(repeats=repeats, warmup=warmup,
                                                      batch=batch, clock=clock, budget=budget)
