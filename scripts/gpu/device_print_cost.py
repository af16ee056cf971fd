"""What a debugging print in every thread costs a naive GEMM at the timed size (issue 32).

``python scripts/gpu/device_print_cost.py [--size 2048] [--launches 3] [--json FILE]``

Times single launches (host wall clock around launch + synchronize, the way the speedup's budget
sees them) of the course's naive kernel and of the same kernel with one print per thread — the
sample students' lines: ``print("row", row, "col", col, "acc", acc)`` in Numba (``rin``),
``printf("row %d col %d acc %f\\n", …)`` in CUDA C (``sol``) — and reports the seconds per
launch, and how long the speedup's 23 launches would take against the budget it would get
(``course.perf.budget``: 10 s + 10 × the reference's time for every launch of the timing).
The kernels' own output (millions of lines) goes to /dev/null at the file-descriptor level,
where the device's printf buffer is flushed; the report goes to stderr and ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import common  # noqa: F401  (first: the shared setup, scripts/gpu/common.py)

import course  # noqa: F401  (chooses GPU or simulator before numba is imported)
from course.perf.budget import FLOOR_S, MULTIPLE
from course.runtime import backend
from sample_class.students import rin_prints_in_naive, sol_cuda_printf_in_naive


def say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def silence_stdout() -> None:
    """Send fd 1 (where CUDA flushes device printf) to /dev/null for the rest of the run."""
    sys.stdout.flush()
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)


#: a kernel whose launch took longer than this is not launched again (the part's time limit)
ENOUGH_S = 20.0


def wall_seconds(launch, sync, launches: int) -> list[float]:
    times: list[float] = []
    while len(times) < launches and sum(times) < ENOUGH_S:
        started = time.perf_counter()
        launch()
        sync()
        times.append(time.perf_counter() - started)
    return times


def numba_kernels(size: int, launches: int) -> dict[str, list[float]]:
    import numpy as np
    from numba import cuda, float32  # noqa: F401  (the kernels' globals)

    from course.gemm.launch import naive

    rng = np.random.default_rng(0)

    def arrays(n: int) -> tuple:
        return (cuda.to_device(rng.random((n, n), dtype=np.float32)),
                cuda.to_device(rng.random((n, n), dtype=np.float32)),
                cuda.device_array((n, n), dtype=np.float32))

    small, timed = arrays(16), arrays(size)
    out = {}
    sources = {"numba naive": rin_prints_in_naive._NAIVE.replace(
        '        print("row", row, "col", col, "acc", acc)\n', ""),
        "numba naive + print": rin_prints_in_naive._NAIVE}
    assert len(set(sources.values())) == 2, "rin's kernel changed: update this script"
    for name, source in sources.items():
        ns = {"cuda": cuda, "float32": float32}
        exec(source, ns)  # noqa: S102 - the sample student's kernel, a course file
        gk = naive(ns["gemm_naive"])

        def launch(gk=gk, args=timed, n=size) -> None:
            cfg = gk.launch_for(n, n)
            gk.kernel[cfg.grid, cfg.block](*args)

        # compile and warm up at 16³ (the same types: Numba compiles once for every size)
        wall_seconds(lambda gk=gk: launch(gk, small, 16), cuda.synchronize, 1)
        out[name] = wall_seconds(launch, cuda.synchronize, launches)
        say(f"{name}: {', '.join(f'{t:.3f}' for t in out[name])} s per launch")
    return out


def cuda_c_kernels(size: int, launches: int) -> dict[str, list[float]]:
    import numpy as np

    from course.gemm.cudac import gpu
    from course.gemm.cudac.launch import CudaGemm
    from course.gemm.cudac.source import NAIVE

    if not gpu.available():
        say("CUDA C: no CuPy here, skipped")
        return {}
    cp = gpu.cupy_module()
    ns: dict = {}
    exec(sol_cuda_printf_in_naive._NAIVE, ns)  # noqa: S102 - the sample student's string
    printing = ns["GEMM_NAIVE_CUDA"]
    quiet = printing.replace('        printf("row %d col %d acc %f\\n", row, col, acc);\n', "")
    assert quiet != printing, "sol's kernel changed: update this script"
    rng = np.random.default_rng(0)

    def arrays(n: int) -> tuple:
        return (np.int32(n), np.int32(n), np.int32(n),
                cp.asarray(rng.random((n, n), dtype=np.float32)),
                cp.asarray(rng.random((n, n), dtype=np.float32)), cp.empty((n, n), cp.float32))

    small, timed = arrays(16), arrays(size)
    sync = cp.cuda.Device().synchronize
    out = {}
    for name, source in {"cuda c naive": quiet, "cuda c naive + printf": printing}.items():
        g = CudaGemm(NAIVE, source)
        kernel = gpu.raw_kernel(g.source, g.spec, g.tile)

        def launch(kernel=kernel, g=g, args=timed, n=size) -> None:
            cfg = g.launch_for(n, n)
            kernel(cfg.grid, cfg.block, args)

        wall_seconds(lambda kernel=kernel, g=g: launch(kernel, g, small, 16), sync, 1)  # compile
        out[name] = wall_seconds(launch, sync, launches)
        say(f"{name}: {', '.join(f'{t:.3f}' for t in out[name])} s per launch")
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--launches", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    where = backend.detect()
    if where.kind != "gpu":
        say(f"needs a CUDA GPU: at {args.size}³ the simulator would run for hours ({where.reason})")
        return 2
    silence_stdout()
    say(f"one launch each at {args.size}³, host wall clock (launch + synchronize)")
    seconds = {**numba_kernels(args.size, args.launches),
               **cuda_c_kernels(args.size, args.launches)}
    # The speedup's timing: 3 kernels × (3 warm-up + 20 timed) launches + 1; 23 per kernel.
    for track, quiet in (("numba", "numba naive"), ("cuda c", "cuda c naive")):
        loud = next((k for k in seconds if k.startswith(track) and k != quiet), None)
        if quiet not in seconds or loud is None:
            continue
        ref = min(seconds[quiet])
        budget = FLOOR_S + MULTIPLE * ref * (3 * 23 + 1)
        per = min(seconds[loud])
        say(f"{track}: the print makes a launch {per / ref:,.0f}× slower ({ref * 1e3:.1f} ms → "
            f"{per:.2f} s); the speedup's 23 launches of it would take {23 * per:.0f} s, against "
            f"a budget of {budget:.0f} s (the reference as fast as the quiet kernel)")
    if args.json:
        args.json.write_text(json.dumps(seconds, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
