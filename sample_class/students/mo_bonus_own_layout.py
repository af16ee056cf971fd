"""Mo's register-tiled kernel keeps the A tile untransposed, loads exactly two elements of
each tile per thread, walks K with a while loop and tests the edges row by row. Correct: full
marks."""

NOTEBOOKS = ["07_bonus_register_tiling"]
BASE = "solutions"
ANSWERS = {
    "07_bonus_register_tiling": {
        "make_gemm_register_tiled": '''def make_gemm_register_tiled():
    BM, BN, BK, TM, TN = 64, 64, 8, 4, 4
    THREADS = 256  # a 16×16 block

    @cuda.jit
    def gemm(A, B, C):
        sA = cuda.shared.array((BM, BK), float32)  # sA[m, k]
        sB = cuda.shared.array((BK, BN), float32)  # sB[k, n]
        acc = cuda.local.array((TM, TN), float32)
        M = A.shape[0]
        K = A.shape[1]
        N = B.shape[1]
        t = cuda.threadIdx.y * 16 + cuda.threadIdx.x
        br = cuda.blockIdx.y * BM
        bc = cuda.blockIdx.x * BN
        for i in range(TM):
            for j in range(TN):
                acc[i, j] = 0.0
        k0 = 0
        while k0 < K:
            for part in range(2):  # 512 elements of each tile, two per thread
                e = t + part * THREADS
                m, k = e // BK, e % BK
                sA[m, k] = A[br + m, k0 + k] if br + m < M and k0 + k < K else 0.0
                kk, n = e // BN, e % BN
                sB[kk, n] = B[k0 + kk, bc + n] if k0 + kk < K and bc + n < N else 0.0
            cuda.syncthreads()
            for k in range(BK):
                for i in range(TM):
                    a = sA[cuda.threadIdx.y * TM + i, k]
                    for j in range(TN):
                        acc[i, j] += a * sB[k, cuda.threadIdx.x * TN + j]
            cuda.syncthreads()
            k0 += BK
        for i in range(TM):
            r = br + cuda.threadIdx.y * TM + i
            if r < M:
                for j in range(TN):
                    c = bc + cuda.threadIdx.x * TN + j
                    if c < N:
                        C[r, c] = acc[i, j]

    return gemm
''',
    },
}
EXPECTED = {"07_bonus_register_tiling": 3}
