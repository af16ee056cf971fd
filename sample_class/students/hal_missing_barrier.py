"""Hal forgot the barrier between loading the tiles and using them. On the simulator
the race is found every time (a thread reads a tile element another thread has not stored
yet), so the verdict does not depend on luck. Memory traffic is still that of a tiled kernel.
"""

NOTEBOOKS = ["03_tiled_gemm"]
BASE = "solutions"
ANSWERS = {"03_tiled_gemm": {"make_gemm_tiled": 'def make_gemm_tiled(tile):\n    """Return a @cuda.jit kernel (A, B, C) computing C = A·B with tile×tile shared-memory tiles.\n\n    Launched by `course` with block (tile, tile) and grid ceil(N/tile) × ceil(M/tile);\n    x ↔ column, y ↔ row. Must be right for every M, N, K ≥ 1.\n    """\n    @cuda.jit\n    def gemm_tiled(A, B, C):\n        As = cuda.shared.array((tile, tile), float32)\n        Bs = cuda.shared.array((tile, tile), float32)\n        tx = cuda.threadIdx.x\n        ty = cuda.threadIdx.y\n        row = cuda.blockIdx.y * tile + ty\n        col = cuda.blockIdx.x * tile + tx\n        M, K = A.shape\n        N = B.shape[1]\n        acc = float32(0.0)\n        for t in range((K + tile - 1) // tile):\n            ka = t * tile + tx  # column of A this thread loads\n            kb = t * tile + ty  # row of B this thread loads\n            if row < M and ka < K:\n                As[ty, tx] = A[row, ka]\n            else:\n                As[ty, tx] = float32(0.0)\n            if kb < K and col < N:\n                Bs[ty, tx] = B[kb, col]\n            else:\n                Bs[ty, tx] = float32(0.0)\n            for k in range(tile):\n                acc += As[ty, k] * Bs[k, tx]\n            cuda.syncthreads()  # everyone is done with these tiles\n        if row < M and col < N:\n            C[row, col] = acc\n\n    return gemm_tiled\n'}}
EXPECTED = {'03_tiled_gemm': 3}
EXPECTED_GPU = {'03_tiled_gemm': 3}
