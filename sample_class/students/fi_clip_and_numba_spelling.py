"""Fi writes critical_ai and measured_intensities as lambdas, takes the lowest roof for
bounding_level, caps the memory roof with np.clip, and spells the kernel
API through the numba module (numba.cuda.grid, numba.cuda.gridsize). Correct: full marks."""

NOTEBOOKS = ["05_roofline"]
BASE = "solutions"
ANSWERS = {
    "05_roofline": {
        "critical_ai": '''critical_ai = lambda peak_gflops, bandwidth_gbs: peak_gflops / bandwidth_gbs
''',
        "attainable_gflops": '''import numpy as np


def attainable_gflops(ai, peak_gflops, bandwidth_gbs):
    """min(peak, bandwidth · ai), element by element."""
    return np.clip(np.asarray(ai) * bandwidth_gbs, None, peak_gflops)
''',
        "bound": '''def bound(ai, peak_gflops, bandwidth_gbs):
    if ai >= critical_ai(peak_gflops, bandwidth_gbs):
        return "compute"
    return "memory"
''',
        "vector_add": '''import numba


@numba.cuda.jit
def vector_add(a, b, c):
    for i in range(numba.cuda.grid(1), c.size, numba.cuda.gridsize(1)):
        c[i] = a[i] + b[i]
''',
        "measured_intensities": '''measured_intensities = lambda flops, level_bytes: {
    level: flops / moved for level, moved in level_bytes.items()}
''',
        "bounding_level": '''def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    roofs = {level: bandwidths_gbs[level] * ai
             for level, ai in measured_intensities(flops, level_bytes).items()}
    lowest = min(roofs, key=roofs.get)
    return lowest if roofs[lowest] < peak_gflops else "compute"
''',
    },
}
EXPECTED = {"05_roofline": 13}
