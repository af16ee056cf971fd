"""course.runtime.simulator: the kernel API in every spelling, and the block's barrier, with the
blocks run as greenlets (the course's default) and as Numba's threads made event-driven (where
greenlet is missing): every barrier test runs under both."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from numba import cuda

import course  # noqa: F401  (turns the simulator on and applies the fixes)
from course.runtime import simulator
from course.runtime.backend import detect
from course.runtime.sim_arrays import LOCAL_ARRAY_BITS
from course.runtime.simulator import KERNEL_API, expose_kernel_api

pytestmark = pytest.mark.skipif(detect().kind != "simulator", reason="simulator only")


@pytest.fixture(params=["greenlets", "threads"])
def runner(request, monkeypatch):
    """The block runner under test: the course's greenlets, or the threads it falls back to."""
    from numba.cuda.simulator import kernel, kernelapi

    assert getattr(kernel.BlockManager.run, "_course_greenlets", False), \
        "importing course on the simulator runs blocks as greenlets"
    if request.param == "threads":
        monkeypatch.setattr(kernel.BlockManager, "run", simulator._run_block)
        monkeypatch.setattr(kernel.BlockThread, "syncthreads", simulator._syncthreads)
        monkeypatch.setattr(kernelapi, "threading", simulator.threading)
    return request.param


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


def test_the_barrier_orders_every_thread_of_the_block(runner):
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


def test_threads_that_returned_do_not_block_the_barrier(runner):
    out = np.zeros(8, np.float32)
    _early_exit[1, 8](out)
    assert out.tolist() == [1, 0, 1, 0, 1, 0, 1, 0]


@cuda.jit
def _fails_in_one_thread(a):
    t = cuda.threadIdx.x
    cuda.syncthreads()
    a[t + 100 * (t == 5)] = 1  # thread 5 indexes out of range
    cuda.syncthreads()


def test_the_first_real_error_is_raised_not_the_aborts_it_caused(runner):
    with pytest.raises(IndexError, match=r"tid=\[5, 0, 0\]"):
        _fails_in_one_thread[1, 16](np.zeros(16, np.float32))


@cuda.jit
def _tiled_sum(a, out):
    """Each block sums its 16 values through shared memory in four barrier-separated steps."""
    s = cuda.shared.array(16, numba.float32)
    t = cuda.threadIdx.x
    s[t] = a[cuda.blockIdx.x * 16 + t]
    cuda.syncthreads()
    step = 8
    while step > 0:
        if t < step:
            s[t] += s[t + step]
        cuda.syncthreads()
        step //= 2
    if t == 0:
        out[cuda.blockIdx.x] = s[0]


def test_a_reduction_with_a_barrier_in_a_loop_is_exact(runner):
    a = np.arange(64, dtype=np.float32)
    out = np.zeros(4, np.float32)
    _tiled_sum[4, 16](a, out)
    assert out.tolist() == a.reshape(4, 16).sum(axis=1).tolist()


@cuda.jit
def _count_odd(out):
    t = cuda.threadIdx.x
    out[t] = cuda.syncthreads_count(t % 2)


def test_the_barrier_reductions_count_the_whole_block(runner):
    out = np.zeros(10, np.int32)
    _count_odd[1, 10](out)
    assert out.tolist() == [5] * 10


@cuda.jit
def _two_dimensional_ids(out):
    x, y = cuda.threadIdx.x, cuda.threadIdx.y
    i, j = cuda.grid(2)
    out[j, i] = cuda.blockIdx.y * 100 + cuda.blockIdx.x * 10 + y * 2 + x


def test_every_thread_sees_its_own_indices(runner):
    out = np.zeros((4, 4), np.int32)
    _two_dimensional_ids[(2, 2), (2, 2)](out)
    expected = [[by * 100 + bx * 10 + y * 2 + x for bx in range(2) for x in range(2)]
                for by in range(2) for y in range(2)]
    assert out.tolist() == expected


@cuda.jit
def _interrupted(out):
    t = cuda.threadIdx.x
    out[t] = 1
    if t == 3:
        raise KeyboardInterrupt  # what the stop button or a time limit raises in the kernel
    cuda.syncthreads()
    out[t] = 2


def test_an_interrupt_in_a_kernel_ends_the_launch_and_leaves_nothing_running():
    import threading

    before = threading.active_count()
    out = cuda.to_device(np.zeros(8, np.float32))  # a host array is not copied back on errors
    with pytest.raises(KeyboardInterrupt):
        _interrupted[1, 8](out)
    # threads 0-2 wait at the barrier and never pass it; threads after 3 never started
    assert out.copy_to_host().tolist() == [1, 1, 1, 1, 0, 0, 0, 0]
    assert threading.active_count() == before  # no simulated thread left behind


def test_a_launch_interleaves_its_threads_the_same_way_every_time():
    @cuda.jit
    def racy(out):
        s = cuda.shared.array(1, numba.int32)
        s[0] = cuda.threadIdx.x  # every thread writes, no barrier: the last one wins
        out[cuda.threadIdx.x] = s[0]

    outs = []
    for _ in range(3):
        out = np.zeros(32, np.int32)
        racy[1, 32](out)
        outs.append(out.tolist())
    assert outs[0] == outs[1] == outs[2] == list(range(32))


def test_a_shared_array_starts_as_zeros_not_as_leftover_memory():
    """An element read before any thread stored it reads 0 in every run. Numba's simulator left
    it as whatever the heap held (here, after freed arrays of its size: their bytes). The
    checks' guard around A and B is NaN of a marked kind, and a missing barrier that read a
    freed copy of it was blamed on a tile load past the end of A or B."""
    @cuda.jit
    def read_before_store(out):
        s = cuda.shared.array(16, numba.float32)
        out[cuda.threadIdx.x] = s[cuda.threadIdx.x]

    for _ in range(3):
        for _ in range(50):  # freed buffers of the shared array's size, full of NaN
            leftover = np.full(16, np.nan, np.float32)
            del leftover
        out = np.full(16, -1.0, np.float32)
        read_before_store[1, 16](out)
        assert out.tolist() == [0.0] * 16


def test_a_local_array_starts_as_the_marked_nan_not_as_leftover_memory():
    """An accumulator a thread adds to without setting it first gives the same marked NaN in
    every run, float32 or float64 (narrowed into a float32 C, as a student's kernel stores
    it); integers start as 0. Numba's simulator left them as whatever the heap held: garbage
    most runs, and in some a freed copy of the checks' NaN guard, which the diagnosis took for a
    shared-memory element read before it was stored."""
    @cuda.jit
    def never_set(out32, out64, ints):
        acc = cuda.local.array(2, numba.float32)
        wide = cuda.local.array(2, numba.float64)
        count = cuda.local.array(2, numba.int32)
        i = cuda.threadIdx.x
        acc[0] += numba.float32(1.0)
        wide[1] += 2.0
        out32[i] = acc[0]
        out64[i] = wide[1]  # a float64 narrowed into float32, as C = acc would be
        ints[i] = count[1]

    for _ in range(3):
        for _ in range(50):  # freed buffers of the local arrays' sizes, full of garbage
            leftover = np.full(2, 7.5, np.float64)
            del leftover
        out32, out64 = np.zeros(8, np.float32), np.zeros(8, np.float32)
        ints = np.full(8, -1, np.int32)
        never_set[1, 8](out32, out64, ints)
        assert out32.view(np.uint32).tolist() == [LOCAL_ARRAY_BITS] * 8
        assert out64.view(np.uint32).tolist() == [LOCAL_ARRAY_BITS] * 8
        assert ints.tolist() == [0] * 8


def test_greenlets_are_much_cheaper_than_threads():
    """The reason for the greenlets: the same tiled sum, measured in CPU time."""
    import time

    from numba.cuda.simulator import kernel, kernelapi

    a = np.arange(64 * 16, dtype=np.float32)

    def cpu(n: int = 3) -> float:
        start = time.process_time()
        for _ in range(n):
            _tiled_sum[64, 16](a, np.zeros(64, np.float32))
        return time.process_time() - start

    green = cpu()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernel.BlockManager, "run", simulator._run_block)
        mp.setattr(kernel.BlockThread, "syncthreads", simulator._syncthreads)
        mp.setattr(kernelapi, "threading", simulator.threading)
        threads = cpu()
    assert green * 3 < threads, (green, threads)


class _NeedsTwoArguments(Exception):
    def __init__(self, code, where):
        super().__init__(f"{code} at {where}")


@cuda.jit
def _raises_an_unusual_error(out):
    if cuda.threadIdx.x == 2:
        raise _NeedsTwoArguments(7, "here")
    out[cuda.threadIdx.x] = 1


def test_an_error_whose_type_takes_other_arguments_is_raised_as_it_was():
    with pytest.raises(_NeedsTwoArguments, match="7 at here"):
        _raises_an_unusual_error[1, 4](np.zeros(4, np.float32))
