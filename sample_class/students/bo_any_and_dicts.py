"""Bo checks all sizes at once with any() over a dict literal, builds messages with
f-strings and comprehensions, and rounds up with math.ceil. Correct: full marks."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_vector_add": '''import math


def ai_vector_add(n, bytes_per_element=4):
    """n FLOPs over 3·n elements moved."""
    if any(not float(v).is_integer() or v < 1 for v in (n,)):
        raise ValueError(f"n must be a positive integer, got {n}")
    return n / (3 * n * bytes_per_element)
''',
        "ai_matmul": '''def ai_matmul(M, N, K, bytes_per_element=4):
    """2·M·N·K FLOPs; A, B read once, C written once."""
    sizes = {"M": M, "N": N, "K": K}
    bad = [name for name, v in sizes.items() if v <= 0 or v != int(v)]
    if bad:
        raise ValueError(f"{', '.join(bad)} must be positive integers, got {sizes}")
    return 2 * M * N * K / (sum([M * K, K * N, M * N]) * bytes_per_element)
''',
        "ai_gemm_naive": '''def ai_gemm_naive(M, N, K, bytes_per_element=4):
    """Each of M·N threads reads 2K elements and writes one."""
    if any(v <= 0 or v % 1 for v in (M, N, K)):
        raise ValueError(f"sizes must be positive integers: M={M}, N={N}, K={K}")
    elements = M * N * (2 * K + 1)
    return 2 * M * N * K / (elements * bytes_per_element)
''',
        "ai_gemm_tiled": '''def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):
    """Whole tiles of A and B per block and step, C once."""
    checks = {"M": M, "N": N, "K": K, "tile": tile}
    for name, value in checks.items():
        if value < 1 or math.floor(value) != value:
            raise ValueError(f"{name} must be a positive integer, got {value}")
    tiles = math.ceil(M / tile) * math.ceil(N / tile) * math.ceil(K / tile)
    return 2 * M * N * K / ((tiles * 2 * tile * tile + M * N) * bytes_per_element)
''',
    },
}
EXPECTED = {"01_arithmetic_intensity": 11}
