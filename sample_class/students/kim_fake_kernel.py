"""Kim's gemm_naive is not a CUDA kernel: an object whose [grid, block] returns NumPy's matmul.

Its results would be right, but the course requires a @cuda.jit kernel: 0.
"""

NOTEBOOKS = ["02_naive_gemm"]
BASE = "solutions"
ANSWERS = {
    "02_naive_gemm": {
        "gemm_naive": '''import numpy as np


class _Launcher:
    def __getitem__(self, config):
        def run(A, B, C):
            C[:] = np.asarray(A) @ np.asarray(B)
        return run


gemm_naive = _Launcher()
''',
    },
}
EXPECTED = {"02_naive_gemm": 0}
