"""Nia writes vector add the way notebooks 2 and 3 wrote GEMM: one element per thread, no
loop. It is right whenever the grid has a thread for every element, and leaves the rest of
c unwritten when the grid is smaller, which the check's one-block grid shows at once. Her
roofline functions are correct.
"""

NOTEBOOKS = ["05_roofline"]
BASE = "solutions"
ANSWERS = {
    "05_roofline": {
        "vector_add": '''@cuda.jit
def vector_add(a, b, c):
    """c[i] = a[i] + b[i], one thread per element."""
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]
''',
    },
}
# vector_add_correct (2 points) and vector_add_hidden (1 point) fail; the rest is right.
EXPECTED = {"05_roofline": 10}
