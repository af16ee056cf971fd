"""What one simulated launch of a tiled GEMM costs, with the simulator's blocks run as greenlets
(the course's default, ``course/runtime/simulator.py``) and as Numba's Python threads.

    NUMBA_ENABLE_CUDASIM=1 .venv/bin/python scripts/gpu/simulator_cost.py [--sizes 16 37 64]

Every grading kernel (it has no GPU), every trusted re-check's race and bounds check, every
laptop without a GPU and every test here runs student kernels on Numba's simulator; this is the
price of one launch there. Each size is launched once per runner, the runners alternating, and
the CPU time of this process is read around each launch (``time.process_time``: all threads).
The result is checked against NumPy each time.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import numpy as np  # noqa: E402
from numba import cuda, float32  # noqa: E402

import course  # noqa: E402,F401  (the simulator with the course's changes)
from course.runtime import simulator  # noqa: E402

TILE = 16


@cuda.jit
def _tiled(A, B, C, n):  # noqa: N803 - the matrices' usual names
    sA = cuda.shared.array((TILE, TILE), float32)  # noqa: N806
    sB = cuda.shared.array((TILE, TILE), float32)  # noqa: N806
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * TILE + ty, cuda.blockIdx.x * TILE + tx
    acc = float32(0.0)
    for t in range((n + TILE - 1) // TILE):
        sA[ty, tx] = A[row, t * TILE + tx] if row < n and t * TILE + tx < n else 0.0
        sB[ty, tx] = B[t * TILE + ty, col] if col < n and t * TILE + ty < n else 0.0
        cuda.syncthreads()
        for k in range(TILE):
            acc += sA[ty, k] * sB[k, tx]
        cuda.syncthreads()
    if row < n and col < n:
        C[row, col] = acc


def _launch(n: int) -> float:
    rng = np.random.default_rng(n)
    A, B = rng.random((n, n), np.float32), rng.random((n, n), np.float32)  # noqa: N806
    C = np.zeros((n, n), np.float32)  # noqa: N806
    grid = (n + TILE - 1) // TILE
    start = time.process_time()
    _tiled[(grid, grid), (TILE, TILE)](A, B, C, n)
    spent = time.process_time() - start
    if not np.allclose(C, A @ B, rtol=1e-4, atol=1e-4):
        raise SystemExit(f"the tiled kernel computed a wrong C at n={n}")
    return spent


def _with_threads(n: int) -> float:
    """One launch with Numba's threads (the course's event-driven barrier, its fallback)."""
    from numba.cuda.simulator import kernel, kernelapi

    saved = kernel.BlockManager.run, kernel.BlockThread.syncthreads, kernelapi.threading
    kernel.BlockManager.run = simulator._run_block
    kernel.BlockThread.syncthreads = simulator._syncthreads
    kernelapi.threading = simulator.threading
    try:
        simulator.quick_thread_switches()
        return _launch(n)
    finally:
        kernel.BlockManager.run, kernel.BlockThread.syncthreads, kernelapi.threading = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 37, 64])
    args = parser.parse_args()
    _launch(4)  # the first launch pays for setting up the simulated kernel
    print(f"tiled GEMM, TILE={TILE}, one launch each, CPU-seconds of this process")
    print("| n | blocks × threads | greenlets | threads | threads ÷ greenlets |")
    print("|---|---|---|---|---|")
    for n in args.sizes:
        green, threads = _launch(n), _with_threads(n)
        blocks = ((n + TILE - 1) // TILE) ** 2
        print(f"| {n} | {blocks} × {TILE * TILE} | {green:.2f} | {threads:.2f} | "
              f"{threads / green:.0f}× |")


if __name__ == "__main__":
    main()
