"""Ed converts intensities with np.array(ai, dtype=float), picks the roof with np.where, and
writes vector_add's grid-stride loop as a while loop with the stride spelled out; her levels
are walked with while loops too.
Correct: full marks."""

NOTEBOOKS = ["05_roofline"]
BASE = "solutions"
ANSWERS = {
    "05_roofline": {
        "critical_ai": '''def critical_ai(peak_gflops: float, bandwidth_gbs: float) -> float:
    """Ridge point in FLOP/byte."""
    assert bandwidth_gbs > 0, "bandwidth must be positive"
    return peak_gflops / bandwidth_gbs
''',
        "attainable_gflops": '''import numpy as np


def attainable_gflops(ai, peak_gflops, bandwidth_gbs):
    ai = np.array(ai, dtype=float)
    memory = bandwidth_gbs * ai
    limit = np.where(memory < peak_gflops, memory, peak_gflops)
    return limit if limit.ndim else float(limit)
''',
        "bound": '''def bound(ai, peak_gflops, bandwidth_gbs):
    ridge = critical_ai(peak_gflops, bandwidth_gbs)
    kinds = {True: "memory", False: "compute"}
    return kinds[bool(ai < ridge)]
''',
        "vector_add": '''@cuda.jit
def vector_add(a, b, c):
    """Grid-stride loop, written out."""
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    stride = cuda.gridDim.x * cuda.blockDim.x
    n = c.shape[0]
    while i < n:
        c[i] = a[i] + b[i]
        i += stride
''',
        "measured_intensities": '''def measured_intensities(flops, level_bytes):
    names = list(level_bytes)
    out = {}
    i = 0
    while i < len(names):
        out[names[i]] = flops / level_bytes[names[i]]
        i += 1
    return out
''',
        "bounding_level": '''def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    best, longest = "compute", flops / (peak_gflops * 1e9)
    pending = list(level_bytes)
    while pending:
        level = pending.pop()
        seconds = level_bytes[level] / (bandwidths_gbs[level] * 1e9)
        best, longest = (level, seconds) if seconds > longest else (best, longest)
    return best
''',
    },
}
EXPECTED = {"05_roofline": 13}
