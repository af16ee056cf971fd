"""Io factors his kernels into @cuda.jit(device=True) helpers, returns early from threads
outside C in the naive kernel, and uses cuda.blockDim instead of the tile in the tiled one.
Correct: full marks."""

NOTEBOOKS = ["02_naive_gemm", "03_tiled_gemm"]
BASE = "solutions"
_NAIVE = '''@cuda.jit(device=True)
def dot_row_col(A, B, row, col):
    """Dot product of row `row` of A and column `col` of B, in float32."""
    acc = float32(0.0)
    for k in range(A.shape[1]):
        acc += A[row, k] * B[k, col]
    return acc


@cuda.jit
def gemm_naive(A, B, C):
    col, row = cuda.grid(2)
    if row >= C.shape[0] or col >= C.shape[1]:
        return
    C[row, col] = dot_row_col(A, B, row, col)
'''
ANSWERS = {
    "02_naive_gemm": {"gemm_naive": _NAIVE},
    "03_tiled_gemm": {
        "gemm_naive_again": _NAIVE,
        "make_gemm_tiled": '''@cuda.jit(device=True)
def load_or_zero(M, r, c):
    """M[r, c], or 0 outside M (the padding of partial tiles)."""
    if r < M.shape[0] and c < M.shape[1]:
        return M[r, c]
    return float32(0.0)


def make_gemm_tiled(tile):
    @cuda.jit
    def kernel(A, B, C):
        a_tile = cuda.shared.array(shape=(tile, tile), dtype=float32)
        b_tile = cuda.shared.array(shape=(tile, tile), dtype=float32)
        x = cuda.threadIdx.x
        y = cuda.threadIdx.y
        size = cuda.blockDim.x
        row = cuda.blockIdx.y * size + y
        col = cuda.blockIdx.x * size + x
        steps = (A.shape[1] + size - 1) // size
        acc = float32(0.0)
        for s in range(steps):
            a_tile[y, x] = load_or_zero(A, row, s * size + x)
            b_tile[y, x] = load_or_zero(B, s * size + y, col)
            cuda.syncthreads()
            for k in range(tile):
                acc += a_tile[y, k] * b_tile[k, x]
            cuda.syncthreads()
        if row < C.shape[0] and col < C.shape[1]:
            C[row, col] = acc

    return kernel
''',
    },
}
EXPECTED = {"02_naive_gemm": 6, "03_tiled_gemm": 11}
EXPECTED_GPU = {"03_tiled_gemm": 14}
