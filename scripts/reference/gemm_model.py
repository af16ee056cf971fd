"""A small performance model of the week's naive and tiled GEMM kernels, to carry the H200's
measured speedup over to a T4 (Colab's free GPU) — see docs/t4-estimate.md.

    python scripts/reference/gemm_model.py            # the T4 estimate, as a markdown table

The model (every assumption is a named parameter below, and docs/t4-estimate.md says why):

* **naive kernel, latency-bound.** Each warp walks along K; every step issues two global
  loads and waits for them before the next multiply-add. An SM finishes
  ``resident warps / L`` warp-steps per clock, where ``L`` (cycles per warp-step) is
  calibrated on the H200 and assumed equal on a T4 up to ``latency_scale`` (the T4's memory
  latency in cycles relative to the H200's). A T4 SM holds 32 warps of this kernel, an H200
  SM 64. A floor from the load/store pipe (2 warp-loads per step) is kept but never binds.
* **tiled kernel, shared-memory-bound.** Per step and thread: 2 global loads into the tiles,
  then ``tile`` steps of 2 shared loads and one multiply-add. A warp's shared load occupies
  the SM's load/store pipe for ``32 / lsu_lanes`` cycles (1 on Hopper, 2 on Turing, which has
  16 load/store lanes per SM). Efficiency of that pipe is calibrated on the H200 (where two
  tile-32 blocks share an SM and hide each other's load latency); when only one block fits
  on an SM (tile 32 on a T4: 1,024 threads), each step's load latency ``step_latency`` is
  added, not hidden. Blocks are spread evenly over the SMs (the last, partial wave is ignored:
  under 4 % at these sizes).
* **DRAM** as a floor, taken pessimistically: the tiled kernel's request model (whole tiles,
  nothing served by L2 unless A, B and C all fit in it) and, for the naive kernel, each block
  reading its row panel of A and column panel of B once.

The calibration defaults are the H200 measurements of docs/results-gpu.md (2048³: naive
13.075 ms, tile 32 2.172 ms); ``scripts/gpu/t4_model_check.py`` re-measures them, checks the
model's claims on the H200 and prints the T4 estimate from the fresh numbers.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Gpu:
    """What the model needs to know about a GPU."""

    name: str
    sms: int
    clock_ghz: float  # SM clock while the kernel runs (boost; the ratio does not depend on it)
    lsu_lanes: int  # load/store lanes per SM: a warp's load takes 32 / lsu_lanes cycles
    max_threads_per_sm: int
    max_blocks_per_sm: int
    smem_per_sm_kib: float
    l2_mb: float
    dram_gbs: float


#: H200 SXM: 132 SMs, 1.98 GHz boost, 32 LD/ST lanes per SM (Hopper), 2,048 threads and
#: 32 blocks per SM, 228 KiB shared memory per SM, 60 MiB L2, 4.8 TB/s HBM3e.
H200 = Gpu("NVIDIA H200", 132, 1.98, 32, 2048, 32, 228, 60, 4800)
#: T4: 40 SMs, 1.59 GHz boost, 16 LD/ST lanes per SM (Turing), 1,024 threads and 16 blocks
#: per SM, 64 KiB shared memory per SM, 4 MB L2, 320 GB/s GDDR6.
T4 = Gpu("Tesla T4", 40, 1.59, 16, 1024, 16, 64, 4, 320)

NAIVE_BLOCK = 16
#: fraction of datasheet DRAM bandwidth a stream reaches (the H200's copy reached 85 %).
DRAM_EFFICIENCY = 0.8


@dataclass(frozen=True)
class Calibration:
    """H200 measurements at one size, and the two T4 assumptions that are not measured."""

    size: int = 2048
    naive_ms: float = 13.075  # docs/results-gpu.md, gemm_naive at 2048³
    tiled_ms: float = 2.172  # docs/results-gpu.md, make_gemm_tiled(32) at 2048³
    tile: int = 32
    #: memory latency of a T4 in cycles / the H200's (naive kernel): 1.0, range 0.6–1.2.
    latency_scale: float = 1.0
    #: cycles a tile's global loads take when no other block hides them: range 300–700.
    step_latency: float = 500.0


def _blocks(M: int, N: int, edge: int) -> int:
    return math.ceil(M / edge) * math.ceil(N / edge)


def naive_warp_steps(M: int, N: int, K: int) -> int:
    """Warp-steps of the naive kernel: 8 warps per 16×16 block, K steps each."""
    return _blocks(M, N, NAIVE_BLOCK) * (NAIVE_BLOCK * NAIVE_BLOCK // 32) * K


def naive_resident_warps(gpu: Gpu) -> int:
    threads = NAIVE_BLOCK * NAIVE_BLOCK
    blocks = min(gpu.max_threads_per_sm // threads, gpu.max_blocks_per_sm)
    return blocks * threads // 32


def tiled_resident_blocks(gpu: Gpu, tile: int) -> int:
    threads = tile * tile
    smem = 2 * tile * tile * 4 / 1024 + 1  # two tiles, plus 1 KiB reserved per block
    return int(min(gpu.max_threads_per_sm // threads, gpu.max_blocks_per_sm,
                   gpu.smem_per_sm_kib // smem))


def tiled_block_cycles(gpu: Gpu, tile: int, K: int) -> float:
    """Load/store-pipe cycles of one block: per step, every warp's 2 tile loads and 2·tile
    shared loads, each taking 32 / lsu_lanes cycles of the SM's pipe."""
    warps = math.ceil(tile * tile / 32)
    steps = math.ceil(K / tile)
    return steps * warps * (2 + 2 * tile) * (32 / gpu.lsu_lanes)


def naive_l_cycles(cal: Calibration) -> float:
    """Cycles per warp-step of the naive kernel on the H200 (from the calibration)."""
    n = cal.size
    warp_steps_per_sm = naive_warp_steps(n, n, n) / H200.sms
    return cal.naive_ms * 1e-3 * H200.clock_ghz * 1e9 * naive_resident_warps(H200) / \
        warp_steps_per_sm


def tiled_pipe_efficiency(cal: Calibration) -> float:
    """How busy the H200's load/store pipe was in the calibrating tiled run (≤ 1)."""
    n = cal.size
    return tiled_ms(H200, n, n, n, cal.tile, cal, efficiency=1.0) / cal.tiled_ms


def naive_ms(gpu: Gpu, M: int, N: int, K: int, cal: Calibration = Calibration(),
             resident_warps: int | None = None) -> float:
    """Predicted naive time: latency-bound warp-steps, floored by the load/store pipe and
    by DRAM. ``resident_warps`` overrides the occupancy (the H200 check forces T4's 32)."""
    latency = naive_l_cycles(cal) * (cal.latency_scale if gpu != H200 else 1.0)
    per_sm = naive_warp_steps(M, N, K) / gpu.sms
    latency_bound = per_sm * latency / (resident_warps or naive_resident_warps(gpu))
    pipe_bound = per_sm * 2 * (32 / gpu.lsu_lanes)
    return max(max(latency_bound, pipe_bound) / (gpu.clock_ghz * 1e9) * 1e3,
               dram_ms(gpu, M, N, K, None))


def tiled_ms(gpu: Gpu, M: int, N: int, K: int, tile: int, cal: Calibration = Calibration(),
             efficiency: float | None = None, resident: int | None = None) -> float:
    """Predicted tiled time: the load/store pipe (blocks spread evenly over the SMs), plus
    each step's load latency when one block is alone on its SM; floored by DRAM.
    ``resident`` overrides the blocks per SM (the H200 check forces T4's 1 for tile 32)."""
    eff = tiled_pipe_efficiency(cal) if efficiency is None else efficiency
    resident = resident or tiled_resident_blocks(gpu, tile)
    if resident < 1:
        raise ValueError(f"a {tile}×{tile} block does not fit on an SM of a {gpu.name}")
    cycles = tiled_block_cycles(gpu, tile, K) / eff
    if resident == 1:  # nobody hides the tile loads of each step
        cycles += math.ceil(K / tile) * cal.step_latency * (
            cal.latency_scale if gpu != H200 else 1.0)
    per_sm = _blocks(M, N, tile) / gpu.sms
    return max(per_sm * cycles / (gpu.clock_ghz * 1e9) * 1e3, dram_ms(gpu, M, N, K, tile))


def dram_ms(gpu: Gpu, M: int, N: int, K: int, tile: int | None) -> float:
    """Time to move the kernel's DRAM bytes at DRAM_EFFICIENCY (a check, not a prediction).

    Tiled: the request model's whole tiles, unless A, B and C fit in L2 (then once each).
    Naive: each block reads its 16-row panel of A and 16-column panel of B once.
    """
    once = (M * K + K * N + M * N) * 4
    if tile is None:
        nbytes = _blocks(M, N, NAIVE_BLOCK) * 2 * NAIVE_BLOCK * K * 4 + M * N * 4
    elif once <= gpu.l2_mb * 2**20:
        nbytes = once
    else:
        nbytes = _blocks(M, N, tile) * math.ceil(K / tile) * 2 * tile * tile * 4 + M * N * 4
    return nbytes / (gpu.dram_gbs * 1e9 * DRAM_EFFICIENCY) * 1e3


@dataclass(frozen=True)
class Prediction:
    gpu: str
    size: int
    tile: int
    naive_ms: float
    tiled_ms: float
    naive_dram_ms: float  # the DRAM floor alone, to see how close it comes
    tiled_dram_ms: float

    @property
    def ratio(self) -> float:
        """naive time / tiled time: what the graded speedup measures."""
        return self.naive_ms / self.tiled_ms


def predict(gpu: Gpu, size: int, tile: int = 32, cal: Calibration = Calibration()
            ) -> Prediction:
    n = size
    return Prediction(gpu.name, n, tile, naive_ms(gpu, n, n, n, cal),
                      tiled_ms(gpu, n, n, n, tile, cal), dram_ms(gpu, n, n, n, None),
                      dram_ms(gpu, n, n, n, tile))


def ratio_range(gpu: Gpu, size: int = 2048, tile: int = 32, cal: Calibration = Calibration()
                ) -> tuple[float, float, float]:
    """(low, central, high) speedup over the unmeasured assumptions' ranges."""
    lows = [replace(cal, latency_scale=0.6, step_latency=700.0)]
    highs = [replace(cal, latency_scale=1.2, step_latency=300.0)]
    return (min(predict(gpu, size, tile, c).ratio for c in lows),
            predict(gpu, size, tile, cal).ratio,
            max(predict(gpu, size, tile, c).ratio for c in highs))


def table(gpus: tuple[Gpu, ...] = (H200, T4), sizes: tuple[int, ...] = (1024, 2048, 4096),
          tiles: tuple[int, ...] = (16, 32), cal: Calibration = Calibration()) -> str:
    lines = ["| GPU | size | tile | naive ms | tiled ms | naive / tiled | DRAM floor ms "
             "(naive, tiled) |", "|---|---|---|---|---|---|---|"]
    for gpu in gpus:
        for n in sizes:
            for t in tiles:
                p = predict(gpu, n, t, cal)
                lines.append(f"| {gpu.name} | {n}³ | {t} | {p.naive_ms:,.2f} | "
                             f"{p.tiled_ms:,.2f} | **{p.ratio:.2f}×** | "
                             f"{p.naive_dram_ms:,.2f}, {p.tiled_dram_ms:,.2f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--naive-ms", type=float, default=Calibration.naive_ms,
                        help="H200 gemm_naive at --size (default: docs/results-gpu.md)")
    parser.add_argument("--tiled-ms", type=float, default=Calibration.tiled_ms,
                        help="H200 make_gemm_tiled(32) at --size")
    parser.add_argument("--size", type=int, default=Calibration.size)
    args = parser.parse_args()
    cal = Calibration(size=args.size, naive_ms=args.naive_ms, tiled_ms=args.tiled_ms)
    print(f"Calibration (H200, {cal.size}³): naive {cal.naive_ms} ms → "
          f"{naive_l_cycles(cal):.0f} cycles per warp-step with "
          f"{naive_resident_warps(H200)} warps per SM; tile 32 {cal.tiled_ms} ms → "
          f"load/store pipe {tiled_pipe_efficiency(cal):.0%} busy.\n")
    print(table(cal=cal))
    low, mid, high = ratio_range(T4, cal=cal)
    print(f"\nT4, tile 32 at 2048³: naive / tiled ≈ {mid:.1f}× (range {low:.1f}–{high:.1f}× "
          "over latency_scale 0.6–1.2 and step_latency 300–700 cycles)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
