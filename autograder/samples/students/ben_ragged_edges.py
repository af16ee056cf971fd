"""Ben's kernels are right only when the sizes are multiples of the block or tile.

His naive kernel has no bounds test (threads of the last partial block index past the
arrays). Everything else is correct.
"""

NOTEBOOKS = ["01_arithmetic_intensity", "02_naive_gemm"]
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
}
EXPECTED = {"01_arithmetic_intensity": 11, "02_naive_gemm": 0}
