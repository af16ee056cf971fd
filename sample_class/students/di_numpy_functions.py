"""Di uses NumPy's numeric API for everything: np.ceil, np.prod, np.minimum, np.multiply,
and a conditional expression for bound. Correct: full marks in both notebooks."""

NOTEBOOKS = ["01_arithmetic_intensity", "05_roofline"]
BASE = "solutions"
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_vector_add": '''import numpy as np


def ai_vector_add(n, bytes_per_element=4):
    if not (np.isfinite(n) and n >= 1 and np.floor(n) == n):
        raise ValueError(f"n must be a positive integer, got {n}")
    return n / (3.0 * n * bytes_per_element)
''',
        "ai_matmul": '''def ai_matmul(M, N, K, bytes_per_element=4):
    sizes = np.array([M, N, K], dtype=float)
    if np.any(sizes < 1) or np.any(np.floor(sizes) != sizes):
        raise ValueError(f"M, N and K must be positive integers, got {M}, {N}, {K}")
    return 2.0 * np.prod(sizes) / (np.dot([M, K, M], [K, N, N]) * bytes_per_element)
''',
        "ai_gemm_naive": '''def ai_gemm_naive(M, N, K, bytes_per_element=4):
    sizes = np.asarray([M, N, K], dtype=np.float64)
    if (sizes < 1).any() or (np.mod(sizes, 1) != 0).any():
        raise ValueError(f"M, N and K must be positive integers, got {M}, {N}, {K}")
    return float(np.divide(2 * M * N * K, (2 * K + 1) * M * N * bytes_per_element))
''',
        "ai_gemm_tiled": '''def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):
    for name, v in {"M": M, "N": N, "K": K, "tile": tile}.items():
        if v < 1 or np.floor(v) != v:
            raise ValueError(f"{name} must be a positive integer, got {v}")
    tiles = np.ceil(np.array([M, N, K]) / tile)
    loads = np.prod(tiles) * 2 * tile * tile
    return 2 * M * N * K / ((loads + M * N) * bytes_per_element)
''',
    },
    "05_roofline": {
        "critical_ai": '''import numpy as np


def critical_ai(peak_gflops, bandwidth_gbs):
    return np.divide(peak_gflops, bandwidth_gbs)
''',
        "attainable_gflops": '''def attainable_gflops(ai, peak_gflops, bandwidth_gbs):
    return np.minimum(peak_gflops, np.multiply(bandwidth_gbs, ai))
''',
        "bound": '''def bound(ai, peak_gflops, bandwidth_gbs):
    return "memory" if ai < critical_ai(peak_gflops, bandwidth_gbs) else "compute"
''',
        "measured_intensities": '''def measured_intensities(flops, level_bytes):
    names = list(level_bytes)
    moved = np.array([level_bytes[name] for name in names], dtype=float)
    return dict(zip(names, np.divide(flops, moved)))
''',
        "bounding_level": '''def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    names = np.array([*level_bytes, "compute"])
    moved = np.array([level_bytes[name] for name in level_bytes], dtype=float)
    rates = np.multiply([bandwidths_gbs[name] for name in level_bytes], 1e9)
    seconds = np.append(np.divide(moved, rates), flops / (peak_gflops * 1e9))
    return str(names[np.argmax(seconds)])
''',
    },
}
EXPECTED = {"01_arithmetic_intensity": 11, "05_roofline": 13}
