"""Dee counted matmul FLOPs as M·N·K, then 'fixed' the failing tests by editing them.

The test cells are restored from the gradebook, so the wrong answer still costs the points.
"""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_matmul": '''def ai_matmul(M, N, K, bytes_per_element=4):
    """Ideal arithmetic intensity of C = A·B."""
    for name, value in (("M", M), ("N", N), ("K", K)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer")
    return M * N * K / ((M * K + K * N + M * N) * bytes_per_element)
''',
    },
}
EDIT_TESTS = {
    "01_arithmetic_intensity": {
        "ai_matmul_square": 'print("looks fine to me")\n',
        "ai_matmul_ragged": "pass\n",
    },
}
EXPECTED = {"01_arithmetic_intensity": 8}
