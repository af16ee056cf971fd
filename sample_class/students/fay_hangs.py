"""Fay's notebook hangs twice: a function loops forever for large n, and a cell she added
sleeps for an hour. Both are cut off by the per-cell timeout; grading goes on.
"""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_vector_add": '''def ai_vector_add(n, bytes_per_element=4):
    """Vector add intensity, with a loop that never ends for large n."""
    if int(n) != n or n < 1:
        raise ValueError("n must be a positive integer")
    i = 0
    while n > 999_999:
        i = i + 1
    return n / (3 * n * bytes_per_element)
''',
    },
}
APPEND = {"01_arithmetic_intensity": ["import time\ntime.sleep(3600)  # 'waiting for the GPU'\n"]}
EXPECTED = {"01_arithmetic_intensity": 10}
