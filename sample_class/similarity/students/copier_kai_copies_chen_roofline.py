"""Kai copied only Chen's notebook 5, short functions every one: names changed, comments
dropped, ``if/else`` made a conditional expression, a list comprehension kept, a debug print
added. The hardest copy to see: each answer is a few lines."""

NOTEBOOKS = ["05_roofline"]
BASE = "release"
COPIED = {"05_roofline": "honest_chen"}
ANSWERS = {
    "05_roofline": {
        "critical_ai": '''def critical_ai(peak_gflops, bandwidth_gbs):
    return peak_gflops * 1.0 / bandwidth_gbs
''',
        "attainable_gflops": '''def attainable_gflops(ai, peak_gflops, bandwidth_gbs):
    if np.isscalar(ai):
        return min(peak_gflops, ai * bandwidth_gbs)
    return np.array([min(peak_gflops, v * bandwidth_gbs) for v in ai])
''',
        "bound": '''def bound(ai, peak_gflops, bandwidth_gbs):
    return "memory" if ai * bandwidth_gbs < peak_gflops else "compute"
''',
        "vector_add": '''@cuda.jit
def vector_add(a, b, c):
    stride = cuda.blockDim.x * cuda.gridDim.x
    me = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    for j in range(me, len(c), stride):
        c[j] = a[j] + b[j]
''',
        "measured_intensities": '''def measured_intensities(flops, level_bytes):
    out = dict()
    for name, b in level_bytes.items():
        out[name] = flops / b if b else float("inf")
    print(out)
    return out
''',
        "bounding_level": '''def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    t_compute = flops / (peak_gflops * 1e9)
    worst = max(level_bytes, key=lambda n: level_bytes[n] / bandwidths_gbs[n])
    t_memory = level_bytes[worst] / (bandwidths_gbs[worst] * 1e9)
    return worst if t_memory > t_compute else "compute"
''',
    },
}
