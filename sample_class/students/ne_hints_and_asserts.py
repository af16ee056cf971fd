"""Ne writes type hints everywhere, guards with assert and try/except, and uses math.fsum and
a small table of mistakes of her own. Correct: full marks."""

NOTEBOOKS = ["01_arithmetic_intensity", "05_roofline"]
BASE = "solutions"
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_vector_add": '''import math
from typing import Union

Number = Union[int, float]


def positive_integer(name: str, value: Number) -> int:
    try:
        assert float(value).is_integer() and value >= 1
    except AssertionError:
        raise ValueError(f"{name} must be a positive integer, got {value!r}") from None
    return int(value)


def ai_vector_add(n: int, bytes_per_element: int = 4) -> float:
    n = positive_integer("n", n)
    return n / math.fsum([n, n, n]) / bytes_per_element
''',
        "ai_matmul": '''def ai_matmul(M: int, N: int, K: int, bytes_per_element: int = 4) -> float:
    M, N, K = [positive_integer(name, v) for name, v in (("M", M), ("N", N), ("K", K))]
    moved: float = math.fsum([M * K, K * N, M * N]) * bytes_per_element
    return 2 * M * N * K / moved
''',
        "ai_gemm_naive": '''def ai_gemm_naive(M: int, N: int, K: int, bytes_per_element: int = 4) -> float:
    M, N, K = map(positive_integer, ("M", "N", "K"), (M, N, K))
    per_thread = {"flops": 2 * K, "elements": 2 * K + 1}
    return per_thread["flops"] / (per_thread["elements"] * bytes_per_element)
''',
        "ai_gemm_tiled": '''def ai_gemm_tiled(M: int, N: int, K: int, tile: int, bytes_per_element: int = 4) -> float:
    M, N, K, tile = (positive_integer(*pair) for pair in
                     zip(["M", "N", "K", "tile"], [M, N, K, tile]))
    tiles_of = lambda size: (size + tile - 1) // tile  # noqa: E731
    elements = tiles_of(M) * tiles_of(N) * tiles_of(K) * 2 * tile * tile + M * N
    return 2 * M * N * K / (elements * bytes_per_element)
''',
    },
    "05_roofline": {
        "critical_ai": '''def critical_ai(peak_gflops: float, bandwidth_gbs: float) -> float:
    return float(peak_gflops) / float(bandwidth_gbs)
''',
        "attainable_gflops": '''import numpy as np


def attainable_gflops(ai, peak_gflops: float, bandwidth_gbs: float):
    if np.ndim(ai) == 0:
        return min(peak_gflops, bandwidth_gbs * ai)
    return np.array([min(peak_gflops, bandwidth_gbs * x) for x in ai])
''',
        "bound": '''def bound(ai: float, peak_gflops: float, bandwidth_gbs: float) -> str:
    try:
        below = ai < critical_ai(peak_gflops, bandwidth_gbs)
    except ZeroDivisionError:
        below = False
    return "memory" if below else "compute"
''',
        "measured_intensities": '''def measured_intensities(flops: float, level_bytes: dict[str, float]) -> dict[str, float]:
    assert all(moved > 0 for moved in level_bytes.values()), "every level moved some bytes"
    return {level: float(flops) / float(moved) for level, moved in level_bytes.items()}
''',
        "bounding_level": '''def bounding_level(flops: float, level_bytes: dict, bandwidths_gbs: dict,
                   peak_gflops: float) -> str:
    assert set(level_bytes) == set(bandwidths_gbs), "one bandwidth per level"
    times = sorted((moved / (bandwidths_gbs[k] * 1e9), k) for k, moved in level_bytes.items())
    slowest_time, slowest = times[-1]
    return slowest if slowest_time > flops / (peak_gflops * 1e9) else "compute"
''',
    },
}
EXPECTED = {"01_arithmetic_intensity": 11, "05_roofline": 13}
