"""Cy converts arguments with int() inside try/except, rounds up with divmod, and keeps the
byte counting in one helper. Correct: full marks."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_vector_add": '''def as_size(name, value):
    """value as an int, or ValueError naming it."""
    try:
        whole = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} is not a number: {value!r}") from None
    if whole != value or whole <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return whole


def ceil_div(a, b):
    q, r = divmod(a, b)
    return q + (1 if r else 0)


def intensity(flops, elements, bytes_per_element):
    return flops / (elements * bytes_per_element)


def ai_vector_add(n, bytes_per_element=4):
    """c = a + b."""
    n = as_size("n", n)
    return intensity(n, 3 * n, bytes_per_element)
''',
        "ai_matmul": '''def ai_matmul(M, N, K, bytes_per_element=4):
    M, N, K = as_size("M", M), as_size("N", N), as_size("K", K)
    return intensity(2 * M * N * K, M * K + K * N + M * N, bytes_per_element)
''',
        "ai_gemm_naive": '''def ai_gemm_naive(M, N, K, bytes_per_element=4):
    M, N, K = (as_size(name, v) for name, v in zip(("M", "N", "K"), (M, N, K)))
    return intensity(2 * M * N * K, M * N * (2 * K + 1), bytes_per_element)
''',
        "ai_gemm_tiled": '''def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):
    M, N, K = as_size("M", M), as_size("N", N), as_size("K", K)
    tile = as_size("tile", tile)
    blocks = ceil_div(M, tile) * ceil_div(N, tile)
    elements = blocks * ceil_div(K, tile) * 2 * tile * tile + M * N
    return intensity(2 * M * N * K, elements, bytes_per_element)
''',
    },
}
EXPECTED = {"01_arithmetic_intensity": 11}
