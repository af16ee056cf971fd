"""course.runtime.errors turns what a student's kernel raises into one plain line (try-it cells)."""

from __future__ import annotations

import kernels_for_tests as kft
import numpy as np
import pytest
from numba import cuda

from course.checks.gemm import try_gemm
from course.gemm.launch import matmul, naive, tiled
from course.runtime.errors import explain, not_written_yet, plain_errors

unwritten = kft.gemm_naive_not_implemented
no_bounds_test = kft.gemm_naive_no_bounds
stores_nothing = kft.gemm_naive_never_writes  # what an unwritten kernel does on a GPU


@cuda.jit
def typo(A, B, C):
    col, row = cuda.grid(2)
    C[row, col] = acc  # noqa: F821 - the mistake under test


def plain_function(A, B, C):
    pass


def operands(M=5, N=3, K=7):
    rng = np.random.default_rng(0)
    return (rng.uniform(-1, 1, (M, K)).astype(np.float32),
            rng.uniform(-1, 1, (K, N)).astype(np.float32))


def raised(kernel) -> BaseException:
    A, B = operands()
    with pytest.raises(Exception) as info:
        matmul(naive(kernel), A, B)
    return info.value


def test_a_kernel_not_written_yet_is_named_so_on_one_line():
    exc = raised(unwritten)
    assert "tid=" in str(exc), "the simulator's raw message, which students must not need"
    line = explain(exc, "gemm_naive")
    assert line.startswith("gemm_naive is not written yet")
    assert "\n" not in line and "tid=" not in line


def test_an_index_out_of_range_names_the_thread_and_the_fix():
    exc = raised(no_bounds_test)
    assert not not_written_yet(exc)  # the check can say no
    line = explain(exc, "gemm_naive")
    assert "index out of range in thread (" in line and "of block (" in line
    assert "bounds test" in line and "tid=" not in line and "\n" not in line


def test_an_undefined_name_is_quoted():
    line = explain(raised(typo), "gemm_naive")
    assert "'acc' is not defined" in line and "thread (" in line


def test_a_function_without_cuda_jit_keeps_its_own_message():
    line = explain(raised(plain_function), "gemm_naive")
    assert "@cuda.jit" in line and "\n" not in line


def test_gpu_errors_are_translated_by_kind():
    class TypingError(Exception):
        pass

    class CudaAPIError(Exception):
        pass

    compile_error = TypingError("Failed in cuda mode pipeline (step: nopython frontend)\n"
                                "Unknown attribute 'foo' of type array(float32, 2d, A)\n"
                                "During: typing of get attribute at <cell>")
    line = explain(compile_error, "gemm_naive")
    assert line.startswith("gemm_naive does not compile: Unknown attribute 'foo'")
    crash = CudaAPIError("[700] Call to cuMemcpyDtoH results in CUDA_ERROR_ILLEGAL_ADDRESS")
    assert "Restart session" in explain(crash, "gemm_naive")
    big = CudaAPIError("[701] Call to cuLaunchKernel results in "
                       "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES")
    assert "registers" in explain(big, "make_gemm_tiled(32)")
    other = ZeroDivisionError("division by zero")
    assert explain(other, "k") == "k failed: ZeroDivisionError: division by zero"


def test_plain_errors_prints_one_line_and_stops_the_block(capsys):
    A, B = operands()
    reached = []
    with plain_errors("gemm_naive") as guard:
        matmul(naive(unwritten), A, B)
        reached.append(True)
    out = capsys.readouterr().out
    assert reached == [] and isinstance(guard.error, NotImplementedError)
    assert out.startswith("✗ gemm_naive is not written yet") and out.count("\n") == 1


def test_plain_errors_lets_interrupts_and_success_through(capsys):
    with plain_errors("k") as guard:
        pass
    assert guard.error is None and capsys.readouterr().out == ""
    with pytest.raises(KeyboardInterrupt), plain_errors("k"):
        raise KeyboardInterrupt


def test_try_gemm_says_right_or_wrong_in_one_line(capsys):
    A, B = operands(6, 5, 9)
    C = try_gemm(tiled(kft.make_gemm_tiled, 4), A, B)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-5)
    assert capsys.readouterr().out.startswith("✓ make_gemm_tiled(4): C = A·B")
    try_gemm(naive(stores_nothing), A, B)
    out = capsys.readouterr().out
    assert out.startswith("✗ gemm_naive: no thread stored anything into C"), out
    try_gemm(naive(kft.does_nothing), A, B)
    out = capsys.readouterr().out
    assert out.startswith("✗ gemm_naive: no thread read A or B or stored into C"), out
    assert "Is the kernel written?" in out
    try_gemm(naive(kft.gemm_naive), A, B)
    assert capsys.readouterr().out.startswith("✓ gemm_naive")
