"""Zoe's tiled kernel is right, and really tiled, on every shape the correctness and traffic
checks use (all small), but returns at once when K ≥ 1000 — which makes it look thousands of
times faster than the naive kernel at the timed size. The speedup check verifies what the
timed launches computed, so on a GPU it fails with a message that says so; without a GPU the
speedup is not measured and she scores what a correct kernel scores."""

NOTEBOOKS = ["03_tiled_gemm"]
BASE = "solutions"
ANSWERS = {
    "03_tiled_gemm": {
        "make_gemm_tiled": '''def make_gemm_tiled(tile):
    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        if K >= 1000:
            return  # "fast"
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            ka = t * tile + tx
            kb = t * tile + ty
            As[ty, tx] = A[row, ka] if row < M and ka < K else float32(0.0)
            Bs[ty, tx] = B[kb, col] if kb < K and col < N else float32(0.0)
            cuda.syncthreads()
            for k in range(tile):
                acc += As[ty, k] * Bs[k, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled
''',
    },
}
EXPECTED = {"03_tiled_gemm": 11}
EXPECTED_GPU = {"03_tiled_gemm": 11}
