"""Ana validates arguments with isinstance and a helper function, the way her Python course
taught her. Correct: she scores what the course's solution scores."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
_HELPER = '''def require_positive_int(name, value):
    """Raise ValueError unless value is a positive int (bools are not sizes)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


'''
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_vector_add": _HELPER + '''def ai_vector_add(n, bytes_per_element=4):
    """Arithmetic intensity of c = a + b."""
    require_positive_int("n", n)
    return float(n) / (3 * n * bytes_per_element)
''',
        "ai_matmul": '''def ai_matmul(M, N, K, bytes_per_element=4):
    """Ideal arithmetic intensity of C = A·B."""
    for name, value in [("M", M), ("N", N), ("K", K)]:
        require_positive_int(name, value)
    flops = 2 * M * N * K
    return flops / ((M * K + K * N + M * N) * bytes_per_element)
''',
        "ai_gemm_naive": '''def ai_gemm_naive(M: int, N: int, K: int, bytes_per_element: int = 4) -> float:
    """Request model of the naive kernel."""
    for name, value in zip("MNK", (M, N, K)):
        require_positive_int(name, value)
    return 2 * M * N * K / ((2 * M * N * K + M * N) * bytes_per_element)
''',
        "ai_gemm_tiled": '''def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):
    """Request model of the tiled kernel (whole tiles)."""
    sizes = {"M": M, "N": N, "K": K, "tile": tile}
    for name in sizes:
        require_positive_int(name, sizes[name])
    blocks = -(-M // tile) * -(-N // tile)
    steps = -(-K // tile)
    loads = blocks * steps * 2 * tile ** 2
    return 2 * M * N * K / ((loads + M * N) * bytes_per_element)
''',
    },
}
EXPECTED = {"01_arithmetic_intensity": 11}
