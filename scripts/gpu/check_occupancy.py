"""Check course.gemm.occupancy's model against the CUDA driver's occupancy, on a real GPU.

Compiles the week's tiled GEMM at TILE 4/8/16/32 (CuPy RawKernel with -DTILE=..., and Numba
where it works) and a few kernels that stress other resources (many registers, a local
array, dynamic shared memory, tiny blocks). For each (kernel, threads, dynamic shared memory)
it compares ``theoretical_occupancy`` with ``cuOccupancyMaxActiveBlocksPerMultiprocessor``
and prints a markdown table ending in ``occupancy-vs-driver: N/M equal``.

    python scripts/gpu/check_occupancy.py [--out occupancy_check.md]

Without a GPU it prints why and exits 0. Written for an H200 (sm_90) with CuPy and numba-cuda.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import common  # noqa: F401  (first: the shared setup, scripts/gpu/common.py)

from course.gemm.occupancy import (
    ARCH_LIMITS,
    describe,
    driver_occupancy,
    kernel_resources,
    theoretical_occupancy,
)

TILED_GEMM = r"""
#ifndef TILE
#define TILE 16
#endif
extern "C" __global__ void tiled_gemm(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int k = 0; k < n; k += TILE) {
        As[ty][tx] = (row < n && k + tx < n) ? A[row * n + k + tx] : 0.0f;
        Bs[ty][tx] = (k + ty < n && col < n) ? B[(k + ty) * n + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) acc += As[ty][i] * Bs[i][tx];
        __syncthreads();
    }
    if (row < n && col < n) C[row * n + col] = acc;
}
"""
# 64 values live at once: the compiler wants many registers (or spills under -maxrregcount).
MANY_REGS = r"""
extern "C" __global__ void many_regs(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[64];
    #pragma unroll
    for (int j = 0; j < 64; ++j) v[j] = x[(i + 97 * j) % n];
    float acc = 0.0f;
    #pragma unroll
    for (int r = 1; r < 8; ++r) {
        #pragma unroll
        for (int j = 0; j < 64; ++j) acc += v[j] * v[(j + r) & 63];
    }
    if (i < n) y[i] = acc;
}
"""
LOCAL_ARRAY = r"""
extern "C" __global__ void local_array(const float* x, float* y, int n, int k) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float buf[256];
    for (int j = 0; j < 256; ++j) buf[j] = x[(i + j) % n];
    for (int j = 0; j < 256; ++j) buf[(j * k) & 255] += buf[j];
    if (i < n) y[i] = buf[k & 255];
}
"""
DYN_SMEM = r"""
extern "C" __global__ void dyn_smem(const float* x, float* y, int n) {
    extern __shared__ float s[];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) y[i] = s[blockDim.x - 1 - t];
}
"""
VADD = r"""
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""


def cupy_configs(cupy, cc: tuple[int, int]) -> list[tuple[str, object, int, int]]:
    """(label, kernel, threads, dynamic smem) for the CuPy RawKernels."""
    raw = cupy.RawKernel
    configs = []
    for tile in (4, 8, 16, 32):
        k = raw(TILED_GEMM, "tiled_gemm", options=(f"-DTILE={tile}",))
        configs += [(f"cupy tiled_gemm TILE={tile}", k, tile * tile, 0)]
    for cap in (None, 40, 72, 128):
        opts = () if cap is None else (f"--maxrregcount={cap}",)
        k = raw(MANY_REGS, "many_regs", options=opts)
        label = "cupy many_regs" + ("" if cap is None else f" maxrreg={cap}")
        configs += [(label, k, t, 0) for t in (96, 256, 640, 1024)]
    configs += [("cupy local_array", raw(LOCAL_ARRAY, "local_array"), 128, 0)]
    dyn = raw(DYN_SMEM, "dyn_smem")
    optin = ARCH_LIMITS[cc].smem_per_block_optin
    dyn.max_dynamic_shared_size_bytes = optin  # opt in above 48 KiB (the model assumes it)
    kib = (0, 16, 48, 57, 100, 114, 160, 227)
    configs += [("cupy dyn_smem", dyn, 256, s * 1024) for s in kib if s * 1024 <= optin]
    vadd = raw(VADD, "vadd")
    configs += [("cupy vadd", vadd, t, 0) for t in (16, 32, 64, 96, 100, 640, 768, 1024)]
    return configs


def numba_configs() -> list[tuple[str, object, int, int]]:
    """The tiled GEMM as Numba kernels, compiled for one signature each."""
    from numba import cuda, float32

    def make(tile: int):
        @cuda.jit("void(float32[:, ::1], float32[:, ::1], float32[:, ::1])")
        def gemm(a, b, c):
            sa = cuda.shared.array((tile, tile), float32)
            sb = cuda.shared.array((tile, tile), float32)
            tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
            row, col = cuda.blockIdx.y * tile + ty, cuda.blockIdx.x * tile + tx
            n = a.shape[1]
            acc = float32(0.0)
            for k in range(0, n, tile):
                sa[ty, tx] = a[row, k + tx] if row < a.shape[0] and k + tx < n else 0.0
                sb[ty, tx] = b[k + ty, col] if k + ty < n and col < b.shape[1] else 0.0
                cuda.syncthreads()
                for i in range(tile):
                    acc += sa[ty, i] * sb[i, tx]
                cuda.syncthreads()
            if row < c.shape[0] and col < c.shape[1]:
                c[row, col] = acc

        return gemm

    return [(f"numba tiled_gemm TILE={t}", make(t), t * t, 0) for t in (4, 8, 16, 32)]


def find_gpu() -> tuple[tuple[int, int] | None, object, str]:
    """(compute capability, cupy module or None, reason when there is no GPU)."""
    reasons = []
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            cc = cupy.cuda.Device(0).compute_capability
            return (int(cc[:-1]), int(cc[-1])), cupy, ""
    except Exception as exc:  # no cupy, no driver, no device: all mean "try Numba"
        reasons.append(f"CuPy: {type(exc).__name__}: {exc}")
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        return None, None, "; ".join(reasons + ["Numba: the CUDA simulator is on"])
    try:
        from numba import cuda

        if cuda.is_available():
            return tuple(cuda.get_current_device().compute_capability), None, ""
        reasons.append("Numba: numba.cuda.is_available() is False")
    except Exception as exc:
        reasons.append(f"Numba: {type(exc).__name__}: {exc}")
    return None, None, "; ".join(reasons)


def check(label: str, kernel, threads: int, dyn: int, cc: tuple[int, int]) -> tuple[str, bool]:
    """One table row, and whether model and driver agree."""
    try:
        res = kernel_resources(kernel)
    except Exception as exc:
        return f"| {label} | {threads} | ? | ? | - | - | resources failed: {exc} | no |", False
    smem = res.static_smem_bytes + dyn
    try:
        occ = theoretical_occupancy(cc, threads, res.regs_per_thread, smem)
        model, why = occ.blocks_per_sm, occ.limited_by
    except ValueError as exc:  # not even one block fits: the driver should say 0
        occ, model, why = None, 0, "impossible"
        print(f"note {label}, {threads} threads: {exc}")
    try:
        driver = driver_occupancy(kernel, threads, dyn)
    except Exception as exc:
        driver = f"error: {type(exc).__name__}: {exc}"
    ok = model == driver
    if not ok and occ is not None:
        print(f"MISMATCH {label}: driver {driver}; model: {describe(occ)}")
    local = f", local {res.local_bytes_per_thread} B" if res.local_bytes_per_thread else ""
    row = (f"| {label} | {threads} | {res.regs_per_thread}{local} | {res.static_smem_bytes}"
           f"+{dyn} | {model} | {driver} | {why} | {'yes' if ok else 'NO'} |")
    return row, ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    args = parser.parse_args()

    cc, cupy, reason = find_gpu()
    if cc is None:
        print(f"check_occupancy: needs a GPU, nothing to compare ({reason})")
        return 0
    if cc not in ARCH_LIMITS:
        print(f"check_occupancy: no occupancy table for compute capability {cc}")
        return 0
    configs = cupy_configs(cupy, cc) if cupy is not None else []
    try:
        configs += numba_configs()
    except Exception as exc:  # e.g. a numba-cuda / NumPy mismatch on this machine
        print(f"numba kernels skipped: {type(exc).__name__}: {exc}")

    lines = [f"Occupancy model vs driver on sm_{cc[0]}{cc[1]} ({ARCH_LIMITS[cc].name})", "",
             "| kernel | threads | regs | smem static+dyn (B) | model blocks/SM "
             "| driver blocks/SM | limited_by | equal? |",
             "|---|---|---|---|---|---|---|---|"]
    results = [check(label, k, threads, dyn, cc) for label, k, threads, dyn in configs]
    lines += [row for row, _ in results]
    equal = sum(ok for _, ok in results)
    lines += ["", f"occupancy-vs-driver: {equal}/{len(results)} equal"]
    text = "\n".join(lines)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    return 0 if equal == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
