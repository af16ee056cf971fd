"""Measure the week's memory traffic per level on this GPU and write the table students get.

    python scripts/gpu/traffic_table.py --json course/perf/recorded_traffic.json \
        --markdown docs/traffic-table.md [--sizes 1024 2048 4096]

For each track (the solutions of source/week4, Numba and CUDA C) and each size, one ncu run of
the course's counters (:func:`course.perf.counters.measure_traffic`: naive, tiled 8, 16, 32,
one launch each, caches flushed before each). Then the roofs: the device copy bandwidth and
cuBLAS's FP32 rate measured by :mod:`course.perf.ceilings`, and L2 and L1 from Nsight
Compute's peak rates. Writes the JSON :mod:`course.perf.recorded` reads, a Markdown table, and
prints both the table and each tiled kernel's L1 bytes against the request model.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

from common import SOURCE, versions  # first: the shared setup (common.py)

from course.notebooks.measured_traffic import modelled_bytes
from course.notebooks.tracks import load_gemm_kernels
from course.perf import ceilings
from course.perf.counters import (
    NCU_OPTIONS,
    TRAFFIC_METRICS,
    find_ncu,
    measure_traffic,
    tool_version,
)
from course.runtime import backend


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", type=Path, required=True)
    parser.add_argument("--markdown", type=Path, required=True)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096])
    args = parser.parse_args()
    b = backend.detect()
    ncu = find_ncu()
    print("device:", b.device_name, "ncu:", ncu, tool_version(ncu) if ncu else "")
    runs, peaks = [], {}
    for track in ("Numba", "CUDA C"):
        kernels = load_gemm_kernels(track, folder=SOURCE)
        for n in args.sizes:
            t0 = time.perf_counter()
            counters = measure_traffic(kernels, n)
            print(f"{track} {n}: {time.perf_counter() - t0:.1f} s", counters.reason, flush=True)
            if not counters.measured:
                continue
            peaks = dict(counters.peak_gbs) or peaks
            runs += [asdict(r) for r in counters.runs]  # the file's fields (recorded.py)
    copy = ceilings.measure_copy_bandwidth()
    peak = ceilings.measure_fp32_peak()
    print(copy, peak, "ncu peaks GB/s:", peaks)
    driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                            capture_output=True, text=True, check=False).stdout.strip()
    command = (f"ncu {' '.join(NCU_OPTIONS)} --metrics {','.join(TRAFFIC_METRICS)} "
               "(python scripts/gpu/traffic_table.py)")
    doc = {
        "recorded": {"gpu": b.device_name, "date": datetime.date.today().isoformat(),
                     "command": command,
                     "versions": {"driver": driver, "ncu": tool_version(ncu) if ncu else "",
                                  "packages": versions()},
                     "notes": ["one launch per kernel, caches flushed before it (ncu's "
                               "--cache-control all), clocks as the card ran them "
                               "(--clock-control none); inputs uniform in [-1, 1)"]},
        "roofs": {"peak_gflops": round(peak.value_gflops, 1),
                  "bandwidth_gbs": {"DRAM": round(copy.value_gbs, 1),
                                    "L2": round(peaks.get("L2", 0.0), 1),
                                    "L1": round(peaks.get("L1", 0.0), 1)},
                  "sources": {"peak": "cublas", "DRAM": "copy", "L2": "ncu_peak",
                              "L1": "ncu_peak"},
                  "ncu_peak_gbs": {k: round(v, 1) for k, v in peaks.items()}},
        "runs": runs,
    }
    args.json.write_text(json.dumps(doc, indent=1) + "\n")
    lines = [f"# Memory traffic per level, {b.device_name}, {doc['recorded']['date']}", "",
             f"Command: `{command}`", "", "Versions: " + ", ".join(
                 f"{k} {v}" for k, v in doc["recorded"]["versions"].items()), "",
             "| track | kernel | N | time ms | GFLOP/s | DRAM read MB | DRAM write MB | L2 MB | "
             "L1 MB | model MB | L1 / model |", "|" + "---|" * 11]
    for r in runs:
        label = r["kernel"] if r["tile"] is None else f"tiled {r['tile']}"
        model = modelled_bytes(r["size"])[label]
        lines.append(f"| {r['track']} | {label} | {r['size']} | {r['seconds'] * 1e3:.3f} | "
                     f"{r['flops'] / r['seconds'] / 1e9:,.0f} | {r['dram_read'] / 1e6:,.1f} | "
                     f"{r['dram_write'] / 1e6:,.1f} | {r['l2'] / 1e6:,.1f} | "
                     f"{r['l1'] / 1e6:,.1f} | {model / 1e6:,.1f} | {r['l1'] / model:.4f} |")
    lines += ["", "Roofs: " + json.dumps(doc["roofs"], ensure_ascii=False)]
    args.markdown.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0 if runs else 1


if __name__ == "__main__":
    sys.exit(main())
