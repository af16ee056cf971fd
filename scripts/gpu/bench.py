"""Measure the week-4 kernels on a real GPU and write a markdown report.

Run on a GPU machine (see scripts/gpu/session.sh, which also installs what is missing):

    python scripts/gpu/bench.py --out results.md [--quick]

Kernels are the course's own solutions, read from the source notebooks with the same
extraction the grader uses, plus two teaching variants (the swapped naive mapping and a
"tiled" kernel that still reads global memory in its inner loop, from the sample class).
Everything is timed with course.perf.timing (CUDA events, warm-up, medians, interleaved).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from common import ROOT, cublas_ms, report_head  # first: the shared setup (common.py)

import course  # noqa: F401
from course.runtime import backend

sys.setswitchinterval(5e-4)


def kernels() -> dict:
    from course.trust.kernel_source import bundle_from_cells
    from sample_class import sample_students, solution_cells

    naive_src = solution_cells(ROOT, "02_naive_gemm")
    tiled_src = solution_cells(ROOT, "03_tiled_gemm")
    ns = bundle_from_cells(naive_src, {"gemm_naive"}).load()
    nt = bundle_from_cells(tiled_src, {"make_gemm_tiled"}).load()
    out = {"gemm_naive": ns["gemm_naive"], "make_gemm_tiled": nt["make_gemm_tiled"]}
    slow = sample_students().get("ivy_global_inner_loop")
    if slow is not None:
        src = tiled_src + list(slow.ANSWERS["03_tiled_gemm"].values())
        out["slow_tiled"] = bundle_from_cells(src, {"make_gemm_tiled"}).load()["make_gemm_tiled"]
    return out


def gemm_table(k: dict, sizes: list[int], repeats: int, batch: int = 1) -> list[str]:
    from course.gemm.launch import naive, tiled
    from course.perf.timing import time_gemm

    lines = ["| size | kernel | median ms | GFLOP/s | vs naive |", "|---|---|---|---|---|"]
    for n in sizes:
        gemms = [naive(k["gemm_naive"])] + [tiled(k["make_gemm_tiled"], t) for t in (8, 16, 32)]
        if "slow_tiled" in k:
            gemms.append(tiled(k["slow_tiled"], 32))
            gemms[-1] = type(gemms[-1])("'tiled' 32 reading global in inner loop",
                                        gemms[-1].kernel, gemms[-1].launch_for, 32)
        t = time_gemm(gemms, n, n, n, repeats=repeats, batch=batch)
        cub = cublas_ms(n, repeats, batch)
        base = t["gemm_naive"].median_ms
        for name, tm in t.items():
            lines.append(f"| {n}³ | {name} | {tm.median_ms:.3f} | {tm.gflops:,.0f} | "
                         f"{base / tm.median_ms:.2f}× |")
        if cub:
            gf = 2 * n**3 / (cub * 1e6)
            lines.append(f"| {n}³ | cuBLAS SGEMM (cupy.matmul, TF32 off) | {cub:.3f} | {gf:,.0f}"
                         f" | {base / cub:.1f}× |")
    return lines


def stability(k: dict, runs: int) -> list[str]:
    """Repeat the graded speedup measurement; report the ratios and verdicts."""
    import json
    import tempfile

    from course.checks import speedup
    from course.trust.kernel_source import bundle_from_objects

    ref = bundle_from_objects({"gemm_naive": k["gemm_naive"]})
    fd, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(fd, "w") as fh:
        json.dump({"gemm_naive": ref.to_json()}, fh)
    os.environ[speedup.REFERENCE_ENV] = path
    lines = [f"Graded speedup check repeated {runs}× (size {speedup.SPEEDUP_SIZE}³, tile "
             f"{speedup.SPEEDUP_TILE}, threshold {speedup.SPEEDUP_THRESHOLD}× vs the reference "
             "naive kernel, each run a fresh process):", "",
             "| kernel | ratios (min / median / max) | verdicts |", "|---|---|---|"]
    for label, factory in (("reference tiled solution", k["make_gemm_tiled"]),
                           ("'tiled' reading global in inner loop", k.get("slow_tiled"))):
        if factory is None:
            continue
        ratios, verdicts = [], []
        for _ in range(runs):
            r = speedup.measure_speedup(factory, k["gemm_naive"])
            ratios.append(r.vs_reference)
            verdicts.append("pass" if r.vs_reference >= r.threshold else "fail")
        lines.append(f"| {label} | {min(ratios):.2f} / {statistics.median(ratios):.2f} / "
                     f"{max(ratios):.2f} | {verdicts.count('pass')} pass, "
                     f"{verdicts.count('fail')} fail |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--stability-runs", type=int, default=20)
    parser.add_argument("--batch", type=int, default=1,
                        help="launches per pair of CUDA events (course.perf.timing)")
    args = parser.parse_args()
    b = backend.detect()
    if b.kind != "gpu":
        print(f"needs a GPU: {backend.describe(b)}")
        return 0
    started = time.time()
    k = kernels()
    report = [*report_head("GPU results", b),
              "- Command: `bash scripts/gpu/session.sh` (runs `python scripts/gpu/bench.py`)",
              "", f"## GEMM, FP32 (medians of 20 interleaved samples of {args.batch} launch(es) "
              "each, CUDA events)", ""]
    sizes = [1024, 2048] if args.quick else [1024, 2048, 4096]
    report += gemm_table(k, sizes, repeats=20, batch=args.batch)
    print("\n".join(report), flush=True)
    report += ["", "## Stability of the graded speedup verdict", ""]
    report += stability(k, 3 if args.quick else args.stability_runs)
    report += ["", f"(bench wall time {time.time() - started:.0f} s)"]
    args.out.write_text("\n".join(report) + "\n")
    print("\n".join(report[-8:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
