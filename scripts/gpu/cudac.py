"""The CUDA C track on a real GPU: correctness, speedup calibration, the write-up's experiment,
racecheck, occupancy from the driver, and the register-tiling ladder against cuBLAS.

    python scripts/gpu/cudac.py                # everything (about 3–6 minutes on an H200)
    python scripts/gpu/cudac.py --quick        # fewer runs, for a smoke test
    python scripts/gpu/cudac.py --only experiment,occupancy   # notebooks 04/06's paths, ~30 s
    OUT=/some/dir python scripts/gpu/cudac.py  # also write gpu_cudac.json there

Needs CuPy and a GPU; needs no Numba (the GPU image's numpy 2.5 breaks Numba's compiler).
g++ is needed for the parts judged on the CPU runner (barrier watch, read counts); without it
those are reported as not run. Sections:

1. **correctness** — the course's reference kernels (the solutions of notebooks 02c and 03c,
   read from the source notebooks) through the graded checks on the GPU, and two wrong ones:
   a "tiled" kernel that multiplies from global memory (must pass correctness, fail traffic)
   and one without the first barrier (must fail).
2. **speedup** — ``--runs`` same-run ratios at 2048³ (and 1024³): the reference naive kernel
   against tile 16, tile 32 and the fake tile-32 kernel, each run the median of 20 interleaved
   launches, as the grader measures; the distributions calibrate SPEEDUP_THRESHOLD_CUDA. Then
   a few runs through the grader's own path (a fresh process per measurement).
3. **the CUDA C write-up's experiment** — A[i] = (i % 13) − 6, B[i] = (i % 7) − 3, 1024³,
   TILE 32, 50 iterations timed with CUDA events, max |naive − tiled| (must be 0), and cuBLAS,
   through notebook 04's own path (course.perf.cuda_experiment: every timed batch verified); a
   kernel that skips its work at the timed size must be refused.
4. **racecheck** — compute-sanitizer's racecheck on the missing-barrier kernel, if found.
5. **occupancy** — ``RawKernel.attributes`` per TILE, NVRTC's ptxas numbers for the same
   architecture and what notebook 06's sweep reads (course.kernel_models.cuda_counts), the
   course's occupancy model and the driver's occupancy API.
6. **ladder** — scripts/reference/cudac_ladder.py's rungs at 4096³ next to tile 32 and cuBLAS (FP32,
   ``CUPY_TF32=0``), each first checked against cuBLAS.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import ROOT, SOURCE, versions  # first: the shared setup (common.py)

from course.gemm.cudac import cpu, gpu, nvrtc
from course.gemm.cudac.source import NAIVE, TILED, KernelSpec

RESULTS: dict[str, Any] = {}
SUMMARY: list[tuple[str, str]] = []


def say(text: str) -> None:
    print(text, flush=True)


def notebook_string(notebook: str, name: str) -> str:
    """The string literal a source notebook's solution assigns to ``name``."""
    for cell in json.loads((SOURCE / notebook).read_text())["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] != "code" or name not in text:
            continue
        for node in ast.parse(text).body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == name:
                return str(node.value.value)
    raise SystemExit(f"{notebook} assigns no string to {name}")


def kernels() -> dict[str, str]:
    naive = notebook_string("02c_naive_gemm_cuda.ipynb", "GEMM_NAIVE_CUDA")
    tiled = notebook_string("03c_tiled_gemm_cuda.ipynb", "GEMM_TILED_CUDA")
    fake = tiled.replace(
        "            acc += As[ty][k] * Bs[k][tx];",
        "            if (row < M && col < N && t * TILE + k < K)\n"
        "                acc += A[row * K + t * TILE + k] * B[(t * TILE + k) * N + col];")
    racy = tiled.replace("        __syncthreads();  // the tiles are complete\n", "")
    assert fake != tiled and racy != tiled, "the solution changed: update the mutations"
    return {"naive": naive, "tiled": tiled, "fake": fake, "racy": racy}


# ---------------------------------------------------------------------------------------------
# 1. Correctness through the graded checks.


def section_correctness(src: dict[str, str]) -> None:
    from course.checks.cuda_gemm import (
        check_naive_gemm_cuda,
        check_tiled_gemm_cuda,
        check_traffic_cuda,
    )

    out: dict[str, str] = {}

    def attempt(label: str, fn: Any, expect_pass: bool) -> None:
        try:
            fn()
            verdict = "pass"
        except Exception as exc:  # noqa: BLE001 - every verdict is reported
            verdict = f"fail: {type(exc).__name__}: {str(exc)[:160]}"
        ok = verdict.startswith("pass") == expect_pass
        out[label] = verdict
        say(f"  {'ok ' if ok else 'BAD'} {label}: {verdict}")
        SUMMARY.append((f"check {label}", ("as expected: " if ok else "UNEXPECTED: ")
                        + verdict.split(":")[0]))

    attempt("naive reference", lambda: check_naive_gemm_cuda(src["naive"], quiet=True), True)
    attempt("tiled reference", lambda: check_tiled_gemm_cuda(src["tiled"], quiet=True), True)
    attempt("tiled traffic", lambda: check_traffic_cuda(src["tiled"], quiet=True), True)
    attempt("fake tiled correctness", lambda: check_tiled_gemm_cuda(src["fake"], quiet=True),
            True)
    attempt("fake tiled traffic", lambda: check_traffic_cuda(src["fake"], quiet=True), False)
    attempt("missing barrier", lambda: check_tiled_gemm_cuda(src["racy"], quiet=True), False)
    RESULTS["correctness"] = out


# ---------------------------------------------------------------------------------------------
# 2. Speedup distributions.


def _inputs(n: int, seed: int = 0) -> tuple[Any, Any, Any]:
    cp = gpu.cupy_module()
    rng = np.random.default_rng(seed)
    A = cp.asarray(rng.uniform(-1, 1, (n, n)).astype(np.float32))
    B = cp.asarray(rng.uniform(-1, 1, (n, n)).astype(np.float32))
    return A, B, cp.empty((n, n), cp.float32)


def _launcher(kernel: Any, grid: tuple[int, int], block: tuple[int, int], args: tuple) -> Any:
    def launch() -> None:
        kernel(grid, block, args)

    return launch


def contract_launches(src: dict[str, str], n: int, names: dict[str, tuple[str, int | None]]
                      ) -> dict[str, Any]:
    """Launch functions at n³ for {label: (kernel key, tile or None)}."""
    A, B, C = _inputs(n)
    args = (np.int32(n), np.int32(n), np.int32(n), A, B, C)
    out = {}
    for label, (key, tile) in names.items():
        spec = NAIVE if tile is None else TILED
        block = 16 if tile is None else tile
        grid = ((n + block - 1) // block, (n + block - 1) // block)
        out[label] = _launcher(gpu.raw_kernel(src[key], spec, tile), grid, (block, block), args)
    return out


def section_speedup(src: dict[str, str], runs: int, grader_runs: int) -> None:
    from course.checks.cuda_speedup import SPEEDUP_THRESHOLD_CUDA, measure_speedup_cuda

    variants = {"naive": ("naive", None), "tile 16": ("tiled", 16), "tile 32": ("tiled", 32),
                "fake tile 32": ("fake", 32)}
    result: dict[str, Any] = {"threshold": SPEEDUP_THRESHOLD_CUDA}
    for n in (2048, 1024):
        launches = contract_launches(src, n, variants)
        ratios: dict[str, list[float]] = {k: [] for k in variants if k != "naive"}
        medians: dict[str, list[float]] = {k: [] for k in variants}
        for _ in range(runs):
            samples = gpu.time_launches(launches, repeats=20)
            med = {k: float(np.median(v)) for k, v in samples.items()}
            for k in medians:
                medians[k].append(med[k])
            for k in ratios:
                ratios[k].append(med["naive"] / med[k])
        stats = {k: {"min": min(v), "median": float(np.median(v)), "max": max(v)}
                 for k, v in ratios.items()}
        result[str(n)] = {"ratios": ratios, "stats": stats, "median_ms": medians}
        say(f"  {n}³, {runs} runs, naive ÷ variant (min / median / max):")
        for k, st in stats.items():
            say(f"    {k:13s} {st['min']:.3f} / {st['median']:.3f} / {st['max']:.3f}")
        SUMMARY.append((f"speedup {n}³ tile 32 (min–max)",
                        f"{stats['tile 32']['min']:.2f}–{stats['tile 32']['max']:.2f}×"))
        SUMMARY.append((f"speedup {n}³ fake (min–max)",
                        f"{stats['fake tile 32']['min']:.2f}–{stats['fake tile 32']['max']:.2f}×"))
    fake_max = result["2048"]["stats"]["fake tile 32"]["max"]
    real_min = result["2048"]["stats"]["tile 32"]["min"]
    suggested = float(np.sqrt(fake_max * real_min))
    result["suggested_threshold"] = suggested
    say(f"  2048³: fake ≤ {fake_max:.3f}, tile 32 ≥ {real_min:.3f}; geometric middle "
        f"{suggested:.3f} (SPEEDUP_THRESHOLD_CUDA = {SPEEDUP_THRESHOLD_CUDA})")
    SUMMARY.append(("threshold: set / suggested", f"{SPEEDUP_THRESHOLD_CUDA} / {suggested:.2f}"))
    grader: dict[str, list[float]] = {"tiled": [], "fake": []}
    for _ in range(grader_runs):
        for key in grader:
            try:
                report = measure_speedup_cuda(src[key], src["naive"])
                grader[key].append(report.vs_own_naive)
            except Exception as exc:  # noqa: BLE001
                say(f"  grader path ({key}) failed: {type(exc).__name__}: {exc}")
                grader[key].append(float("nan"))
    result["grader_path"] = grader
    say(f"  grader path (fresh process each): tile 32 {grader['tiled']}, fake {grader['fake']}")
    RESULTS["speedup"] = result


# ---------------------------------------------------------------------------------------------
# 3. The CUDA C write-up's experiment.


def section_experiment(src: dict[str, str], iters: int = 50) -> None:
    """Notebook 04's CUDA C path (course.perf.cuda_experiment) on the course's solutions: the
    correctness run at 1024³ with guards, then the timed run (every batch verified), and a
    kernel that skips its work at the timed size, which the verified timing must refuse."""
    from course.gemm.cudac.launch import tiled
    from course.perf.cuda_experiment import (
        check_writeup_correctness_cuda,
        run_writeup_experiment_cuda,
        time_gemm_cuda,
    )
    from course.perf.experiment import CUBLAS, NAIVE, tiled_name
    from course.perf.experiment_report import format_table
    from course.perf.verify import UnverifiedTimingError

    checked = check_writeup_correctness_cuda(src["naive"], src["tiled"])
    say(format_table(checked))
    result = run_writeup_experiment_cuda(src["naive"], src["tiled"], size=1024, iters=iters,
                                      tile=32)
    say(format_table(result))
    ms = {r.name: r.avg_ms for r in result.rows}
    diffs = {r.name: r.max_abs_diff for r in result.rows}
    lazy = src["tiled"].replace("if (row < M && col < N) {", "if (row < M && col < N && K < 512) {")
    assert lazy != src["tiled"], "the solution changed: update the lazy mutation"
    try:
        time_gemm_cuda(tiled(lazy, 32), 1024, repeats=2)
        refused = "NOT refused"
    except UnverifiedTimingError as exc:
        refused = f"refused: {str(exc)[:120]}"
    say(f"  kernel that skips its store at K ≥ 512: {refused}")
    RESULTS["experiment"] = {
        "ms": ms, "max_abs_diff_vs_exact": diffs, "iters": iters, "size": 1024, "tile": 32,
        "max_abs_diff_naive_tiled": result.max_abs_diff_tiled_vs_naive,
        "correctness_1024": {r.name: r.max_abs_diff for r in checked.rows},
        "device": result.device, "notes": list(result.notes), "lazy_kernel": refused}
    tiled_row = tiled_name(32)
    SUMMARY.append(("write-up experiment 1024³ naive / tiled / cuBLAS ms",
                    f"{ms[NAIVE]:.3f} / {ms[tiled_row]:.3f} / {ms.get(CUBLAS, float('nan')):.3f}"))
    SUMMARY.append(("write-up experiment max |naive − tiled|, vs exact",
                    f"{result.max_abs_diff_tiled_vs_naive:g}, {max(diffs.values()):g}"))
    SUMMARY.append(("verified timing refuses a lazy kernel", refused.split(":")[0]))


# ---------------------------------------------------------------------------------------------
# 4. compute-sanitizer racecheck.


def _sanitizer() -> str | None:
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    candidates = [Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin",
                       "compute-sanitizer")]
    for entry in sys.path:
        candidates += list(Path(entry).glob("nvidia/*/compute-sanitizer/compute-sanitizer"))
        candidates += list(Path(entry).glob("nvidia/*/bin/compute-sanitizer"))
    return next((str(p) for p in candidates if p.exists()), None)


_RACE_SNIPPET = """
import json, sys, numpy as np
sys.path.insert(0, {root!r})
from course.gemm.cudac import gpu
from course.gemm.cudac.source import TILED
src = json.loads(sys.argv[1])
cp = gpu.cupy_module()
n = 64
A = cp.ones((n, n), cp.float32); B = cp.ones((n, n), cp.float32); C = cp.zeros((n, n), cp.float32)
k = gpu.raw_kernel(src, TILED, 16)
k((n // 16, n // 16), (16, 16), (np.int32(n), np.int32(n), np.int32(n), A, B, C))
cp.cuda.Device().synchronize()
"""


def section_racecheck(src: dict[str, str]) -> None:
    tool = _sanitizer()
    if tool is None:
        say("  compute-sanitizer not found: racecheck not run")
        RESULTS["racecheck"] = {"run": False}
        SUMMARY.append(("racecheck (compute-sanitizer)", "not found"))
        return
    out = {"tool": tool}
    for key in ("racy", "tiled"):
        argv = [tool, "--tool", "racecheck", sys.executable, "-c",
                _RACE_SNIPPET.format(root=str(ROOT)), json.dumps(src[key])]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=180)
            text = proc.stdout + proc.stderr
        except subprocess.TimeoutExpired:
            text = "timed out"
        summary = [ln for ln in text.splitlines() if "ERROR SUMMARY" in ln or "hazard" in ln]
        out[key] = summary[-3:] or text.strip().splitlines()[-3:]
        say(f"  {key}: {' | '.join(out[key])}")
    RESULTS["racecheck"] = out
    SUMMARY.append(("racecheck missing barrier", " | ".join(out["racy"])[:60]))
    SUMMARY.append(("racecheck reference", " | ".join(out["tiled"])[:60]))


# ---------------------------------------------------------------------------------------------
# 5. Occupancy from the compiled kernels.


def section_occupancy(src: dict[str, str]) -> None:
    from course.gemm.occupancy import theoretical_occupancy

    cp = gpu.cupy_module()
    dev = cp.cuda.Device()
    cc = tuple(int(x) for x in dev.compute_capability)
    arch = f"sm_{cc[0]}{cc[1]}"
    rows = []
    for tile in (4, 8, 16, 32):
        kernel = gpu.raw_kernel(src["tiled"], TILED, tile)
        attrs = gpu.attributes(kernel)
        threads = tile * tile
        regs, smem = attrs["num_regs"], attrs["shared_size_bytes"]
        driver = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, threads, 0)
        model = theoretical_occupancy(cc, threads, regs, smem)
        # notebook 06's path (course.kernel_models.cuda_counts): the driver's numbers on this
        # GPU, and ptxas' through NVRTC for this architecture, as a machine without a GPU
        # gets them
        try:
            from course.perf.kernel_models import cuda_counts

            own = cuda_counts(src["tiled"], tile, cc, True)
            res = cuda_counts(src["tiled"], tile, cc, False)
            sweep_own = (own.registers, own.shared_bytes, own.source)
            ptxas = (res.registers, res.shared_bytes)
        except Exception as exc:  # noqa: BLE001
            sweep_own, ptxas = (f"n/a ({type(exc).__name__}: {exc})",), ("n/a",)
        rows.append({"tile": tile, "regs": regs, "smem": smem, "ptxas": ptxas,
                     "sweep_on_gpu": sweep_own, "arch": arch,
                     "driver_blocks": int(driver), "model_blocks": model.blocks_per_sm,
                     "occupancy": model.occupancy, "limited_by": model.limited_by})
        say(f"  TILE {tile:2d}: attributes {regs} regs, {smem} B smem; NVRTC ptxas {ptxas}; "
            f"sweep on this GPU {sweep_own[:2]}; blocks/SM driver {driver}, model "
            f"{model.blocks_per_sm} ({model.occupancy:.0%}, {model.limited_by})")
    agree = all(r["driver_blocks"] == r["model_blocks"] for r in rows)
    same = all(tuple(r["ptxas"]) == (r["regs"], r["smem"]) == tuple(r["sweep_on_gpu"][:2])
               for r in rows)
    RESULTS["occupancy"] = {"cc": cc, "rows": rows, "model_agrees": agree,
                            "ptxas_and_sweep_match_attributes": same}
    SUMMARY.append(("occupancy model = driver (TILE 4–32)", "yes" if agree else "NO"))
    SUMMARY.append(("ptxas = sweep counts = RawKernel.attributes", "yes" if same else "NO"))


# ---------------------------------------------------------------------------------------------
# 6. The ladder.


def section_ladder(src: dict[str, str], n: int, repeats: int) -> None:
    import cudac_ladder

    cp = gpu.cupy_module()
    A, B, C = _inputs(n, seed=1)
    args = (np.int32(n), np.int32(n), np.int32(n), A, B, C)
    ref = A @ B
    launches: dict[str, Any] = {}
    checks: dict[str, float] = {}
    tiled = gpu.raw_kernel(src["tiled"], TILED, 32)
    launches["tiled 32"] = _launcher(tiled, (n // 32, n // 32), (32, 32), args)
    for rung in cudac_ladder.RUNGS:
        spec = KernelSpec(rung.name, rung.name.upper(), tiled=False)
        kernel = gpu.raw_kernel(rung.source, spec)
        launches[rung.name] = _launcher(kernel, rung.grid(n, n), rung.threads, args)
    for name, launch in launches.items():
        C.fill(float("nan"))
        launch()
        cp.cuda.Device().synchronize()
        checks[name] = float(cp.linalg.norm(C - ref) / cp.linalg.norm(ref))
    launches["cuBLAS"] = lambda: cp.matmul(A, B, out=C)
    samples = gpu.time_launches(launches, repeats=repeats)
    med = {k: float(np.median(v)) for k, v in samples.items()}
    flops = 2.0 * n**3
    rows = []
    for name, ms in med.items():
        tflops = flops / ms / 1e9
        share = med["cuBLAS"] / ms
        rows.append({"kernel": name, "ms": ms, "tflops": tflops, "of_cublas": share,
                     "rel_error_vs_cublas": checks.get(name)})
        err = f", rel. error {checks[name]:.1e}" if name in checks else ""
        say(f"  {name:14s} {ms:8.3f} ms  {tflops:6.2f} TFLOP/s  {share:6.1%} of cuBLAS{err}")
    RESULTS["ladder"] = {"size": n, "repeats": repeats, "rows": rows}
    best = max((r for r in rows if r["kernel"] != "cuBLAS"), key=lambda r: r["tflops"])
    SUMMARY.append((f"ladder {n}³ best ({best['kernel']})",
                    f"{best['tflops']:.1f} TFLOP/s = {best['of_cublas']:.0%} of cuBLAS"))
    bad = [k for k, v in checks.items() if not v < 1e-5]
    SUMMARY.append(("ladder results match cuBLAS", "yes" if not bad else f"NO: {bad}"))


# ---------------------------------------------------------------------------------------------


def environment() -> None:
    info = {"versions": versions(), "gpu": gpu.device_name(), "g++": shutil.which("g++"),
            "nvrtc (course)": None, "compute-sanitizer": _sanitizer()}
    try:
        info["nvrtc (course)"] = ".".join(map(str, nvrtc.version()))
    except nvrtc.NvrtcUnavailableError as exc:
        info["nvrtc (course)"] = f"not found ({exc})"
    RESULTS["environment"] = info
    for k, v in info.items():
        say(f"  {k}: {v}")
    if not cpu.available():
        say("  (no g++: the barrier watch and the read counts will be reported as not run)")


#: the sections' names for --only, in the order they run
SECTIONS = ("correctness", "speedup", "experiment", "racecheck", "occupancy", "ladder")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer runs (smoke test)")
    parser.add_argument("--runs", type=int, default=None, help="same-run ratios per size (≥ 20)")
    parser.add_argument("--only", default="", help="comma-separated sections to run: "
                        f"{', '.join(SECTIONS)} (default: all)")
    args = parser.parse_args(argv)
    only = [x.strip() for x in args.only.split(",") if x.strip()]
    unknown = sorted(set(only) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown sections {unknown}; choose from {', '.join(SECTIONS)}")
    if not gpu.available():
        print("scripts/gpu/cudac.py needs a CUDA GPU and CuPy; nothing to measure here.")
        return 2
    runs = args.runs or (5 if args.quick else 25)
    started = time.monotonic()
    src = kernels()
    sections = [
        ("environment", environment),
        ("1. correctness (graded checks on the GPU)", lambda: section_correctness(src)),
        ("2. speedup distributions", lambda: section_speedup(src, runs, 1 if args.quick else 3)),
        ("3. the CUDA C write-up's experiment (1024³, TILE 32, 50 iterations)",
         lambda: section_experiment(src)),
        ("4. compute-sanitizer racecheck", lambda: section_racecheck(src)),
        ("5. occupancy from RawKernel.attributes", lambda: section_occupancy(src)),
        ("6. register-tiling ladder", lambda: section_ladder(src, 2048 if args.quick else 4096,
                                                             5 if args.quick else 15)),
    ]
    for (title, fn), key in zip(sections, ("environment", *SECTIONS), strict=True):
        if only and key != "environment" and key not in only:
            continue
        say(f"\n== {title}")
        t0 = time.monotonic()
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - one broken section must not hide the rest
            say(f"  SECTION FAILED: {type(exc).__name__}: {exc}")
            SUMMARY.append((title, f"FAILED: {type(exc).__name__}"))
            RESULTS.setdefault("failed", []).append(f"{title}: {type(exc).__name__}: {exc}")
        say(f"  ({time.monotonic() - t0:.1f} s)")
    RESULTS["seconds"] = round(time.monotonic() - started, 1)
    say("\n== summary")
    width = max(len(k) for k, _ in SUMMARY)
    for key, value in SUMMARY:
        say(f"  {key:<{width}}  {value}")
    say(f"  total {RESULTS['seconds']} s")
    out_dir = os.environ.get("OUT")
    if out_dir:
        path = Path(out_dir, "gpu_cudac.json")
        path.write_text(json.dumps(RESULTS, indent=1, default=str))
        say(f"  full numbers: {path}")
    else:
        path = Path(tempfile.gettempdir(), "gpu_cudac.json")
        path.write_text(json.dumps(RESULTS, indent=1, default=str))
        say(f"  full numbers: {path} (set OUT to choose the folder)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
