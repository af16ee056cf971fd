"""The CUDA C write-up's experiment on the student's CUDA C kernels (course.perf.cuda_experiment).

Without a GPU the correctness run goes through the course's CPU runner: right kernels give
max |diff| = 0 exactly, wrong ones a non-zero difference or the runner's sentence with a line.
The timed path's verification (poison before every batch, exact comparison after) is driven
here with NumPy arrays and a stand-in clock; real timings are GPU-only tests.
"""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.gemm import GemmCheckError
from course.gemm.cudac import cpu, gpu, nvrtc
from course.gemm.cudac.launch import CudaGemm, tiled
from course.gemm.cudac.source import TILED
from course.gemm.operands import C_POISON_BITS
from course.notebooks.reuse import MissingAnswerError
from course.perf.cuda_experiment import (
    CPU_SIZE,
    check_writeup_correctness_cuda,
    run_once,
    run_writeup_experiment_cuda,
    smoke_test_cuda,
    time_gemm_cuda,
    timed_rows,
)
from course.perf.experiment import NAIVE, NUMPY, exact_product, tiled_name, writeup_inputs
from course.perf.experiment_report import format_table
from course.perf.verify import UnverifiedTimingError, exact_array_check
from course.runtime.backend import NoGPUError
from tests import cudac_kernels as k

needs_runner = pytest.mark.skipif(
    not (nvrtc.available() and cpu.available()),
    reason="needs NVRTC (pip install '.[cudac]') and g++ for the CUDA C CPU runner")
ON_GPU = gpu.available()


class FakeClock:
    """Runs the launches and reports a fixed time: the verification is what is under test."""

    def __init__(self, ms: float = 2.0) -> None:
        self.ms = ms
        self.calls = 0

    def measure(self, fn, batch: int) -> float:
        self.calls += 1
        for _ in range(batch):
            fn()
        return self.ms

    def synchronize(self) -> None:
        pass


# ---------------------------------------------------------------------------------------------
# The exact check, on NumPy arrays (CuPy arrays take the same path on a GPU).


def test_exact_array_check_passes_the_exact_product_only() -> None:
    expected = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.zeros_like(expected)
    check = exact_array_check(out, expected, "C from naive")
    check.poison()
    assert (out.view(np.uint32) == C_POISON_BITS).all()
    problem = check.check()
    assert problem.startswith("12 of 12 elements of C from naive are wrong")
    assert "never written" in problem
    out[...] = expected
    assert check.check() is None
    out[2, 1] += 1
    problem = check.check()
    assert problem.startswith("1 of 12 elements") and "[2, 1] is 10.0, expected 9.0" in problem


def test_exact_array_check_refuses_mismatched_arrays() -> None:
    with pytest.raises(ValueError, match="shape"):
        exact_array_check(np.zeros((2, 3), np.float32), np.zeros((3, 2), np.float32), "C")
    with pytest.raises(ValueError, match="float32"):
        exact_array_check(np.zeros((2, 2)), np.zeros((2, 2)), "C")


# ---------------------------------------------------------------------------------------------
# Correctness on the CPU runner.


@needs_runner
@pytest.mark.skipif(ON_GPU, reason="checks the CPU runner's defaults")
def test_correctness_run_on_the_cpu_runner_is_exact() -> None:
    result = check_writeup_correctness_cuda(k.NAIVE, k.TILED)
    assert (result.size, result.tile, result.timed) == (CPU_SIZE, 32, False)
    assert CPU_SIZE % 32 != 0  # the tiles' edges and a partial step along K are exercised
    assert [r.name for r in result.rows] == [NAIVE, tiled_name(32), NUMPY]
    assert all(r.max_abs_diff == 0 for r in result.rows)
    assert result.max_abs_diff_tiled_vs_naive == 0
    assert result.rows[0].where == "CPU runner" and "CPU runner" in result.device
    text = format_table(result)
    assert "correctness only" in text and "CUDA C track" in text


@needs_runner
def test_a_wrong_result_gives_a_nonzero_difference() -> None:
    """A naive kernel that stores the transpose runs cleanly but computes the wrong C."""
    result = check_writeup_correctness_cuda(k.NAIVE_TRANSPOSED, k.TILED, size=24, tile=8)
    assert result.row(NAIVE).max_abs_diff > 0
    assert result.row(tiled_name(8)).max_abs_diff == 0
    assert result.max_abs_diff_tiled_vs_naive > 0


@needs_runner
@pytest.mark.parametrize("kernel, words", [
    (k.TILED_MULTIPLES_ONLY, "index out of range"),  # K / TILE, no padding: ragged edges
    (k.TILED_NO_FIRST_BARRIER, "no __syncthreads() in between"),
    (k.TILED_EARLY_RETURN, "every thread of a block must reach every barrier"),
], ids=["ragged_edges", "missing_barrier", "early_return"])
def test_tiled_kernel_mistakes_are_named_with_their_line(kernel: str, words: str) -> None:
    if ON_GPU:
        pytest.skip("the CPU runner's sentences; a GPU shows a difference or a guard write")
    with pytest.raises(GemmCheckError) as err:
        check_writeup_correctness_cuda(k.NAIVE, kernel, size=20, tile=8)
    assert words in str(err.value) and "line " in str(err.value)
    assert str(err.value).startswith("gemm_tiled (TILE=8): ")


@needs_runner
def test_run_once_returns_the_exact_product() -> None:
    A, B = writeup_inputs(9, 7, 13)
    C = run_once(tiled(k.TILED, 4), A, B)
    np.testing.assert_array_equal(C, exact_product(A, B))


# ---------------------------------------------------------------------------------------------
# The smoke test of notebook 4's loading cell.


@needs_runner
def test_smoke_test_accepts_right_kernels_and_names_each_problem() -> None:
    smoke_test_cuda(k.NAIVE, k.TILED)
    stub = ('extern "C" __global__ void gemm_tiled(int M, int N, int K,\n'
            "    const float* A, const float* B, float* C)\n{\n"
            "    # YOUR CODE HERE\n    raise NotImplementedError()\n}\n")
    with pytest.raises(MissingAnswerError, match=r"GEMM_TILED_CUDA \(notebook 3c\) is not "
                                                 "written yet"):
        smoke_test_cuda(k.NAIVE, stub)
    with pytest.raises(MissingAnswerError) as err:
        smoke_test_cuda(k.NAIVE_SYNTAX_ERROR, k.TILED)
    assert str(err.value).startswith("GEMM_NAIVE_CUDA (notebook 2c): GEMM_NAIVE_CUDA does not "
                                     "compile") and "line 12: error" in str(err.value)
    with pytest.raises(MissingAnswerError, match="notebook 3c.*index out of range"):
        smoke_test_cuda(k.NAIVE, k.TILED_MULTIPLES_ONLY)  # 1×1×1: writes past C's end
    lazy = k.NAIVE.replace("C[row * N + col] = acc;", "C[row * N + col] = 0.0f;")
    with pytest.raises(MissingAnswerError, match=r"computes 0\.0 for the 1×1×1 product"):
        smoke_test_cuda(lazy, k.TILED)


@pytest.mark.skipif(ON_GPU or not nvrtc.available(), reason="the CPU runner's absence")
def test_smoke_test_says_when_cuda_c_cannot_run_here(monkeypatch) -> None:
    monkeypatch.setenv("CXX", "no-such-compiler-here")
    with pytest.raises(MissingAnswerError, match="CUDA C kernels cannot run here: .*"
                                                 "no-such-compiler-here"):
        smoke_test_cuda(k.NAIVE, k.TILED)


# ---------------------------------------------------------------------------------------------
# The timed path: every batch verified. Driven with NumPy outputs and a stand-in clock.


def _runner_launches(n: int, tile: int, lazy: bool = False):
    """Launch functions that run the kernels on the CPU runner into NumPy outputs."""
    from course.gemm.cudac.launch import naive

    A, B = writeup_inputs(n, n, n)
    outputs, launches = {}, {}
    for name, gk in ((NAIVE, naive(k.NAIVE)), (tiled_name(tile), tiled(k.TILED, tile))):
        out = np.empty((n, n), np.float32)
        runs = {"count": 0}

        def launch(gk=gk, out=out, runs=runs) -> None:
            runs["count"] += 1
            if lazy and gk.tile is not None and runs["count"] > 1:
                return  # the tiled kernel "computes" only its first batch
            out[...] = run_once(gk, A, B)

        outputs[name], launches[name] = out, launch
    return A, B, outputs, launches


@needs_runner
def test_timed_rows_verify_every_batch_and_report_per_launch_times() -> None:
    A, B, outputs, launches = _runner_launches(12, 4)
    ref = exact_product(A, B)
    clock = FakeClock(ms=3.0)
    rows = timed_rows(launches, outputs, ref.astype(np.float32), ref, iters=3, trials=2,
                      flops=2.0 * 12**3, clock=clock)
    assert clock.calls == 4  # 2 trials × 2 kernels (the warm-up is not timed)
    assert [r.name for r in rows] == [NAIVE, tiled_name(4)]
    for r in rows:
        assert r.avg_ms == pytest.approx(1.0) and r.max_abs_diff == 0
        assert r.gflops == pytest.approx(2.0 * 12**3 / 1e6)


@needs_runner
def test_timed_rows_refuse_a_batch_that_did_not_compute() -> None:
    A, B, outputs, launches = _runner_launches(12, 4, lazy=True)
    ref = exact_product(A, B)
    with pytest.raises(UnverifiedTimingError) as err:
        timed_rows(launches, outputs, ref.astype(np.float32), ref, iters=1, trials=2,
                   flops=1.0, clock=FakeClock())
    text = str(err.value)
    assert text.startswith(f"{tiled_name(4)}: what the timed launches computed is wrong")
    assert "never written" in text and "timed run 1 of 2" in text


@pytest.mark.skipif(ON_GPU, reason="checks the refusal to time without a GPU")
def test_timings_refuse_to_run_without_a_gpu() -> None:
    with pytest.raises(NoGPUError, match="need a GPU with CuPy"):
        run_writeup_experiment_cuda(k.NAIVE, k.TILED, size=32, iters=2)
    with pytest.raises(NoGPUError, match="needs a GPU with CuPy"):
        time_gemm_cuda(CudaGemm(TILED, k.TILED, 8), 32)


# ---------------------------------------------------------------------------------------------
# On a GPU.


@pytest.mark.gpu
@pytest.mark.skipif(not ON_GPU, reason="needs a GPU with CuPy (timings)")
def test_timed_experiment_on_a_gpu() -> None:
    result = run_writeup_experiment_cuda(k.NAIVE, k.TILED, size=256, iters=5, tile=16, trials=2,
                                      numpy_runs=1)
    names = [r.name for r in result.rows]
    assert names[:2] == [NAIVE, tiled_name(16)] and names[-1] == NUMPY
    for r in result.rows:
        assert r.max_abs_diff == 0 and r.avg_ms > 0, r
    assert result.max_abs_diff_tiled_vs_naive == 0 and result.tiled_over_naive > 0
    full = check_writeup_correctness_cuda(k.NAIVE, k.TILED)
    assert full.size == 1024 and all(r.max_abs_diff == 0 for r in full.rows)


@pytest.mark.gpu
@pytest.mark.skipif(not ON_GPU, reason="needs a GPU with CuPy (timings)")
def test_gpu_timing_refuses_a_lazy_kernel() -> None:
    lazy = k.TILED.replace("if (row < M && col < N)\n        C",
                           "if (row < M && col < N && K < 200)\n        C")  # skips at 256³
    with pytest.raises(UnverifiedTimingError, match="never written"):
        time_gemm_cuda(tiled(lazy, 16), 256, repeats=2)
