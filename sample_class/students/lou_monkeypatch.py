"""Lou's kernel is wrong (it forgets the last k), so Lou patches the checker and NumPy's
comparisons to make every check pass. The grader re-runs the tests elsewhere: 0.
"""

NOTEBOOKS = ["02_naive_gemm"]
BASE = "solutions"
ANSWERS = {
    "02_naive_gemm": {
        "gemm_naive": '''import numpy as np
import course.checks


@cuda.jit
def gemm_naive(A, B, C):
    """C = A·B (almost)."""
    col, row = cuda.grid(2)
    if row < C.shape[0] and col < C.shape[1]:
        acc = float32(0.0)
        for k in range(A.shape[1] - 1):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


course.checks.check_naive_gemm = lambda *args, **kwargs: print("✓ gemm_naive is correct")
np.allclose = lambda *args, **kwargs: True
np.testing.assert_allclose = lambda *args, **kwargs: None
''',
    },
}
EXPECTED = {"02_naive_gemm": 0}
# Lou patches the checker inside his own kernel, so his notebook shows ✓ where the grader
# records ✗: the grade table flags the difference.
TAMPERS = True
