"""Ben's kernels are right only when the sizes are multiples of the block or tile.

His naive kernel has no bounds test (threads of the last partial block index past the
arrays), and his tiled kernel loops K // tile times and never zero-pads, like the SYCL
write-up's. His formulas are correct.
"""

NOTEBOOKS = ["01_arithmetic_intensity", "02_naive_gemm", "03_tiled_gemm"]
BASE = "solutions"
ANSWERS = {
    "02_naive_gemm": {
        "gemm_naive": '''@cuda.jit
def gemm_naive(A, B, C):
    """C = A·B, one thread per element of C."""
    col, row = cuda.grid(2)
    acc = float32(0.0)
    for k in range(A.shape[1]):
        acc += A[row, k] * B[k, col]
    C[row, col] = acc
''',
    },
    "03_tiled_gemm": {"make_gemm_tiled": 'def make_gemm_tiled(tile):\n    """Tiled GEMM that assumes M, N and K are multiples of the tile (like the SYCL write-up)."""\n    @cuda.jit\n    def gemm_tiled(A, B, C):\n        As = cuda.shared.array((tile, tile), float32)\n        Bs = cuda.shared.array((tile, tile), float32)\n        tx = cuda.threadIdx.x\n        ty = cuda.threadIdx.y\n        row = cuda.blockIdx.y * tile + ty\n        col = cuda.blockIdx.x * tile + tx\n        K = A.shape[1]\n        acc = float32(0.0)\n        for t in range(K // tile):\n            As[ty, tx] = A[row, t * tile + tx]\n            Bs[ty, tx] = B[t * tile + ty, col]\n            cuda.syncthreads()\n            for k in range(tile):\n                acc += As[ty, k] * Bs[k, tx]\n            cuda.syncthreads()\n        C[row, col] = acc\n\n    return gemm_tiled\n'},
}
EXPECTED = {"01_arithmetic_intensity": 11, "02_naive_gemm": 0, "03_tiled_gemm": 0}
