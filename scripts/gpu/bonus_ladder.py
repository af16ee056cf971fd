"""The register-tiling ladder of notebook 7: one change at a time, timed against cuBLAS.

    python scripts/gpu/bonus_ladder.py --out ladder.md          # on a GPU: check, then time
    python scripts/gpu/bonus_ladder.py                          # on the simulator: check only
    python scripts/gpu/bonus_ladder.py --ptx DIR                # no GPU, with NVVM: PTX counts

Every rung is a GEMM kernel C = A·B (FP32, row-major). v1 is the course's solution of
notebook 7, read from ``source/week4/07_bonus_register_tiling.ipynb`` the way the grader
reads it; the later rungs are generated here from one template, so that each differs from
the one before by the change the table names. Each rung is first checked on ragged shapes
(:func:`course.checks.bonus.check_register_tiled`: guard regions, poisoned C, float64 reference),
then all are timed at 4096³ with :func:`course.perf.timing.time_gemm` (CUDA events, warm-up,
median of interleaved launches) next to the tile-32 kernel of notebook 3 and cuBLAS
(``cupy.matmul`` with ``CUPY_TF32=0``, so FP32 and not TF32 tensor cores).

On the simulator (no GPU) the script checks every rung on tiny shapes and times nothing:
``cuda.jit`` options such as ``max_registers`` are dropped there, since it rejects them.
"""

from __future__ import annotations

import argparse
import re
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from common import ROOT, SOURCE, cublas_ms, report_head  # first: the shared setup (common.py)

import course  # noqa: F401  (GPU or simulator, before numba)
from course.checks.bonus import CONTRACT, RegisterTiling, check_register_tiled, register_tiled
from course.runtime import backend

sys.setswitchinterval(5e-4)  # the simulator's Python threads hand over faster

NOTEBOOK = SOURCE / "07_bonus_register_tiling.ipynb"
TILED = SOURCE / "03_tiled_gemm.ipynb"


# ---------------------------------------------------------------------------------------------
# The rungs.


@dataclass(frozen=True)
class Opts:
    """What a generated rung does; every field is one change the ladder can make."""

    int32: bool = False  # index arithmetic in int32 (Numba's default is int64)
    strided: bool = False  # thread (tx, ty) owns rows ty + i·NTY and columns tx + j·NTX
    pad_a: int = 0  # extra columns of the transposed A tile (bank-conflict-free stores)
    prefetch: bool = False  # load the next tiles into registers while computing this one
    unroll_k: bool = False  # the loop over the BK steps of a tile written out (generated)
    interior: bool = False  # blocks wholly inside A, B, C load without bounds tests
    nonneg: bool = False  # thread/block indices masked, so the compiler sees them >= 0
    jit: dict[str, Any] = field(default_factory=dict)  # cuda.jit options (GPU only)


@dataclass(frozen=True)
class Rung:
    name: str
    change: str
    config: RegisterTiling
    opts: Opts | None  # None: the notebook's solution


def ladder() -> list[Rung]:
    """The versions, in order; each adds one change to an earlier one."""
    small, big = CONTRACT, RegisterTiling(128, 128, 8, 8, 8)
    nn = Opts(nonneg=True)
    big_nn = Opts(nonneg=True)
    strided = Opts(nonneg=True, strided=True, pad_a=4)
    pre = Opts(nonneg=True, strided=True, pad_a=4, prefetch=True)
    unr = Opts(nonneg=True, strided=True, pad_a=4, prefetch=True, unroll_k=True)
    inner = Opts(nonneg=True, strided=True, pad_a=4, prefetch=True, unroll_k=True,
                 interior=True)
    return [
        Rung("v1", "notebook 7 solution: 64×64 block, BK 8, 4×4 per thread, A tile "
             "transposed", small, None),
        Rung("v2", "v1 with int32 casts on the index arithmetic", small, Opts(int32=True)),
        Rung("v3", "v1 with thread/block indices masked (`& 1023`): provably >= 0, so Numba's "
             "negative-index wraparound code folds away", small, nn),
        Rung("v4", "v3 at 128×128 block, 8×8 per thread (256 threads)", big, big_nn),
        Rung("v5", "v4 + strided thread mapping (conflict-free shared reads of B, coalesced "
             "C stores), A tile padded by 4 columns", big, strided),
        Rung("v6", "v5 + register prefetch: the next tiles load while this one is used", big,
             pre),
        Rung("v7", "v6 + the BK loop written out (generated source): immediate offsets", big,
             unr),
        Rung("v8", "v7 + blocks wholly inside A, B, C load without bounds tests", big, inner),
        Rung("v9", "v8 with int32 casts (as v2 to v1)", big,
             Opts(**{**inner.__dict__, "int32": True})),
        Rung("v10", "v8 with BK 16", RegisterTiling(128, 128, 16, 8, 8), inner),
        Rung("v11", "v10 + max_registers=128 (2 blocks per SM)",
             RegisterTiling(128, 128, 16, 8, 8),
             Opts(**{**inner.__dict__, "jit": {"max_registers": 128}})),
    ]


def _src(cfg: RegisterTiling, o: Opts) -> str:
    """Kernel source for one rung. Loops with constant trip counts (i, j, the staging loops)
    are left to LLVM to unroll; the BK loop is written out when ``unroll_k``."""
    I = "int32" if o.int32 else ""  # noqa: E741 - reads as a cast

    def c(expr: str) -> str:
        return f"{I}({expr})" if I else expr

    ntx, nty = cfg.block
    nt = cfg.threads
    la, lb = cfg.bm * cfg.bk // nt, cfg.bk * cfg.bn // nt
    if la * nt != cfg.bm * cfg.bk or lb * nt != cfg.bk * cfg.bn:
        raise ValueError(f"{cfg}: tiles must split evenly over {nt} threads")
    # Numba turns a negative index i into i + size (Python's wraparound) unless the compiler
    # can prove i >= 0; masking the thread and block indices proves it.
    mask = " & 1023" if o.nonneg else ""
    bmask = " & 0x3FFFFFF" if o.nonneg else ""
    rows = "ty + i * NTY" if o.strided else "ty * TM + i"
    cols = "tx + j * NTX" if o.strided else "tx * TN + j"
    lines = [
        "def factory():",
        f"    BM, BN, BK, TM, TN, NTX, NTY, NT = {cfg.bm}, {cfg.bn}, {cfg.bk}, {cfg.tm}, "
        f"{cfg.tn}, {ntx}, {nty}, {nt}",
        f"    LA, LB, AW = {la}, {lb}, {cfg.bm + o.pad_a}  # AW: width of the A tile",
        "",
        "    @cuda.jit(**JIT)",
        "    def kernel(A, B, C):",
        "        As = cuda.shared.array((BK, AW), float32)",
        "        Bs = cuda.shared.array((BK, BN), float32)",
        "        acc = cuda.local.array((TM, TN), float32)",
        "        af = cuda.local.array(TM, float32)",
        "        bf = cuda.local.array(TN, float32)",
        "        pa = cuda.local.array(LA, float32)",
        "        pb = cuda.local.array(LB, float32)",
        f"        M = {c('A.shape[0]')}",
        f"        K = {c('A.shape[1]')}",
        f"        N = {c('B.shape[1]')}",
        f"        tx = {c('cuda.threadIdx.x' + mask)}",
        f"        ty = {c('cuda.threadIdx.y' + mask)}",
        f"        tid = {c('ty * NTX + tx')}",
        f"        row0 = {c('(cuda.blockIdx.y' + bmask + ') * BM')}",
        f"        col0 = {c('(cuda.blockIdx.x' + bmask + ') * BN')}",
        "        for i in range(TM):",
        "            for j in range(TN):",
        "                acc[i, j] = float32(0.0)",
    ]
    inside = "row0 + BM <= M and col0 + BN <= N" if o.interior else "False"

    def load(k0: str, indent: str) -> list[str]:
        """Global → registers pa, pb for the tiles starting at k0."""
        out = [f"{indent}full = {inside} and {k0} + BK <= K"]
        out += [
            f"{indent}for l in range(LA):",
            f"{indent}    e = {c('tid + l * NT')}",
            f"{indent}    m = {c('e // BK')}",
            f"{indent}    k = {c('e % BK')}",
            f"{indent}    if full or (row0 + m < M and {k0} + k < K):",
            f"{indent}        pa[l] = A[row0 + m, {k0} + k]",
            f"{indent}    else:",
            f"{indent}        pa[l] = float32(0.0)",
            f"{indent}for l in range(LB):",
            f"{indent}    e = {c('tid + l * NT')}",
            f"{indent}    k = {c('e // BN')}",
            f"{indent}    n = {c('e % BN')}",
            f"{indent}    if full or ({k0} + k < K and col0 + n < N):",
            f"{indent}        pb[l] = B[{k0} + k, col0 + n]",
            f"{indent}    else:",
            f"{indent}        pb[l] = float32(0.0)",
        ]
        return out

    store = [
        "            for l in range(LA):",
        f"                e = {c('tid + l * NT')}",
        "                As[e % BK, e // BK] = pa[l]",
        "            for l in range(LB):",
        f"                e = {c('tid + l * NT')}",
        "                Bs[e // BN, e % BN] = pb[l]",
    ]

    def step(k: str) -> list[str]:
        return [
            "            for i in range(TM):",
            f"                af[i] = As[{k}, {rows}]",
            "            for j in range(TN):",
            f"                bf[j] = Bs[{k}, {cols}]",
            "            for i in range(TM):",
            "                for j in range(TN):",
            "                    acc[i, j] += af[i] * bf[j]",
        ]

    if o.unroll_k:
        math_ = [ln for k in range(cfg.bk) for ln in step(str(k))]
    else:
        math_ = ["            for kk in range(BK):",
                 *[("    " + ln) for ln in step("kk")]]
    k0_range = f"range({c('0')}, K, {c('BK')})" if o.int32 else "range(0, K, BK)"
    if o.prefetch:
        lines += load(c("0"), "        ")
        lines += [f"        for k0 in {k0_range}:"]
        lines += store
        lines += ["            cuda.syncthreads()",
                  "            if k0 + BK < K:"]
        lines += load("k0 + BK", "                ")
        lines += math_
        lines += ["            cuda.syncthreads()"]
    else:
        lines += [f"        for k0 in {k0_range}:"]
        lines += load("k0", "            ")
        lines += store
        lines += ["            cuda.syncthreads()"]
        lines += math_
        lines += ["            cuda.syncthreads()"]
    lines += [
        "        for i in range(TM):",
        "            for j in range(TN):",
        f"                row = {c('row0 + ' + rows)}",
        f"                col = {c('col0 + ' + cols)}",
        "                if row < M and col < N:",
        "                    C[row, col] = acc[i, j]",
        "",
        "    return kernel",
    ]
    return "\n".join(lines) + "\n"


def generated_factory(cfg: RegisterTiling, o: Opts, on_gpu: bool) -> tuple[Any, str]:
    """Build a rung's factory from its source; jit options only where they are accepted."""
    from numba import cuda, float32, int32

    src = _src(cfg, o)
    namespace = {"cuda": cuda, "float32": float32, "int32": int32,
                 "JIT": dict(o.jit) if on_gpu else {}}
    exec(compile(src, f"<ladder {cfg} {o}>", "exec"), namespace)  # noqa: S102 - our template
    return namespace["factory"], src


def notebook_factory(path: Path, name: str) -> Any:
    """A solution of a source notebook, rebuilt as the grader rebuilds answers."""
    import json

    from course.trust.kernel_source import bundle_from_cells

    marker = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.M)
    cells = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]
             if c["cell_type"] == "code"]
    return bundle_from_cells([marker.sub("", s) for s in cells], {name}).load()[name]


# ---------------------------------------------------------------------------------------------
# Measuring.


def ptx_report(rungs: list[tuple[Rung, Any]], folder: Path) -> None:
    """Write each rung's PTX and count what matters in it (needs NVVM, not a GPU)."""
    from numba import cuda

    folder.mkdir(parents=True, exist_ok=True)
    sig = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"
    print("| version | fma | ld.shared | ld.global | local ld/st | 64-bit ops | PTX lines |")
    print("|---|---|---|---|---|---|---|")
    for rung, factory in rungs:
        ptx, _ = cuda.compile_ptx(factory().py_func, sig, cc=(9, 0))
        (folder / f"{rung.name}.ptx").write_text(ptx)

        counts = [len(re.findall(p, ptx)) for p in
                  (r"fma\.rn\.f32", r"ld\.shared", r"ld\.global", r"[ls][dt]\.local",
                   r"\.[su]64")]
        print(f"| {rung.name} | " + " | ".join(map(str, counts)) + f" | {ptx.count(chr(10))} |")


def sweep_report(path: Path, bonus_factory: Any) -> None:
    """The tile sweep of notebook 6 with the course's solutions, measured on this GPU."""
    from course.checks.bonus import sweep_model
    from course.perf.sweep import run_sweep
    from course.perf.sweep_table import rows_to_table

    kernels = {"naive": notebook_factory(ROOT / "source" / "week4" / "02_naive_gemm.ipynb",
                                         "gemm_naive"),
               "tiled": notebook_factory(TILED, "make_gemm_tiled"),
               "bonus": sweep_model(bonus_factory)}
    parts = []
    for size in (1024, 4096):
        rows = run_sweep(kernels, size=size, progress=False)
        parts.append(rows_to_table(rows))
    text = "\n\n".join(parts)
    path.write_text(text + "\n")
    print(text, flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="write the markdown report here")
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", help="comma-separated rung names (default: all)")
    parser.add_argument("--ptx", type=Path, help="write PTX of each rung here (no GPU needed)")
    parser.add_argument("--show-source", help="print the generated source of one rung")
    parser.add_argument("--sweep", type=Path,
                        help="also run course.perf.sweep on the course's kernels (GPU: measured, "
                             "real registers) and write its table here")
    args = parser.parse_args()
    started = time.time()
    b = backend.detect()
    on_gpu = b.kind == "gpu"
    chosen = ladder()
    if args.only:
        keep = set(args.only.split(","))
        chosen = [r for r in chosen if r.name in keep]
    built = []
    for rung in chosen:
        if rung.opts is None:
            built.append((rung, notebook_factory(NOTEBOOK, "make_gemm_register_tiled")))
        else:
            factory, src = generated_factory(rung.config, rung.opts, on_gpu)
            if args.show_source == rung.name:
                print(textwrap.indent(src, "    "))
            built.append((rung, factory))
    if args.ptx:
        ptx_report(built, args.ptx)
        return 0

    # 1. Correct first, on ragged shapes (tiny ones on the simulator).
    shapes = None if on_gpu else [(1, 1, 1), (129, 129, 9)]  # one interior block
    for rung, factory in built:
        t0 = time.time()
        check_register_tiled(factory, shapes=shapes, config=rung.config, quiet=True)
        print(f"{rung.name}: correct on ragged shapes ({rung.config.describe()}, "
              f"{time.time() - t0:.1f} s)", flush=True)
    if not on_gpu:
        print(f"no GPU ({b.reason}): every rung is correct on the simulator; nothing timed. "
              f"{time.time() - started:.0f} s")
        return 0

    # 2. Time them all, interleaved, on the same inputs.
    from course.gemm.launch import tiled
    from course.gemm.occupancy import kernel_resources
    from course.perf.timing import time_gemm

    n = args.size
    gemms = [tiled(notebook_factory(TILED, "make_gemm_tiled"), 32)]
    gemms += [register_tiled(f, r.config, name=r.name) for r, f in built]
    timings = time_gemm(gemms, n, n, n, repeats=args.repeats)
    cub = cublas_ms(n, args.repeats)
    import numpy as np
    from numba import cuda

    probe = cuda.to_device(np.zeros((2, 2), np.float32))
    flops = 2.0 * n**3
    lines = ["| version | what changed | regs | ms | TFLOP/s | % of cuBLAS |",
             "|---|---|---|---|---|---|"]
    if cub:
        lines.append(f"| cuBLAS | `cupy.matmul`, CUPY_TF32=0 | — | {cub:.3f} | "
                     f"{flops / cub / 1e9:.1f} | 100 % |")
    changes = {"make_gemm_tiled(32)": "notebook 3 solution, tile 32 (shared memory only)"}
    changes.update({r.name: r.change for r, _ in built})
    best = None
    for gk in gemms:
        t = timings[gk.name]
        try:
            regs = str(kernel_resources(gk.kernel, probe, probe, probe).regs_per_thread)
        except Exception:  # noqa: BLE001 - a report, not a check
            regs = "?"
        pct = f"{100 * cub / t.median_ms:.0f} %" if cub else "—"
        lines.append(f"| {gk.name} | {changes[gk.name]} | {regs} | {t.median_ms:.3f} | "
                     f"{flops / t.median_ms / 1e9:.1f} | {pct} |")
        if gk.name != "make_gemm_tiled(32)" and (best is None or t.median_ms < best[1]):
            best = (gk.name, t.median_ms)
    summary = (f"best: {best[0]} at {flops / best[1] / 1e9:.1f} TFLOP/s"
               + (f" = {100 * cub / best[1]:.0f} % of cuBLAS ({flops / cub / 1e9:.1f} TFLOP/s)"
                  if cub else "") + f", {n}³ FP32, {b.device_name}")
    if args.sweep:
        sweep_report(args.sweep, built[0][1])
    report = [*report_head("Register-tiling ladder", b),
              f"- Size {n}³ FP32; medians of {args.repeats} interleaved launches (CUDA events)",
              "", *lines, "", summary, f"(wall time {time.time() - started:.0f} s)"]
    text = "\n".join(report) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
