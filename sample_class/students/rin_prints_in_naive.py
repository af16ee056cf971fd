"""Rin's kernels are right, and her tiled kernel is really tiled, but her naive kernel still has
the debugging line she wrote it with, in every thread: ``print("row", row, …)`` in notebook 2
and in the copy she pasted into notebook 3 (issue 32). The correctness checks (small shapes)
pass, her notebook shows the lines. On a GPU device printing makes every launch at 2048³ crawl,
so her naive kernel is not timed: the speedup check times her tiled kernel against the course's
reference naive kernel, passes, and begins with a note that says so and why (remove the print
before timing). She scores what the solution scores, on a GPU and without one (where the speedup
is not measured)."""

NOTEBOOKS = ["02_naive_gemm", "03_tiled_gemm"]
BASE = "solutions"
_NAIVE = '''@cuda.jit
def gemm_naive(A, B, C):
    """C = A·B, one thread per element of C (x ↔ column, y ↔ row)."""
    col, row = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]
        print("row", row, "col", col, "acc", acc)
        C[row, col] = acc
'''
ANSWERS = {"02_naive_gemm": {"gemm_naive": _NAIVE}, "03_tiled_gemm": {"gemm_naive_again": _NAIVE}}
EXPECTED = {"02_naive_gemm": 6, "03_tiled_gemm": 11}
EXPECTED_GPU = {"03_tiled_gemm": 14}
