"""Waiting for the GPU blocks instead of spinning (course/runtime/gpusync.py): the primary
context's scheduling flag, and the clocks' order of waits. What is timed is unchanged: the
GPU's own events."""

from __future__ import annotations

import ctypes
import subprocess
import sys
from typing import Any

import pytest

from course.runtime import gpusync


class FakeDriver:
    """The few driver calls :func:`gpusync.block_while_waiting` makes, recorded."""

    def __init__(self, devices: int, flags: int = 0, refuse: int | None = None) -> None:
        self.devices, self.flags, self.refuse = devices, flags, refuse
        self.set: dict[int, int] = {}

    def cuInit(self, flags: int) -> int:  # noqa: N802 - the driver's names
        return 0

    def cuDeviceGetCount(self, count: Any) -> int:  # noqa: N802
        count._obj.value = self.devices
        return 0

    def cuDeviceGet(self, device: Any, ordinal: int) -> int:  # noqa: N802
        device._obj.value = 100 + ordinal
        return 0

    def cuDevicePrimaryCtxGetState(self, device: ctypes.c_int, flags: Any,  # noqa: N802
                                   active: Any) -> int:
        flags._obj.value = self.flags
        return 0

    def cuDevicePrimaryCtxSetFlags(self, device: ctypes.c_int,  # noqa: N802
                                   flags: ctypes.c_uint) -> int:
        if device.value == self.refuse:
            return 708  # CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, on an old driver
        self.set[device.value] = flags.value
        return 0


def test_every_device_gets_the_blocking_flag_and_keeps_its_other_flags() -> None:
    driver = FakeDriver(devices=2, flags=0x08 | 0x01)  # map host memory; spin
    assert gpusync.block_while_waiting(driver) is True
    assert driver.set == {100: 0x08 | gpusync.CU_CTX_SCHED_BLOCKING_SYNC,
                          101: 0x08 | gpusync.CU_CTX_SCHED_BLOCKING_SYNC}


def test_a_device_that_refuses_is_reported() -> None:
    driver = FakeDriver(devices=2, refuse=101)
    assert gpusync.block_while_waiting(driver) is False
    assert list(driver.set) == [100]


def test_nothing_to_set_without_a_gpu_or_on_the_simulator(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    assert gpusync.block_while_waiting(FakeDriver(devices=0)) is False
    monkeypatch.setattr(gpusync, "_DONE", [])
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    assert gpusync.block_while_waiting() is False


def test_the_clock_waits_for_the_device_before_reading_its_event() -> None:
    order: list[str] = []

    class Event:
        def synchronize(self) -> None:
            order.append("event")

    gpusync.wait_for_event(Event(), lambda: order.append("device"))
    assert order == ["device", "event"]


GPU_SCRIPT = """
import time
from course.runtime import gpusync
print(gpusync.block_while_waiting())
import numpy as np
from numba import cuda
from course.perf.timing import CudaEventClock

@cuda.jit
def spin(out, n):
    s = 0.0
    for i in range(n):
        s = s * 0.999999 + 1.0
    out[0] = s

out = cuda.device_array(1, np.float64)
spin[1, 1](out, 10)
cuda.synchronize()
cpu, wall = time.process_time(), time.perf_counter()
ms = CudaEventClock().measure(lambda: spin[1, 1](out, 200_000_000), 1)
print(time.process_time() - cpu, time.perf_counter() - wall, ms / 1e3)
"""


@pytest.mark.gpu
def test_on_a_gpu_a_timed_launch_waits_without_using_a_core() -> None:
    """A launch of about two seconds, timed by the course's clock: the host thread sleeps
    through it (CPU far below wall time), and the events still time the kernel (close to the
    wall time)."""
    out = subprocess.run([sys.executable, "-c", GPU_SCRIPT], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[0] == "True"
    cpu, wall, timed = map(float, out[1:4])
    assert wall > 0.3, "the spin kernel ran too briefly to tell"
    assert cpu < 0.25 * wall, f"the wait used {cpu:.2f} CPU-s of {wall:.2f} s"
    assert timed == pytest.approx(wall, rel=0.2)
