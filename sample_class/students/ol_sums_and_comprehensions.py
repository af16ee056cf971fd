"""Ol sums comprehensions, counts tiles as the lengths of ranges, and checks sizes with all().
Correct: full marks."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_vector_add": '''def valid(*sizes):
    return all(s == int(s) and s > 0 for s in sizes)


def ai_vector_add(n, bytes_per_element=4):
    if not valid(n):
        raise ValueError(f"n must be a positive integer, got {n}")
    reads, writes = 2 * n, n
    return n / ((reads + writes) * bytes_per_element)
''',
        "ai_matmul": '''def ai_matmul(M, N, K, bytes_per_element=4):
    if not valid(M, N, K):
        raise ValueError(f"M, N and K must be positive integers, got M={M}, N={N}, K={K}")
    shapes = [(M, K), (K, N), (M, N)]
    return 2 * M * N * K / (sum(r * c for r, c in shapes) * bytes_per_element)
''',
        "ai_gemm_naive": '''def ai_gemm_naive(M, N, K, bytes_per_element=4):
    if not valid(M, N, K):
        raise ValueError(f"M, N and K must be positive integers, got M={M}, N={N}, K={K}")
    return (2 * K) / ((K + K + 1) * bytes_per_element)
''',
        "ai_gemm_tiled": '''def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):
    if not valid(tile):
        raise ValueError(f"tile must be a positive integer, got {tile}")
    if not valid(M, N, K):
        raise ValueError(f"M, N and K must be positive integers, got M={M}, N={N}, K={K}")
    starts = lambda size: range(0, size, tile)  # noqa: E731
    tiles = [len(starts(size)) for size in (M, N, K)]
    loads = 2 * tile * tile * tiles[0] * tiles[1] * tiles[2]
    return 2 * M * N * K / ((loads + M * N) * bytes_per_element)
''',
    },
}
EXPECTED = {"01_arithmetic_intensity": 11}
