"""Measure this GPU's ceilings for the roofline: streaming bandwidth and FP32 peak.

The streaming kernel is the course's solution of `vector_add` (notebook 05), read from the
source notebook the way the grader reads it; bytes are reads + writes (12 per element).

    python scripts/gpu_ceilings.py
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import course  # noqa: E402,F401
from autograder.samples import solution_cells  # noqa: E402
from course import backend, ceilings, devices  # noqa: E402
from course.kernel_source import bundle_from_cells  # noqa: E402

b = backend.detect()
if b.kind != "gpu":
    print(f"needs a GPU: {b.reason}")
    raise SystemExit(0)
vector_add = bundle_from_cells(solution_cells(ROOT, "05_roofline"), {"vector_add"}).load()[
    "vector_add"]
bw = ceilings.measure_bandwidth(vector_add)
copy = ceilings.measure_copy_bandwidth()
peak = ceilings.measure_fp32_peak()
spec = devices.lookup(b.device_name)
print(f"| quantity | measured | datasheet ({b.device_name}) |\n|---|---|---|")
print(f"| vector add (student kernel), GB/s | {bw.value:,.0f} | {spec.bandwidth_gbs:,.0f} |")
print(f"| device-to-device copy, GB/s | {copy.value:,.0f} | |")
print(f"| vector add / copy | {bw.value / copy.value:.0%} | (bar: ≥ 80 %) |")
print(f"| FP32 SGEMM (cuBLAS, TF32 off), GFLOP/s | {peak.value:,.0f} | "
      f"{spec.fp32_peak_gflops:,.0f} |")
