"""Gil imports numba itself and spells the whole kernel API through it
(numba.cuda.blockIdx.x, numba.cuda.shared.array, numba.float32). The simulator once failed
this spelling that a GPU accepts. Correct: full marks."""

NOTEBOOKS = ["02_naive_gemm", "03_tiled_gemm"]
BASE = "solutions"
_NAIVE = '''import numba


@numba.cuda.jit
def gemm_naive(A, B, C):
    row = numba.cuda.blockIdx.y * numba.cuda.blockDim.y + numba.cuda.threadIdx.y
    col = numba.cuda.blockIdx.x * numba.cuda.blockDim.x + numba.cuda.threadIdx.x
    if row < C.shape[0] and col < C.shape[1]:
        acc = numba.float32(0.0)
        for k in range(A.shape[1]):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
'''
ANSWERS = {
    "02_naive_gemm": {"gemm_naive": _NAIVE},
    "03_tiled_gemm": {
        "gemm_naive_again": _NAIVE,
        "make_gemm_tiled": '''def make_gemm_tiled(tile):
    @numba.cuda.jit
    def gemm_tiled(A, B, C):
        sA = numba.cuda.shared.array((tile, tile), numba.float32)
        sB = numba.cuda.shared.array((tile, tile), numba.float32)
        tx, ty = numba.cuda.threadIdx.x, numba.cuda.threadIdx.y
        row = numba.cuda.blockIdx.y * tile + ty
        col = numba.cuda.blockIdx.x * tile + tx
        M, K, N = A.shape[0], A.shape[1], B.shape[1]
        acc = numba.float32(0.0)
        for t in range(0, K, tile):
            sA[ty, tx] = A[row, t + tx] if row < M and t + tx < K else numba.float32(0.0)
            sB[ty, tx] = B[t + ty, col] if t + ty < K and col < N else numba.float32(0.0)
            numba.cuda.syncthreads()
            for k in range(tile):
                acc += sA[ty, k] * sB[k, tx]
            numba.cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled
''',
    },
}
EXPECTED = {"02_naive_gemm": 6, "03_tiled_gemm": 11}
EXPECTED_GPU = {"03_tiled_gemm": 14}
