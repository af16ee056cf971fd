"""Run CUDA C kernels on a real GPU through CuPy's ``RawKernel``.

CuPy compiles the source with NVRTC and caches the machine code on disk, by default in
``~/.cupy/kernel_cache``, shared by everything the user runs. A grader must not let one
submission's cached kernel stand in for another's, so :func:`isolate_cache` points CuPy at a
fresh folder for this process (``CUPY_CACHE_DIR``) before CuPy is imported, and asks it to
keep kernels in memory only where it can (``CUPY_CACHE_IN_MEMORY``).

Nothing here needs a particular CuPy wheel: ``cupy-cuda12x`` (Colab) and ``cupy-cuda13x``
both work.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

import numpy as np

from course.gemm.cudac.source import KernelSpec, full_source
from course.runtime import backend, gpulock, gpusync

GUARD = 64
_CACHE_DIR: str | None = None


def isolate_cache() -> str:
    """Give this process its own, empty CuPy kernel cache (call before importing cupy)."""
    global _CACHE_DIR
    if _CACHE_DIR is None:
        _CACHE_DIR = tempfile.mkdtemp(prefix="course-cupy-cache-")
        atexit.register(shutil.rmtree, _CACHE_DIR, True)
        os.environ["CUPY_CACHE_DIR"] = _CACHE_DIR
        os.environ["CUPY_CACHE_IN_MEMORY"] = "1"
    return _CACHE_DIR


@functools.lru_cache(maxsize=1)
def available() -> bool:
    """True when a CUDA GPU and CuPy are both present."""
    if backend.driver_gpu_count()[0] == 0:
        return False
    isolate_cache()
    try:
        import cupy  # noqa: F401
    except ImportError:
        return False
    return True


def cupy_module() -> Any:
    isolate_cache()
    import cupy  # optional, heavy: imported when used (import course stays light)

    return cupy


@functools.lru_cache(maxsize=64)
def _raw_kernel(text: str, name: str) -> Any:
    cp = cupy_module()
    kernel = cp.RawKernel(text, name)
    kernel.compile()
    return kernel


#: the speedup check's verification: how many elements of C are not within ``tol`` of
#: ``ref`` (NaN never is); one kernel, compiled before the timing, instead of CuPy's six.
COUNT_BAD_SOURCE = r"""
extern "C" __global__ void count_bad(const float* C, const double* ref, const double* tol,
                                     long long n, unsigned long long* bad) {
    unsigned long long mine = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        if (!(fabs((double)C[i] - ref[i]) <= tol[i])) mine++;
    }
    if (mine) atomicAdd(bad, mine);
}
"""


def count_bad_kernel() -> Any:
    """The compiled ``count_bad`` kernel (see :data:`COUNT_BAD_SOURCE`)."""
    return _raw_kernel(COUNT_BAD_SOURCE, "count_bad")


def raw_kernel(source: str, spec: KernelSpec, tile: int | None = None) -> Any:
    """A compiled ``cupy.RawKernel`` for the student's source (TILE defined, #line added)."""
    return _raw_kernel(full_source(source, spec, tile), spec.name)


def device_name() -> str:
    """The current GPU's name, from CuPy (no Numba needed)."""
    cp = cupy_module()
    name = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"]
    return name.decode() if isinstance(name, bytes) else str(name)


def attributes(kernel: Any) -> dict[str, int]:
    """The driver's view of a compiled kernel: registers, static shared memory, max threads."""
    return {k: int(v) for k, v in kernel.attributes.items()}


def launch(kernel: Any, grid: tuple[int, int], block: tuple[int, int], args: tuple) -> None:
    """Launch and wait; the arguments must already have the kernel's C types. While grading,
    the launch holds the GPU lock shared (:func:`course.runtime.gpulock.shared_launch`), so it
    never runs during another student's timing."""
    with gpulock.shared_launch():
        kernel((int(grid[0]), int(grid[1])), (int(block[0]), int(block[1])), args)
        cupy_module().cuda.Device().synchronize()


def _guarded(data: np.ndarray, fill: np.ndarray) -> tuple[Any, Any]:
    cp = cupy_module()
    flat = cp.asarray(np.concatenate([fill, data.ravel(), fill]))
    return flat, flat[GUARD:GUARD + data.size]


def run_guarded(kernel: Any, A: np.ndarray, B: np.ndarray, grid: tuple[int, int],
                block: tuple[int, int], *, c_poison_bits: int, input_guard_bits: int,
                c_guard: float, c_init: np.ndarray | None = None) -> tuple[np.ndarray, bool]:
    """Launch on A, B inside NaN guard regions and a poisoned C (or C starting as
    ``c_init``); return C and whether anything outside C was written."""
    M, K = A.shape
    N = B.shape[1]
    nan_guard = np.full(GUARD, input_guard_bits, np.uint32).view(np.float32)
    _, dA = _guarded(A, nan_guard)
    _, dB = _guarded(B, nan_guard)
    poison = (np.full((M, N), c_poison_bits, np.uint32).view(np.float32) if c_init is None
              else np.ascontiguousarray(c_init, np.float32))
    c_flat, dC = _guarded(poison, np.full(GUARD, c_guard, np.float32))
    launch(kernel, grid, block, (np.int32(M), np.int32(N), np.int32(K), dA, dB, dC))
    flat = c_flat.get()
    outside = np.concatenate([flat[:GUARD], flat[GUARD + M * N:]])
    return flat[GUARD:GUARD + M * N].reshape(M, N), bool(np.any(outside != c_guard))


class CupyEventClock:
    """:class:`course.perf.timing.Clock` with CuPy's CUDA events, for kernels launched by CuPy."""

    def measure(self, fn: Callable[[], None], batch: int) -> float:
        cp = cupy_module()
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        for _ in range(batch):
            fn()
        end.record()
        gpusync.wait_for_event(end, cp.cuda.Device().synchronize)  # blocks rather than spins
        return float(cp.cuda.get_elapsed_time(start, end))

    def synchronize(self) -> None:
        cupy_module().cuda.Device().synchronize()


def time_launches(launches: dict[str, Callable[[], None]], *, repeats: int = 20,
                  warmup: int = 3, batch: int = 1) -> dict[str, list[float]]:
    """Milliseconds per launch of each function, interleaved, timed with CUDA events.

    The same method as :func:`course.perf.timing.time_launches` (warm-up outside the clock, one pair
    of events around ``batch`` launches, kernels interleaved so they share the clock), with
    CuPy's events instead of Numba's.
    """
    cp = cupy_module()
    for fn in launches.values():
        for _ in range(warmup):
            fn()
    cp.cuda.Device().synchronize()
    samples: dict[str, list[float]] = {name: [] for name in launches}
    for _ in range(repeats):
        for name, fn in launches.items():
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            for _ in range(batch):
                fn()
            end.record()
            gpusync.wait_for_event(end, cp.cuda.Device().synchronize)
            samples[name].append(cp.cuda.get_elapsed_time(start, end) / batch)
    return samples
