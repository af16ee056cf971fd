"""Changes to Numba's CUDA simulator: the kernel API in any spelling, and blocks run as
greenlets instead of threads (the arrays a kernel allocates: :mod:`course.runtime.sim_arrays`).

Numba simulates each CUDA thread with a Python thread, and a block's threads spend most of
their time handing the interpreter to each other at barriers: a 64 × 64 tiled GEMM took about
6 CPU-seconds. :func:`run_blocks_as_greenlets` runs the threads of a block as greenlets in the
launching thread instead (each runs until its next ``cuda.syncthreads()`` or its end, in thread
order, and the barrier opens when every running thread has reached it): the same kernel takes
about 0.3 CPU-s, a launch always interleaves its threads the same way, and an interrupt (a
time limit, the stop button) lands in the kernel's own code instead of leaving threads
spinning behind it.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

try:  # a requirement of the course package; without it blocks run as Numba's threads
    import greenlet as _greenlet
except ImportError:  # pragma: no cover - greenlet is a declared dependency
    _greenlet = None

#: names of the kernel API that a real GPU resolves through ``numba.cuda`` in any spelling.
KERNEL_API = (
    "grid", "gridsize", "threadIdx", "blockIdx", "blockDim", "gridDim", "laneid", "warpsize",
    "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or", "shared", "local",
    "const", "atomic", "fma", "selp", "cbrt", "brev", "clz", "ffs", "popc", "fp16",
    "threadfence", "threadfence_block", "threadfence_system", "cg",
)


class _KernelApiProxy:
    """Stands for ``numba.cuda.<name>`` on the simulator, resolved in the running kernel.

    Numba's simulator swaps the kernel API in only where a kernel's globals hold the
    ``numba.cuda`` module itself (``from numba import cuda``). ``import numba`` followed by
    ``numba.cuda.threadIdx.x``, or ``from numba.cuda import grid``, reach the simulator's
    module instead, which has no kernel API, so a kernel that compiles on a GPU failed here.
    """

    def __init__(self, name: str):
        self._name = name

    def _target(self) -> Any:
        from numba.cuda.simulator import kernel

        ctx = kernel._get_kernel_context()
        if ctx is None:
            raise RuntimeError(f"cuda.{self._name} can only be used inside a kernel")
        return getattr(ctx, self._name)

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(self._target(), attr)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._target()(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<cuda.{self._name} (simulator: resolved inside a kernel)>"


def expose_kernel_api() -> None:
    """Give the simulator's ``numba.cuda`` module the kernel API, as on a GPU (idempotent)."""
    from numba import cuda

    for name in KERNEL_API:
        if not hasattr(cuda, name):
            setattr(cuda, name, _KernelApiProxy(name))


class _BlockAborted(RuntimeError):
    """Raised in the threads of a block that another thread's error stopped."""


class _BlockSync:
    """One block's barrier: threads that have arrived, threads still running, a generation."""

    def __init__(self, threads: int):
        self.cond = threading.Condition()
        self.live = threads
        self.arrived = 0
        self.generation = 0
        self.aborted = False

    def release_if_complete(self) -> None:
        """Open the barrier when every running thread has arrived (call with cond held)."""
        if self.live and self.arrived == self.live:
            self.arrived = 0
            self.generation += 1
            self.cond.notify_all()


def _syncthreads(self: Any) -> None:
    """``cuda.syncthreads()`` for one simulated thread: wait until the block's running
    threads have all arrived (threads that have returned no longer count, as in Numba)."""
    sync: _BlockSync = self._manager._course_sync
    with sync.cond:
        if sync.aborted:
            raise _BlockAborted("abort flag set on syncthreads call")
        generation = sync.generation
        sync.arrived += 1
        sync.release_if_complete()
        while generation == sync.generation and not sync.aborted:
            sync.cond.wait()
        if sync.aborted:
            raise _BlockAborted("abort flag set on syncthreads clear")


def _run_block(self: Any, grid_point: Any, *args: Any) -> None:
    """Run one block: start a thread per CUDA thread, wait for all, raise the first error."""
    import numpy as np
    from numba.cuda.simulator.kernel import BlockThread

    points = list(np.ndindex(*self._block_dim))
    sync = _BlockSync(len(points))
    self._course_sync = sync

    def target() -> None:
        try:
            self._f(*args)
        except BaseException:
            with sync.cond:
                sync.aborted = True
                sync.cond.notify_all()
            raise
        finally:
            with sync.cond:
                sync.live -= 1
                sync.release_if_complete()

    threads = [BlockThread(target, self, grid_point, point, self._debug) for point in points]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # The error that stopped the block (not the aborts it caused), from the first thread in
    # thread order, whichever finished first: the same launch always reports the same error.
    failed = [t for t in threads if t.exception]
    first = next((t for t in failed if not isinstance(t.exception[0], _BlockAborted)),
                 failed[0] if failed else None)
    if first is not None:
        raise first.exception[0].with_traceback(first.exception[1])


def current_simulated_thread() -> Any:
    """The simulated CUDA thread running now: its ``threadIdx``, ``blockIdx`` and barrier.

    A greenlet of :func:`run_blocks_as_greenlets` carries its thread; otherwise (Numba's own
    threads, or outside a kernel) it is the Python thread, as Numba's simulator assumes."""
    if _greenlet is not None:
        simulated = getattr(_greenlet.getcurrent(), "course_thread", None)
        if simulated is not None:
            return simulated
    return threading.current_thread()


class _ThreadingWithSimulatedThreads:
    """``threading`` as Numba's kernel API module sees it: ``current_thread()`` is the
    simulated CUDA thread (:func:`current_simulated_thread`); everything else is
    ``threading``'s own."""

    current_thread = staticmethod(current_simulated_thread)

    def __getattr__(self, name: str) -> Any:
        return getattr(threading, name)


class _GreenBlock:
    """One block's barrier under greenlets: who schedules, and whether an error stopped it."""

    def __init__(self) -> None:
        self.scheduler = _greenlet.getcurrent()
        self.aborted = False


class GreenThread:
    """A simulated CUDA thread run as a greenlet: what Numba's ``BlockThread`` offers a
    kernel (its indices, its barrier and the barrier's reductions, the error it ended on)."""

    def __init__(self, manager: Any, block: _GreenBlock, block_idx: Any, thread_idx: Any):
        from numba.cuda.simulator.kernel import Dim3

        self._manager = manager
        self._block = block
        self.blockIdx = Dim3(*block_idx)
        self.threadIdx = Dim3(*thread_idx)
        dim = Dim3(*manager._block_dim)
        self.thread_id = self.threadIdx.x + dim.x * (self.threadIdx.y + dim.y * self.threadIdx.z)
        self.exception: tuple[BaseException, Any] | None = None

    def syncthreads(self) -> None:
        """Wait at the barrier: hand over to the block's scheduler until every running
        thread of the block has arrived."""
        if self._block.aborted:
            raise _BlockAborted("abort flag set on syncthreads call")
        self._block.scheduler.switch()
        if self._block.aborted:
            raise _BlockAborted("abort flag set on syncthreads clear")

    def syncthreads_count(self, value: Any) -> int:
        from numba.cuda.simulator.kernel import BlockThread

        return BlockThread.syncthreads_count(self, value)

    def syncthreads_and(self, value: Any) -> int:
        from numba.cuda.simulator.kernel import BlockThread

        return BlockThread.syncthreads_and(self, value)

    def syncthreads_or(self, value: Any) -> int:
        from numba.cuda.simulator.kernel import BlockThread

        return BlockThread.syncthreads_or(self, value)

    def run(self, body: Any) -> None:
        """Run the kernel for this thread; an error is kept as Numba keeps it (its message
        prefixed with the thread and block), and stops the block's other threads at their
        next barrier. An interrupt or an exit is not kept: it ends the whole launch."""
        try:
            body()
        except Exception as e:  # noqa: BLE001 - what the kernel raised, as Numba reports it
            tid, ctaid = f"tid={list(self.threadIdx)}", f"ctaid={list(self.blockIdx)}"
            msg = f"{tid} {ctaid}" if str(e) == "" else f"{tid} {ctaid}: {e}"
            try:
                error: BaseException = type(e)(msg)
            except Exception:  # noqa: BLE001 - an exception type that takes other arguments
                error = e
            self.exception = (error, sys.exc_info()[2])
            if not isinstance(e, _BlockAborted):
                self._block.aborted = True

    def __str__(self) -> str:
        return f"Thread <<<{self.blockIdx}, {self.threadIdx}>>>"


def _run_block_as_greenlets(self: Any, grid_point: Any, *args: Any) -> None:
    """Run one block: a greenlet per CUDA thread, each in turn up to its next barrier (or its
    end) until none is left; then raise the first error in thread order that was not an abort
    it caused."""
    import numpy as np

    block = _GreenBlock()
    if self._debug:
        def body() -> None:
            np.seterr(divide="raise")
            self._f(*args)
    else:
        def body() -> None:
            self._f(*args)

    threads = [GreenThread(self, block, grid_point, point)
               for point in np.ndindex(*self._block_dim)]
    running = []
    for thread in threads:
        g = _greenlet.greenlet(thread.run)
        g.course_thread = thread
        running.append((thread, g))
    first_round = True
    while running:
        for _thread, g in running:
            if first_round:
                g.switch(body)
            else:
                g.switch()
        first_round = False
        running = [(t, g) for t, g in running if not g.dead]
    failed = [t.exception for t in threads if t.exception is not None]
    first = next((f for f in failed if not isinstance(f[0], _BlockAborted)),
                 failed[0] if failed else None)
    if first is not None:
        error, traceback = first
        raise error.with_traceback(traceback)


def thread_class() -> Any:
    """The class whose instances are the simulated threads now (to wrap its barrier)."""
    from numba.cuda.simulator import kernel

    if getattr(kernel.BlockManager.run, "_course_greenlets", False):
        return GreenThread
    return kernel.BlockThread


def run_blocks_as_greenlets() -> bool:
    """Run every simulated block's threads as greenlets (idempotent); False, and Numba's
    threads made event-driven instead, where greenlet is not installed."""
    if _greenlet is None:  # pragma: no cover - greenlet is a declared dependency
        make_barriers_event_driven()
        return False
    from numba.cuda.simulator import kernel, kernelapi

    if getattr(kernel.BlockManager.run, "_course_greenlets", False):
        return True
    _run_block_as_greenlets._course_greenlets = True  # type: ignore[attr-defined]
    kernel.BlockManager.run = _run_block_as_greenlets
    kernelapi.threading = _ThreadingWithSimulatedThreads()
    return True


def make_barriers_event_driven() -> None:
    """Replace the simulator's busy-polling block scheduler with a condition variable.

    Numba's ``BlockManager`` spins over every thread of the block, checking whether each
    has reached ``cuda.syncthreads()``; with tile 32 that is 1,024 Python threads fighting
    the poller for the interpreter lock. Here a barrier counts arrivals and wakes everyone
    once, and the launching thread just waits: the same semantics (a thread that returned
    no longer holds the barrier; an exception aborts the block), much less contention.
    """
    from numba.cuda.simulator import kernel

    if getattr(kernel.BlockManager.run, "_course_event_driven", False) or \
            getattr(kernel.BlockManager.run, "_course_greenlets", False):
        return
    _run_block._course_event_driven = True  # type: ignore[attr-defined]
    kernel.BlockManager.run = _run_block
    kernel.BlockThread.syncthreads = _syncthreads


#: seconds a simulated thread may run before Python hands over (Python's default: 0.005).
SWITCH_INTERVAL_S = 5e-4


def quick_thread_switches() -> None:
    """Let Python switch threads 10× more often (``sys.setswitchinterval``).

    Without greenlets every simulated GPU thread is a Python thread, and a block's threads
    mostly wait for each other at barriers; handing over sooner makes kernels with barriers
    about twice as fast on the simulator. Never slows it down: only shortens the interval,
    never lengthens it.
    """
    if sys.getswitchinterval() > SWITCH_INTERVAL_S:
        sys.setswitchinterval(SWITCH_INTERVAL_S)
