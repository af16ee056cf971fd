"""Measure this GPU's roofline ceilings and write a markdown report.

    python scripts/gpu/ceilings.py --out ceilings.md

Three parts, all timed with course.perf.timing (CUDA events, warm-up, medians):

1. the course's measurements exactly as notebook 05 calls them: the copy ceiling, the
   bandwidth of the notebook's solution ``vector_add`` (read from the source notebook the way
   the grader reads it), and cuBLAS FP32; then the bandwidth bar of this GPU's class
   (course.gpu_classes: vector add ≥ 80 % of the copy on an H200);
2. a diagnosis table, every streaming kernel interleaved in one run, once with one launch per
   pair of CUDA events and once with ``course.perf.ceilings.STREAM_BATCH`` launches: the gap
   between the two columns is the host's launch cost that a single launch counts as GPU time;
3. in the same table, other ways to run vector add, for information: the solution on other
   grids (8 blocks per SM; one thread per element, where its loop runs once), last week's
   one-element-per-thread kernel without a loop (with 256- and 1024-thread blocks), and
   CuPy's own add: where does the gap to the copy come from?
"""

from __future__ import annotations

import argparse
import contextlib
import time
from pathlib import Path

import numpy as np
from common import ROOT, report_head  # first: the shared setup (common.py)

import course  # noqa: F401
from course.perf import ceilings
from course.runtime import backend, devices, gpu_classes

# isort: split
from numba import cuda  # noqa: E402  (after course, which picks GPU or simulator)


# The one-element-per-thread way, for comparison (module level: the simulator swaps the cuda
# module through a kernel's globals).
@cuda.jit
def one_per_thread(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def solution_vector_add():
    from course.trust.kernel_source import bundle_from_cells
    from sample_class import solution_cells

    return bundle_from_cells(solution_cells(ROOT, "05_roofline"), {"vector_add"}).load()[
        "vector_add"]


def streaming_table(vector_add, n: int, repeats: int) -> list[str]:
    """Every streaming kernel, interleaved, with batch 1 and with STREAM_BATCH."""
    from course.gemm.launch import quiet_numba
    from course.perf.timing import time_launches

    rng = np.random.default_rng(0)
    a, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    da, db, dc = cuda.to_device(a), cuda.to_device(b), cuda.device_array(n, np.float32)
    blocks, threads = ceilings.vector_add_launch(n)
    sms = backend.detect().sm_count or 1

    def launch(kernel, grid, block=threads):
        def run() -> None:
            with quiet_numba():
                kernel[grid, block](da, db, dc)
        return run

    full = -(-n // threads)
    per_sm = ceilings.STREAM_BLOCKS_PER_SM
    adds = {f"vector add (solution: grid-stride, {blocks:,} blocks = {per_sm} per SM)":
            launch(vector_add, blocks),
            f"vector add (solution), {8 * sms:,} blocks = 8 per SM": launch(vector_add, 8 * sms),
            f"vector add (solution), {full:,} blocks = one thread per element":
            launch(vector_add, full),
            "one element per thread, no loop, blocks of 256": launch(one_per_thread, full),
            "one element per thread, no loop, blocks of 1024":
            launch(one_per_thread, -(-n // 1024), 1024)}
    with contextlib.suppress(ceilings.MissingDependencyError):
        cupy = ceilings._import_cupy()
        ca, cb, cc = cupy.asarray(da), cupy.asarray(db), cupy.asarray(dc)
        adds["CuPy add (cupy.add, the library's elementwise kernel)"] = (
            lambda: cupy.add(ca, cb, out=cc))
    for name, run in adds.items():  # every variant must be right before it is timed
        dc.copy_to_device(np.zeros(n, np.float32))
        run()
        cuda.synchronize()
        assert np.array_equal(dc.copy_to_host(), a + b), name
    copies = ceilings.copy_launches(da, dc)
    nbytes = {**{k: float(ceilings.vector_add_bytes(n)) for k in adds},
              **{k: float(ceilings.copy_bytes(n)) for k in copies}}
    launches = {**adds, **copies}
    rows = {}
    for batch in (1, ceilings.STREAM_BATCH):
        t = time_launches(launches, repeats=repeats, nbytes=nbytes, batch=batch)
        for name, timing in t.items():
            rows.setdefault(name, []).append(timing)
    best_copy = max(rows[k][1].gbs for k in copies)
    lines = [f"| kernel ({n:,} floats per array) | GB/s, 1 launch per event pair | "
             f"GB/s, {ceilings.STREAM_BATCH} launches | median ms ({ceilings.STREAM_BATCH}) "
             "| vs fastest copy |", "|---|---|---|---|---|"]
    for name, (one, many) in rows.items():
        lines.append(f"| {name} | {one.gbs:,.0f} | {many.gbs:,.0f} | {many.median_ms:.4f} | "
                     f"{many.gbs / best_copy:.0%} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the markdown report here")
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    b = backend.detect()
    if b.kind != "gpu":
        print(f"needs a GPU: {b.reason}")
        return 0
    started = time.time()
    spec = devices.lookup(b.device_name or "")
    vector_add = solution_vector_add()
    copy = ceilings.measure_copy_bandwidth(repeats=args.repeats)
    add = ceilings.measure_bandwidth(vector_add, repeats=args.repeats)
    peak = ceilings.measure_fp32_peak()
    ratio = add.value_gbs / copy.value_gbs
    gpu_class = gpu_classes.for_device(b.device_name, b.compute_capability)
    bar = gpu_class.bandwidth_bar
    report = [
        *report_head("Roofline ceilings", b, when="%Y-%m-%d %H:%M UTC"),
        "- Command: `python3 scripts/gpu/ceilings.py --out ceilings.md`", "",
        "## As notebook 05 measures them", "",
        f"| quantity | measured | datasheet ({b.device_name}) |", "|---|---|---|",
        f"| copy ceiling, GB/s (reads + writes) | {copy.value:,.0f} | "
        f"{spec.bandwidth_gbs:,.0f} |" if spec else f"| copy, GB/s | {copy.value:,.0f} | — |",
        f"| vector add (notebook-05 solution), GB/s (reads + writes) | {add.value:,.0f} | |",
        f"| **vector add / copy** | **{ratio:.0%}** | bar ≥ {bar:.0%} "
        f"({gpu_class.describe()}): {'met' if ratio >= bar else 'NOT met'} |",
        f"| FP32 SGEMM (cuBLAS {ceilings.PEAK_GEMM_SIZE}³, TF32 off), GFLOP/s | "
        f"{peak.value:,.0f} | {spec.fp32_peak_gflops:,.0f} |" if spec else
        f"| FP32 SGEMM, GFLOP/s | {peak.value:,.0f} | — |", "",
        f"Copy: {copy.what}; {copy.note}.", "",
        "## Diagnosis: every streaming kernel interleaved in one run", "",
    ]
    report += streaming_table(vector_add, ceilings.STREAM_N, args.repeats)
    report += ["", f"(wall time {time.time() - started:.0f} s)"]
    text = "\n".join(report) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
