"""Wait for the GPU by sleeping, not by spinning a CPU core.

By default the CUDA driver waits for the GPU by *spinning* whenever a machine has more cores
than GPUs (``CU_CTX_SCHED_AUTO``): a thread that synchronises on a kernel that runs for a
second uses a second of CPU doing nothing. A grading box runs many students' checks beside
each other, and their timings (twenty verified launches of a 2048³ GEMM per kernel) and
correctness runs spend most of their wall time waiting for the GPU; every spinning wait is a
core another student's check could have used.

:func:`block_while_waiting` sets ``CU_CTX_SCHED_BLOCKING_SYNC`` on the *primary* context of
every visible GPU, through the driver (``cuDevicePrimaryCtxSetFlags``), before Numba or CuPy
create it: both use that one primary context, so one call covers both in a process. The flag
governs context and stream synchronisation (``cuda.synchronize()``,
``cupy.cuda.Device().synchronize()``); an *event*'s ``synchronize`` still spins unless the event
was made with ``CU_EVENT_BLOCKING_SYNC`` (measured on an H200, docs/grading-cost.md), so the
course's clocks wait for the device first and read the event after (:func:`wait_for_event`).

What is timed does not change: the time of a sample is still the GPU's own, between two CUDA
events recorded in the stream around the launches. Only how the host thread waits for the end
event changes (a wake-up of some microseconds after the GPU is done, outside the events).
"""

from __future__ import annotations

import ctypes
from typing import Any

from course.runtime import backend

#: CUjctx_flags: how a thread waits for the GPU (the three low bits).
CU_CTX_SCHED_MASK = 0x07
CU_CTX_SCHED_BLOCKING_SYNC = 0x04

_DONE: list[bool] = []


def block_while_waiting(lib: Any = None) -> bool:
    """Make every visible GPU's primary context wait by blocking; True when it was set on each.

    Call it in a process that will use the GPU, before anything creates a context (a context
    made earlier keeps spinning on some drivers). Does nothing (False) on the simulator or
    without a driver. ``lib``: the driver library (tests pass a stand-in)."""
    if lib is not None:
        return _set_flags(lib)
    if _DONE:
        return _DONE[0]
    if backend.simulator_requested():
        return False
    driver = backend.load_cuda_driver()
    ok = driver is not None and _set_flags(driver)
    _DONE[:] = [ok]
    return ok


def _set_flags(lib: Any) -> bool:
    if lib.cuInit(0) != 0:
        return False
    count = ctypes.c_int(0)
    if lib.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
        return False
    done = 0
    for ordinal in range(count.value):
        device = ctypes.c_int(0)
        flags, active = ctypes.c_uint(0), ctypes.c_int(0)
        if lib.cuDeviceGet(ctypes.byref(device), ordinal) != 0:
            continue
        if lib.cuDevicePrimaryCtxGetState(device, ctypes.byref(flags), ctypes.byref(active)) != 0:
            flags.value = 0
        wanted = (flags.value & ~CU_CTX_SCHED_MASK) | CU_CTX_SCHED_BLOCKING_SYNC
        if lib.cuDevicePrimaryCtxSetFlags(device, ctypes.c_uint(wanted)) == 0:
            done += 1
    return done == count.value


def wait_for_event(event: Any, synchronize_device: Any) -> None:
    """Wait until ``event`` (recorded after the launches) has happened: first the device's
    synchronisation (which blocks, with :func:`block_while_waiting`), then the event's own
    (which is then already complete and returns at once). The event's time is unchanged."""
    synchronize_device()
    event.synchronize()
