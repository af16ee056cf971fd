"""Gus's ai_matmul calls os._exit, and so does his answer cell: the notebook's kernel dies.

He keeps his row in the table (with the reason); the cells that use ai_matmul score 0,
the rest are still graded.
"""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_matmul": '''import os


def ai_matmul(M, N, K, bytes_per_element=4):
    """Ideal arithmetic intensity of C = A·B."""
    os._exit(1)


os._exit(1)
''',
    },
}
EXPECTED = {"01_arithmetic_intensity": 6}
