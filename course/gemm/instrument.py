"""Watch a kernel run on Numba's CUDA simulator: count global reads, find shared-memory races.

The simulator runs every CUDA thread as Python code, so it can see each array access.
This module uses that to measure two things a GPU hides:

* **Global-memory traffic.** A and B are wrapped in arrays that count every element read.
  The naive kernel reads 2·M·N·K elements; a tiled kernel about 2·M·N·K / tile.
* **Barrier bugs.** Shared arrays are wrapped so each access is stamped with the thread and
  its *barrier epoch* (how many ``cuda.syncthreads()`` it has passed). Within one block,
  a thread that reads an element another thread wrote in the same epoch raced with it
  (a missing barrier after the tile loads); a thread that overwrites an element another
  thread read in the same epoch raced too (a missing barrier after the multiply loop).
  The verdict does not depend on how the simulator happened to schedule the threads.

Only meaningful under ``NUMBA_ENABLE_CUDASIM=1``; :mod:`course.trust.runner` runs it in a
separate simulator process when the notebook itself runs on a GPU.
"""

from __future__ import annotations

import contextlib
import linecache
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from course.gemm.launch import check_operands, quiet_numba
from course.gemm.operands import C_POISON_BITS, Access
from course.runtime.i18n import N_, _
from course.runtime.simulator import current_simulated_thread, thread_class

MAX_REPORTED = 5
_BARRIER_HINT = N_(
    "a tiled kernel needs one barrier after loading the tiles (so nobody reads a tile "
    "element before it is stored) and one after the multiply loop (so nobody overwrites a "
    "tile element another thread is still using)"
)

#: the barrier a thread went without, when only one was (RunReport.missing_barriers)
_MISSING_BARRIER = {
    "after_load": N_("the barrier after loading the tiles is missing: call cuda.syncthreads() "
                     "between the loads and the multiply loop, so nobody reads a tile element "
                     "before it is stored"),
    "after_multiply": N_("the barrier after the multiply loop is missing: call "
                         "cuda.syncthreads() after it, so nobody overwrites a tile element "
                         "another thread is still using"),
}


def missing_barrier_hint(which: str) -> str:
    """The sentence for a barrier a thread went without ("after_load", "after_multiply")."""
    return _(_MISSING_BARRIER[which])


@dataclass
class RunReport:
    """What an instrumented launch saw."""

    reads_a: int = 0
    reads_b: int = 0
    races: list[str] = field(default_factory=list)
    uninitialised: list[str] = field(default_factory=list)
    #: barriers a thread went without: "after_load" (it read shared memory in the same
    #: barrier interval as it stored its part of the tile), "after_multiply" (it stored into
    #: shared memory in the same interval as it read from it). Per thread, so whatever the
    #: schedule.
    missing_barriers: set[str] = field(default_factory=set)
    #: the first access past the end of A, B or C (the simulator's own error names neither)
    out_of_range: list[Access] = field(default_factory=list)
    _last: dict[Any, tuple[int, int]] = field(default_factory=dict)  # thread -> (write, read)

    @property
    def reads(self) -> int:
        return self.reads_a + self.reads_b


class _Counter:
    """Counts without a lock: ``list.append`` is atomic under the GIL, and hundreds of
    simulator threads queueing on a lock made instrumented runs 20× slower."""

    def __init__(self) -> None:
        self._parts: list[int] = []

    def add(self, n: int) -> None:
        self._parts.append(n)

    @property
    def value(self) -> int:
        return sum(self._parts)


def _thread_identity() -> tuple[tuple[int, ...], tuple[int, ...], int]:
    t = current_simulated_thread()
    block = tuple(getattr(t, "blockIdx", (0, 0, 0)))
    thread = tuple(getattr(t, "threadIdx", (0, 0, 0)))
    return block, thread, getattr(t, "_course_epoch", 0)


class _TrackedShared:
    """A shared array that stamps every element access with (block, thread, epoch)."""

    def __init__(self, array: np.ndarray, name: str, report: RunReport):
        # No lock around the bookkeeping (see _Counter): each dict operation is atomic
        # under the GIL, and readers are copied with list() before they are iterated.
        self._a = array
        self._name = name
        self._report = report
        # element -> (block, writer thread, epoch); element -> {reader thread: epoch}
        self._writes: dict[int, tuple[Any, Any, int]] = {}
        self._reads: dict[int, dict[Any, int]] = {}
        self.shape, self.dtype = array.shape, array.dtype
        self.size, self.ndim = array.size, array.ndim

    def _flat(self, idx: Any) -> int | None:
        if not isinstance(idx, tuple):
            idx = (idx,)
        if len(idx) != self._a.ndim or not all(isinstance(i, (int, np.integer)) for i in idx):
            return None  # slices and the like: not tracked
        flat = 0
        for i, n in zip(idx, self._a.shape, strict=True):
            if not 0 <= i < n:
                return None  # the array access itself raises IndexError
            flat = flat * n + int(i)
        return flat

    def _note(self, kind: str, where: list[str], text: str) -> None:
        if len(where) < MAX_REPORTED:
            where.append(text)
        elif len(where) == MAX_REPORTED:
            where.append("…")

    def __getitem__(self, idx: Any) -> Any:
        value = self._a[idx]
        flat = self._flat(idx)
        if flat is None:
            return value
        block, thread, epoch = _thread_identity()
        last_write, _read = self._report._last.get((block, thread), (-1, -1))
        if last_write == epoch:
            self._report.missing_barriers.add("after_load")
        self._report._last[(block, thread)] = (last_write, epoch)
        w = self._writes.get(flat)
        if w is None or w[0] != block:
            self._note("uninit", self._report.uninitialised,
                       _("thread {thread} read {name}{index} before any thread of its block "
                         "(block {block}) wrote it: load (or zero-pad) every tile element "
                         "before cuda.syncthreads(), then read").format(
                           thread=thread[:2], name=self._name, index=idx, block=block[:2]))
        elif w[1] != thread and w[2] == epoch:
            self._note("race", self._report.races,
                       _("thread {thread} read {name}{index} that thread {other} wrote with "
                         "no cuda.syncthreads() in between (block {block}): {hint}").format(
                           thread=thread[:2], name=self._name, index=idx, other=w[1][:2],
                           block=block[:2], hint=_(_BARRIER_HINT)))
        self._reads.setdefault(flat, {})[(block, thread)] = epoch
        return value

    def __setitem__(self, idx: Any, value: Any) -> None:
        flat = self._flat(idx)
        if flat is not None:
            block, thread, epoch = _thread_identity()
            _write, last_read = self._report._last.get((block, thread), (-1, -1))
            if last_read == epoch:
                self._report.missing_barriers.add("after_multiply")
            self._report._last[(block, thread)] = (epoch, last_read)
            # list() copies in one step under the GIL; other threads may add readers.
            for (rblock, reader), repoch in list(self._reads.get(flat, {}).items()):
                if rblock == block and reader != thread and repoch == epoch:
                    self._note("race", self._report.races,
                               _("thread {thread} wrote {name}{index}, which thread {other} "
                                 "read with no cuda.syncthreads() in between (block {block}): "
                                 "{hint}").format(thread=thread[:2], name=self._name,
                                                  index=idx, other=reader[:2],
                                                  block=block[:2], hint=_(_BARRIER_HINT)))
                    break
            w = self._writes.get(flat)
            if w is not None and w[0] == block and w[1] != thread and w[2] == epoch:
                self._note("race", self._report.races,
                           _("threads {other} and {thread} both wrote {name}{index} in the "
                             "same barrier interval").format(other=w[1][:2], thread=thread[:2],
                                                            name=self._name, index=idx))
            self._writes[flat] = (block, thread, epoch)
            self._reads[flat] = {}
        self._a[idx] = value


@contextlib.contextmanager
def _instrumented_simulator(report: RunReport) -> Iterator[None]:
    """Patch the simulator's shared arrays and barrier for the duration of one launch."""
    from numba.cuda.simulator import kernelapi

    alloc_lock = threading.Lock()
    original_array = kernelapi.FakeCUDAShared.array
    threads = thread_class()
    original_sync = threads.syncthreads

    def array(self: Any, shape: Any, dtype: Any, alignment: Any = None) -> Any:
        if shape == 0 or alignment is not None:
            return original_array(self, shape, dtype, alignment)
        frame = sys._getframe(1)  # the kernel line that asked (not a walk of the whole stack)
        caller = (frame.f_code.co_filename, frame.f_lineno)
        with alloc_lock:  # every thread of the block must get the same array
            return _allocate(self, shape, dtype, caller)

    def _allocate(self: Any, shape: Any, dtype: Any, caller: tuple[str, int]) -> Any:
        res = self._allocations.get(caller)
        if res is None:
            from numba.core import types
            from numba.np import numpy_support

            if isinstance(dtype, types.Type):
                dtype = numpy_support.as_dtype(dtype)
            np_dtype = np.dtype(dtype)
            data = np.full(shape, np.nan, np_dtype) if np_dtype.kind == "f" else \
                np.zeros(shape, np_dtype)
            line = linecache.getline(*caller).strip()
            name = line.split("=")[0].strip() if "=" in line else ""
            name = name if name.isidentifier() else f"shared array #{len(self._allocations)}"
            res = _TrackedShared(data, name, report)
            self._allocations[caller] = res
        return res

    def syncthreads(self: Any) -> None:
        original_sync(self)
        self._course_epoch = getattr(self, "_course_epoch", 0) + 1

    kernelapi.FakeCUDAShared.array = array
    threads.syncthreads = syncthreads
    try:
        yield
    finally:
        kernelapi.FakeCUDAShared.array = original_array
        threads.syncthreads = original_sync


def _counting_array(data: np.ndarray, counter: _Counter | None, name: str,
                    report: RunReport) -> Any:
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

    def note(idx: Any, write: bool) -> None:
        if not report.out_of_range:
            block, thread, _epoch = _thread_identity()
            index = tuple(int(i) for i in idx) if isinstance(idx, tuple) else int(idx)
            report.out_of_range.append(Access(name, index, write, (thread[0], thread[1]),
                                              (block[0], block[1])))

    class CountingArray(FakeCUDAArray):
        """A simulator device array that counts the elements read through it and notes the
        first access past its end."""

        def __getitem__(self, idx: Any) -> Any:
            try:
                ret = super().__getitem__(idx)
            except IndexError:
                note(idx, False)
                raise
            if counter is not None:
                counter.add(ret.size if isinstance(ret, FakeCUDAArray) else 1)
            return ret

        def __setitem__(self, idx: Any, value: Any) -> None:
            try:
                super().__setitem__(idx, value)
            except IndexError:
                note(idx, True)
                raise

    return CountingArray(data)


def instrumented_run(gemm: Any, A: np.ndarray, B: np.ndarray,
                     report: RunReport | None = None) -> tuple[np.ndarray, RunReport]:
    """Launch a :class:`course.gemm.launch.GemmKernel` on the simulator, watching every access.

    Returns C (poisoned with NaN before the launch) and the report (``report``, when given, is
    filled in: what it saw before an error is there too). Errors raised by the kernel (such as
    an out-of-bounds index) propagate to the caller.
    """
    M, N, _k = check_operands(A, B)
    report = report if report is not None else RunReport()
    count_a, count_b = _Counter(), _Counter()
    dA, dB = _counting_array(A, count_a, "A", report), _counting_array(B, count_b, "B", report)

    # The same marked NaN as the checks use, so "never written" is told apart from "NaN".
    C = np.full((M, N), C_POISON_BITS, dtype=np.uint32).view(np.float32)
    cfg = gemm.launch_for(M, N)
    with _instrumented_simulator(report), quiet_numba():
        gemm.kernel[cfg.grid, cfg.block](dA, dB, _counting_array(C, None, "C", report))
    report.reads_a, report.reads_b = count_a.value, count_b.value
    if len(report.missing_barriers) == 1:
        which = _(_MISSING_BARRIER[next(iter(report.missing_barriers))])
        report.races = [r.replace(_(_BARRIER_HINT), which) for r in report.races]
    return C, report
