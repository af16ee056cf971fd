"""Small GEMM kernels for tests/test_experiment.py, in a module so their source is readable.

``course`` is imported first so that, without a GPU, Numba runs them on its simulator.
"""

import course  # noqa: F401, I001  (chooses GPU or simulator before numba is imported)
from numba import cuda, float32


@cuda.jit
def gemm_naive(A, B, C):
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


def make_gemm_tiled(tile):
    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            ka, kb = t * tile + tx, t * tile + ty
            As[ty, tx] = A[row, ka] if row < M and ka < K else float32(0.0)
            Bs[ty, tx] = B[kb, col] if kb < K and col < N else float32(0.0)
            cuda.syncthreads()
            for k in range(tile):
                acc += As[ty, k] * Bs[k, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled


def make_gemm_tiled_floor(tile):
    """The SYCL write-up's mistake: K // tile steps, so the last partial step is dropped."""

    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range(K // tile):
            ka, kb = t * tile + tx, t * tile + ty
            As[ty, tx] = A[row, ka] if row < M else float32(0.0)
            Bs[ty, tx] = B[kb, col] if col < N else float32(0.0)
            cuda.syncthreads()
            for k in range(tile):
                acc += As[ty, k] * Bs[k, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled


@cuda.jit
def does_nothing(A, B, C):
    """What an unwritten kernel amounts to on a GPU: it compiles and stores nothing."""
    pass
