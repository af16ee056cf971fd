"""Jo writes every loop as a while loop, accumulates in a local named like the maths, and
keeps the sizes in constants of her own. Correct: full marks."""

NOTEBOOKS = ["02_naive_gemm", "03_tiled_gemm"]
BASE = "solutions"
_NAIVE = '''@cuda.jit
def gemm_naive(A, B, C):
    x, y = cuda.grid(2)
    M = C.shape[0]
    N = C.shape[1]
    K = A.shape[1]
    if x < N and y < M:
        c_xy = float32(0)
        k = 0
        while k < K:
            c_xy = c_xy + A[y, k] * B[k, x]
            k += 1
        C[y, x] = c_xy
'''
ANSWERS = {
    "02_naive_gemm": {"gemm_naive": _NAIVE},
    "03_tiled_gemm": {
        "gemm_naive_again": _NAIVE,
        "make_gemm_tiled": '''ZERO = 0.0


def make_gemm_tiled(tile):
    T = tile

    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((T, T), float32)
        Bs = cuda.shared.array((T, T), float32)
        i = cuda.threadIdx.y
        j = cuda.threadIdx.x
        r = cuda.blockIdx.y * T + i
        c = cuda.blockIdx.x * T + j
        M, K = A.shape
        N = B.shape[1]
        acc = float32(ZERO)
        k0 = 0
        while k0 < K:
            As[i, j] = A[r, k0 + j] if (r < M and k0 + j < K) else ZERO
            Bs[i, j] = B[k0 + i, c] if (k0 + i < K and c < N) else ZERO
            cuda.syncthreads()
            k = 0
            while k < T:
                acc += As[i, k] * Bs[k, j]
                k += 1
            cuda.syncthreads()
            k0 += T
        if r < M and c < N:
            C[r, c] = acc

    return gemm_tiled
''',
    },
}
EXPECTED = {"02_naive_gemm": 6, "03_tiled_gemm": 11}
EXPECTED_GPU = {"03_tiled_gemm": 14}
