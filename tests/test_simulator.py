"""course.simulator: the kernel API in every spelling, and an event-driven block barrier."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import cuda

import course  # noqa: F401  (turns the simulator on and applies the fixes)
from course.runtime.backend import detect
from course.runtime.simulator import KERNEL_API, expose_kernel_api, make_barriers_event_driven

pytestmark = pytest.mark.skipif(detect().kind != "simulator", reason="simulator only")


@numba.cuda.jit
def _module_spelling(a, out):
    i = numba.cuda.blockIdx.x * numba.cuda.blockDim.x + numba.cuda.threadIdx.x
    s = numba.cuda.shared.array(4, numba.float32)
    s[numba.cuda.threadIdx.x] = a[i]
    numba.cuda.syncthreads()
    out[i] = s[(numba.cuda.threadIdx.x + 1) % 4]


def test_numba_cuda_spelling_runs_on_the_simulator():
    a = np.arange(8, dtype=np.float32)
    out = np.zeros(8, np.float32)
    _module_spelling[2, 4](a, out)
    assert out.tolist() == [1, 2, 3, 0, 5, 6, 7, 4]


def test_api_names_imported_from_numba_cuda_work_inside_kernels():
    from numba.cuda import grid, gridsize

    @cuda.jit
    def k(out):
        for i in range(grid(1), out.size, gridsize(1)):
            out[i] = i

    out = np.zeros(10, np.float32)
    k[1, 4](out)
    assert out.tolist() == list(range(10))


def test_the_api_outside_a_kernel_says_so():
    expose_kernel_api()
    with pytest.raises(RuntimeError, match="only be used inside a kernel"):
        cuda.threadIdx.x  # noqa: B018
    assert all(hasattr(cuda, name) for name in KERNEL_API)


@cuda.jit
def _reverse_in_blocks(a, out):
    s = cuda.shared.array(64, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.blockIdx.x * 64 + t]
    cuda.syncthreads()
    out[cuda.blockIdx.x * 64 + t] = s[63 - t]


def test_the_barrier_orders_every_thread_of_the_block():
    make_barriers_event_driven()  # idempotent
    a = np.arange(128, dtype=np.float32)
    out = np.zeros_like(a)
    _reverse_in_blocks[2, 64](a, out)
    assert out.tolist() == a.reshape(2, 64)[:, ::-1].ravel().tolist()


@cuda.jit
def _early_exit(out):
    t = cuda.threadIdx.x
    if t % 2:
        return  # returned threads no longer hold the barrier, as in Numba
    cuda.syncthreads()
    out[t] = 1


def test_threads_that_returned_do_not_block_the_barrier():
    out = np.zeros(8, np.float32)
    _early_exit[1, 8](out)
    assert out.tolist() == [1, 0, 1, 0, 1, 0, 1, 0]


@cuda.jit
def _fails_in_one_thread(a):
    t = cuda.threadIdx.x
    cuda.syncthreads()
    a[t + 100 * (t == 5)] = 1  # thread 5 indexes out of range
    cuda.syncthreads()


def test_the_first_real_error_is_raised_not_the_aborts_it_caused():
    with pytest.raises(IndexError, match=r"tid=\[5, 0, 0\]"):
        _fails_in_one_thread[1, 16](np.zeros(16, np.float32))
