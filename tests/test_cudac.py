"""The CUDA C track without a GPU: NVRTC compiles, the CPU runner runs and watches, the checks
pass right kernels and fail each named mistake with a message that says what to fix."""

from __future__ import annotations

import numpy as np
import pytest

from course.checks.cuda_gemm import check_naive_gemm_cuda, check_tiled_gemm_cuda, check_traffic_cuda
from course.checks.gemm import GemmCheckError
from course.checks.traffic import TrafficCheckError
from course.gemm.cudac import cpu, nvrtc, source
from course.gemm.cudac.launch import call, matmul, naive, tiled
from course.gemm.launch import GemmInputError, naive_launch, tiled_launch
from tests import cudac_kernels as k

pytestmark = pytest.mark.skipif(
    not (nvrtc.available() and cpu.available()),
    reason="needs NVRTC (pip install '.[cudac]') and g++ for the CUDA C CPU runner")

SMALL = [(1, 1, 1), (19, 9, 21), (5, 18, 3)]


def operands(M: int, N: int, K: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, (M, K)).astype(np.float32),
            rng.uniform(-1, 1, (K, N)).astype(np.float32))


# ---------------------------------------------------------------------------------------------
# NVRTC and the contract


def test_nvrtc_compiles_and_reports_resources() -> None:
    compiled = source.compile_kernel(k.TILED, source.TILED, 16)
    assert compiled.resources is not None
    assert compiled.resources.shared_bytes == 2 * 16 * 16 * 4
    assert compiled.resources.registers > 0


def test_compile_error_names_the_students_line() -> None:
    with pytest.raises(source.CudaCompileError) as err:
        source.compile_kernel(k.NAIVE_SYNTAX_ERROR, source.NAIVE)
    text = str(err.value)
    wrong = k.NAIVE_SYNTAX_ERROR.splitlines().index("        C[row * N + col] = acc") + 1
    assert "does not compile" in text and "error" in text
    # NVRTC reports a missing ';' on the line after it: the closing brace
    assert f"line {wrong + 1}: error" in text, text


def test_tiled_compile_error_line_is_not_shifted_by_the_tile_define() -> None:
    broken = k.TILED.replace("float acc = 0.0f;", "float acc = 0.0f")
    line = broken.splitlines().index("    float acc = 0.0f") + 1
    with pytest.raises(source.CudaCompileError, match=f"line {line + 1}: error"):
        source.compile_kernel(broken, source.TILED, 8)


def test_wrong_parameter_types_are_named() -> None:
    with pytest.raises(source.CudaCompileError, match=r"takes \(long, long, long"):
        source.compile_kernel(k.NAIVE_LONG_SIZES, source.NAIVE)
    swapped = k.NAIVE.replace("int M, int N, int K,\n", "").replace(
        "float* C)", "float* C, int M, int N, int K)")
    with pytest.raises(source.CudaCompileError, match="in this order"):
        source.compile_kernel(swapped, source.NAIVE)


def test_missing_extern_c_and_wrong_name() -> None:
    with pytest.raises(source.CudaCompileError, match='extern "C"'):
        source.compile_kernel(k.NAIVE_NO_EXTERN_C, source.NAIVE)
    with pytest.raises(source.CudaCompileError, match="no function called gemm_naive"):
        source.compile_kernel(k.NAIVE.replace("gemm_naive", "my_gemm"), source.NAIVE)


def test_not_a_string_and_not_written() -> None:
    with pytest.raises(source.CudaSourceError, match="must be a string"):
        source.compile_kernel(42, source.NAIVE)
    stub = ('extern "C" __global__ void gemm_naive()\n{\n'
            "# YOUR CODE HERE\nraise NotImplementedError()\n}")
    with pytest.raises(NotImplementedError):
        source.compile_kernel(stub, source.NAIVE)
    with pytest.raises(GemmCheckError, match="not written yet"):
        check_naive_gemm_cuda(stub, quiet=True)


def test_solution_markers_are_blank_lines() -> None:
    marked = k.NAIVE.replace("    int row", "    ### BEGIN SOLUTION\n    int row").replace(
        "    }\n}", "    }\n    ### END SOLUTION\n}")
    source.compile_kernel(marked, source.NAIVE)


def test_unresolved_extern_function_fails_in_nvrtc() -> None:
    evil = 'extern "C" __device__ int system(const char*);\n' + k.NAIVE.replace(
        "float acc = 0.0f;", 'float acc = 0.0f; system("ls");')
    with pytest.raises(source.CudaCompileError, match="system"):
        source.compile_kernel(evil, source.NAIVE)


# ---------------------------------------------------------------------------------------------
# The CPU runner


def run(text: str, shape: tuple[int, int, int], tile: int | None = None) -> cpu.CpuRun:
    spec = source.TILED if tile else source.NAIVE
    A, B = operands(*shape)
    cfg = tiled_launch(shape[0], shape[1], tile) if tile else naive_launch(shape[0], shape[1])
    return cpu.run(cpu.build(text, spec, tile), A, B, cfg.grid, cfg.block)


def test_runner_computes_the_product_and_counts_reads() -> None:
    M, N, K = 11, 9, 19
    A, B = operands(M, N, K)
    res = run(k.TILED, (M, N, K), 8)
    assert np.allclose(res.C, A.astype(np.float64) @ B, atol=1e-5)
    assert not (res.problems or res.races or res.uninitialised)
    # each thread loads one element of A per step when it is in range: 11 rows × 19 columns,
    # once per block column (2 of them); B likewise, once per block row
    assert res.reads_a == M * K * 2 and res.reads_b == K * N * 2
    naive_res = run(k.NAIVE, (M, N, K))
    assert naive_res.reads_a + naive_res.reads_b == 2 * M * N * K


def test_runner_reports_out_of_bounds_with_index_thread_and_line() -> None:
    res = run(k.NAIVE_NO_BOUNDS, (19, 9, 5))
    text = res.problems[0]
    assert "index out of range" in text and "past its end" in text
    line = k.NAIVE_NO_BOUNDS.splitlines().index(
        "            acc += A[row * K + k] * B[k * N + col];") + 1
    assert f"line {line}" in text and "thread (" in text
    assert res.wrote_outside  # the store past C's end hit the guard


@pytest.mark.parametrize("text, words", [
    (k.TILED_NO_FIRST_BARRIER, "read"), (k.TILED_NO_SECOND_BARRIER, "wrote")])
def test_missing_barriers_are_races_every_time(text: str, words: str) -> None:
    verdicts = {tuple(run(text, (11, 9, 19), 8).races[:1]) for _ in range(3)}
    assert len(verdicts) == 1  # deterministic: the same first race each run
    (first,) = verdicts.pop()
    assert "no __syncthreads() in between" in first and words in first
    assert "As" in first or "Bs" in first


def test_correct_kernel_has_no_race_at_any_tile() -> None:
    for tile in (4, 8, 16, 32):
        res = run(k.TILED, (tile + 3, tile + 1, 2 * tile + 3), tile)
        assert not (res.races or res.uninitialised or res.problems), tile


def test_early_return_before_a_barrier_is_reported() -> None:
    res = run(k.TILED_EARLY_RETURN, (11, 9, 19), 8)
    assert any("must reach every barrier" in p for p in res.problems)


def test_unwritten_output_stays_poisoned() -> None:
    lazy = k.NAIVE.replace("C[row * N + col] = acc;", "if (row < 16) C[row * N + col] = acc;")
    res = run(lazy, (20, 5, 3))
    assert np.isnan(res.C[16:]).all() and not np.isnan(res.C[:16]).any()


def test_runner_refuses_calls_outside_the_kernel_language() -> None:
    evil = 'extern "C" int system(const char*);\n' + k.NAIVE.replace(
        "float acc = 0.0f;", 'float acc = 0.0f; system("true");')
    with pytest.raises(cpu.CpuBuildError, match="system"):
        cpu.build(evil, source.NAIVE)
    with pytest.raises(cpu.CpuBuildError, match="inline assembly"):
        cpu.build(k.NAIVE.replace("float acc = 0.0f;", 'float acc = 0.0f; asm("nop");'),
                  source.NAIVE)


def test_runner_times_out_on_an_endless_loop() -> None:
    endless = k.NAIVE.replace("for (int k = 0; k < K; ++k)", "for (int k = 0; k < K; k *= 1)")
    A, B = operands(3, 3, 3)
    with pytest.raises(TimeoutError, match="did not finish"):
        cpu.run(cpu.build(endless, source.NAIVE), A, B, (1, 1), (16, 16), timeout_s=2)


# ---------------------------------------------------------------------------------------------
# The checks


def test_naive_check_passes_the_right_kernel() -> None:
    report = check_naive_gemm_cuda(k.NAIVE, quiet=True)
    assert report.backend == "CPU runner"


@pytest.mark.parametrize("text, message", [
    (k.NAIVE_NO_BOUNDS, "index out of range"),
    (k.NAIVE_LONG_SIZES, "takes \\(long"),
])
def test_naive_check_fails_wrong_kernels(text: str, message: str) -> None:
    with pytest.raises((GemmCheckError, source.CudaCompileError), match=message):
        check_naive_gemm_cuda(text, shapes=SMALL + [(16, 16, 4)], quiet=True)


def test_naive_check_recognises_a_transposed_mapping() -> None:
    with pytest.raises(GemmCheckError, match="C came out transposed"):
        check_naive_gemm_cuda(k.NAIVE_TRANSPOSED, shapes=[(16, 16, 4)], quiet=True)


def test_tiled_check_passes_the_right_kernel() -> None:
    check_tiled_gemm_cuda(k.TILED, shapes=SMALL, quiet=True)


@pytest.mark.parametrize("text, message", [
    (k.TILED_NO_FIRST_BARRIER, "no __syncthreads\\(\\) in between"),
    (k.TILED_NO_SECOND_BARRIER, "no __syncthreads\\(\\) in between"),
    (k.TILED_MULTIPLES_ONLY, "index out of range"),
    (k.TILED_EARLY_RETURN, "must reach every barrier"),
])
def test_tiled_check_fails_wrong_kernels(text: str, message: str) -> None:
    with pytest.raises(GemmCheckError, match=message):
        check_tiled_gemm_cuda(text, tiles=(8,), shapes=SMALL, quiet=True)


def test_traffic_check_measures_reads() -> None:
    ok = check_traffic_cuda(k.TILED, tile=16, quiet=True)
    assert ok.reads <= ok.model
    with pytest.raises(TrafficCheckError, match="multiply loop must read only the shared"):
        check_traffic_cuda(k.TILED_GLOBAL_INNER_LOOP, tile=16, quiet=True)
    # the same fake kernel is *correct*: only the count can catch it
    check_tiled_gemm_cuda(k.TILED_GLOBAL_INNER_LOOP, tiles=(8,), shapes=SMALL, quiet=True)


# ---------------------------------------------------------------------------------------------
# Launching by hand


def test_call_checks_argument_types() -> None:
    M, N, K = 5, 7, 3
    A, B = operands(M, N, K)
    C = np.zeros((M, N), np.float32)
    with pytest.raises(GemmInputError, match=r"Python int.*np\.int32\(M\)"):
        call(k.NAIVE, (1, 1), (16, 16), (M, N, K, A, B, C))
    with pytest.raises(GemmInputError, match="do not match"):
        call(k.NAIVE, (1, 1), (16, 16), (np.int32(N), np.int32(M), np.int32(K), A, B, C))
    out = call(k.NAIVE, (1, 1), (16, 16), (np.int32(M), np.int32(N), np.int32(K), A, B, C))
    assert out is C and np.allclose(C, A.astype(np.float64) @ B, atol=1e-5)


def test_matmul_with_the_contract_launch() -> None:
    A, B = operands(6, 5, 9)
    for gk in (naive(k.NAIVE), tiled(k.TILED, 4)):
        assert np.allclose(matmul(gk, A, B), A.astype(np.float64) @ B, atol=1e-5)
    with pytest.raises(GemmInputError, match="tile must be one of"):
        tiled(k.TILED, 12)
