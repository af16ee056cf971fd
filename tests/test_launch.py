"""Tests for course.gemm.launch: the contract's grids, operand validation, kernel recognition."""

from __future__ import annotations

import kernels_for_tests as kft
import numpy as np
import pytest

from course.gemm.launch import (
    NAIVE_BLOCK,
    TILES,
    GemmInputError,
    GemmKernel,
    Launch,
    NotAKernelError,
    check_array,
    check_operands,
    is_cuda_kernel,
    matmul,
    naive,
    naive_launch,
    require_kernel,
    tiled,
    tiled_launch,
)


def f32(*shape: int) -> np.ndarray:
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


# --------------------------------------------------------------------------- launch shapes


@pytest.mark.parametrize(
    ("M", "N", "grid"),
    [(33, 20, (2, 3)), (1, 1, (1, 1)), (16, 16, (1, 1)), (17, 16, (1, 2)), (16, 17, (2, 1)),
     (5, 130, (9, 1)), (130, 3, (1, 9))],
)
def test_naive_launch_covers_ragged_shapes(M, N, grid):
    cfg = naive_launch(M, N)
    assert cfg.block == (NAIVE_BLOCK, NAIVE_BLOCK) == (16, 16)
    assert cfg.grid == grid  # (x over columns N, y over rows M)
    assert cfg.grid[0] * 16 >= N and cfg.grid[1] * 16 >= M
    assert (cfg.grid[0] - 1) * 16 < N and (cfg.grid[1] - 1) * 16 < M


@pytest.mark.parametrize(
    ("M", "N", "tile", "grid"),
    [(33, 20, 8, (3, 5)), (33, 20, 4, (5, 9)), (33, 20, 32, (1, 2)), (64, 64, 16, (4, 4)),
     (1, 1, 32, (1, 1))],
)
def test_tiled_launch_covers_ragged_shapes(M, N, tile, grid):
    cfg = tiled_launch(M, N, tile)
    assert cfg.block == (tile, tile)
    assert cfg.grid == grid


def test_launch_threads():
    assert Launch(grid=(2, 3), block=(16, 16)).threads == 6 * 256
    assert naive_launch(33, 20).threads == 6 * 256


@pytest.mark.parametrize("tile", [12, 0, 2, 64, "8", None])
def test_tiled_launch_rejects_tiles_outside_the_contract(tile):
    with pytest.raises(GemmInputError, match=r"tile must be one of \(4, 8, 16, 32\)"):
        tiled_launch(33, 20, tile)


def test_contract_tiles():
    assert TILES == (4, 8, 16, 32)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "16", None])
def test_launch_sizes_must_be_positive_integers(bad):
    with pytest.raises(GemmInputError, match="M must be a positive integer"):
        naive_launch(bad, 4)
    with pytest.raises(GemmInputError, match="N must be a positive integer"):
        tiled_launch(4, bad, 8)


def test_launch_accepts_numpy_integers():
    assert naive_launch(np.int64(33), np.int32(20)).grid == (2, 3)


# --------------------------------------------------------------------------- operands


def test_check_operands_returns_m_n_k():
    assert check_operands(f32(5, 3), f32(3, 7)) == (5, 7, 3)
    assert check_operands(f32(5, 3), f32(3, 7), f32(5, 7)) == (5, 7, 3)


def test_float64_is_rejected_with_the_fix():
    with pytest.raises(GemmInputError) as info:
        check_operands(np.ones((4, 3)), f32(3, 2))
    msg = str(info.value)
    assert "A must be float32, got float64" in msg
    assert "A.astype(np.float32)" in msg


def test_float64_b_and_c_name_themselves():
    with pytest.raises(GemmInputError, match=r"B must be float32, got float64: use B\.astype"):
        check_operands(f32(4, 3), np.ones((3, 2)))
    with pytest.raises(GemmInputError, match=r"C must be float32, got int32"):
        check_operands(f32(4, 3), f32(3, 2), np.zeros((4, 2), np.int32))


def test_non_contiguous_is_rejected_with_the_fix():
    A = f32(3, 4).T  # a 4×3 view, Fortran order
    with pytest.raises(GemmInputError) as info:
        check_operands(A, f32(3, 2))
    msg = str(info.value)
    assert "A must be C-contiguous (row-major)" in msg
    assert "np.ascontiguousarray(A)" in msg
    assert "transpose" in msg
    # ... and the suggested fix works.
    assert check_operands(np.ascontiguousarray(A), f32(3, 2)) == (4, 2, 3)


def test_strided_slice_is_rejected():
    with pytest.raises(GemmInputError, match="B must be C-contiguous"):
        check_operands(f32(4, 3), f32(3, 8)[:, ::2])


@pytest.mark.parametrize("shape", [(12,), (2, 3, 2), ()])
def test_operands_must_be_2d(shape):
    with pytest.raises(GemmInputError, match=rf"A must be 2-D, got shape {shape!r}".replace(
            "(", r"\(").replace(")", r"\)")):
        check_operands(np.zeros(shape, np.float32), f32(3, 2))


def test_operands_must_be_arrays():
    with pytest.raises(GemmInputError, match="A must be a NumPy or device array, got list"):
        check_operands([[1.0, 2.0]], f32(2, 2))


def test_empty_operand_is_rejected():
    with pytest.raises(GemmInputError, match="A must not be empty"):
        check_operands(np.zeros((0, 3), np.float32), f32(3, 2))


def test_k_mismatch_names_both_shapes():
    with pytest.raises(GemmInputError) as info:
        check_operands(f32(5, 3), f32(4, 7))
    msg = str(info.value)
    assert "A is 5×3 but B is 4×7" in msg
    assert "A's columns must equal B's rows" in msg


def test_c_shape_mismatch():
    with pytest.raises(GemmInputError) as info:
        check_operands(f32(5, 3), f32(3, 7), f32(7, 5))
    assert "C must be 5×7 for A 5×3 and B 3×7, got (7, 5)" in str(info.value)


def test_device_arrays_are_accepted():
    from numba import cuda

    dA, dB, dC = cuda.to_device(f32(5, 3)), cuda.to_device(f32(3, 7)), cuda.to_device(f32(5, 7))
    assert check_operands(dA, dB, dC) == (5, 7, 3)
    assert check_array(dA, "A") == (5, 3)


# --------------------------------------------------------------------------- kernels


def plain_function(A, B, C):
    C[0, 0] = 1


class Indexable:
    """Looks launchable (``obj[grid, block](...)``) but is not a kernel."""

    def __getitem__(self, cfg):
        return plain_function


def test_kernels_are_recognised():
    assert is_cuda_kernel(kft.gemm_naive)
    assert is_cuda_kernel(kft.make_gemm_tiled(8))
    require_kernel(kft.gemm_naive, "gemm_naive")  # no error


@pytest.mark.parametrize(
    ("obj", "typename"),
    [(plain_function, "function"), (np.matmul, "ufunc"), (np.dot, None),
     (Indexable(), "Indexable"), (None, "NoneType"), (kft.make_gemm_tiled, "function")],
)
def test_require_kernel_rejects_non_kernels(obj, typename):
    assert not is_cuda_kernel(obj)
    with pytest.raises(NotAKernelError) as info:
        require_kernel(obj, "gemm_naive")
    msg = str(info.value)
    assert msg.startswith("gemm_naive must be a kernel made with @cuda.jit, got ")
    if typename:
        assert f"got {typename} " in msg
    assert "Write `@cuda.jit` on the line above `def`." in msg


def test_require_kernel_rejects_a_device_function():
    assert not is_cuda_kernel(kft.gemm_naive_device)
    with pytest.raises(NotAKernelError) as info:
        require_kernel(kft.gemm_naive_device, "gemm_naive")
    msg = str(info.value)
    assert "gemm_naive is a device function (@cuda.jit(device=True))" in msg
    assert "plain @cuda.jit" in msg


def test_not_a_kernel_error_is_a_type_error():
    assert issubclass(NotAKernelError, TypeError)
    assert issubclass(GemmInputError, ValueError)


def test_naive_wraps_with_the_contract_launch():
    gk = naive(kft.gemm_naive)
    assert isinstance(gk, GemmKernel)
    assert gk.name == "gemm_naive" and gk.tile is None
    assert gk.launch_for(33, 20) == naive_launch(33, 20)


def test_naive_rejects_a_device_function():
    with pytest.raises(NotAKernelError, match="device function"):
        naive(kft.gemm_naive_device)


def test_tiled_builds_the_kernel_for_the_tile():
    gk = tiled(kft.make_gemm_tiled, 8)
    assert gk.name == "make_gemm_tiled(8)" and gk.tile == 8
    assert is_cuda_kernel(gk.kernel)
    assert gk.launch_for(33, 20) == tiled_launch(33, 20, 8)


def test_tiled_rejects_a_kernel_passed_as_the_factory():
    with pytest.raises(NotAKernelError, match="make_gemm_tiled must be a plain Python function"):
        tiled(kft.gemm_naive, 8)
    with pytest.raises(NotAKernelError, match="got int"):
        tiled(8, 8)


def test_tiled_rejects_a_tile_outside_the_contract():
    with pytest.raises(GemmInputError, match="tile must be one of"):
        tiled(kft.make_gemm_tiled, 12)


def test_tiled_rejects_a_factory_returning_a_device_function():
    with pytest.raises(NotAKernelError, match=r"make_gemm_tiled\(4\) is a device function"):
        tiled(kft.make_gemm_tiled_returns_device, 4)


def test_tiled_rejects_a_factory_returning_something_else():
    with pytest.raises(NotAKernelError, match=r"make_gemm_tiled\(4\) must be a kernel"):
        tiled(lambda tile: plain_function, 4)


# --------------------------------------------------------------------------- running


def test_matmul_runs_the_naive_kernel():
    rng = np.random.default_rng(1)
    A = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    B = rng.uniform(-1, 1, (3, 7)).astype(np.float32)
    C = matmul(naive(kft.gemm_naive), A, B)
    assert C.shape == (5, 7) and C.dtype == np.float32
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-6)


def test_matmul_runs_a_tiled_kernel_on_a_ragged_shape():
    rng = np.random.default_rng(2)
    A = rng.uniform(-1, 1, (6, 5)).astype(np.float32)
    B = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    np.testing.assert_allclose(matmul(tiled(kft.make_gemm_tiled, 4), A, B), A @ B,
                               rtol=1e-5, atol=1e-6)


def test_matmul_can_expose_a_wrong_kernel():
    # The same helper shows a wrong answer (here: K loop one short) rather than hiding it.
    rng = np.random.default_rng(3)
    A = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    B = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    C = matmul(naive(kft.gemm_naive_off_by_one), A, B)
    assert not np.allclose(C, A @ B, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(C, A[:, :2] @ B[:2], rtol=1e-5, atol=1e-6)


def test_matmul_validates_inputs_before_launching():
    with pytest.raises(GemmInputError, match="float32"):
        matmul(naive(kft.gemm_naive), np.ones((2, 2)), f32(2, 2))


def test_launch_validates_device_operands():
    from numba import cuda

    gk = naive(kft.gemm_naive)
    dA, dB = cuda.to_device(f32(4, 3)), cuda.to_device(f32(3, 2))
    with pytest.raises(GemmInputError, match="C must be 4×2"):
        gk.launch(dA, dB, cuda.device_array((2, 4), np.float32))
