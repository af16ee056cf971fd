"""Hu imports the kernel API names themselves (from numba.cuda import jit, grid) and uses
np.float32 for the accumulator. Correct: full marks."""

NOTEBOOKS = ["02_naive_gemm"]
BASE = "solutions"
ANSWERS = {
    "02_naive_gemm": {
        "gemm_naive": '''import numpy as np
from numba.cuda import grid, jit


@jit
def gemm_naive(A, B, C):
    """One thread per element of C."""
    col, row = grid(2)
    M, N = C.shape
    if row >= M or col >= N:
        return
    total = np.float32(0.0)
    for k in range(A.shape[1]):
        total += A[row, k] * B[k, col]
    C[row, col] = total
''',
    },
}
EXPECTED = {"02_naive_gemm": 6}
