"""Tests for course.gemm.occupancy: hand-worked cases, bad input, and (on a GPU) the driver.

Each hand-worked case shows its arithmetic. Notation: W = warps per block = ceil(threads/32);
a register warp allocation is ceil(regs*32/256)*256 and the SM's 65536 registers come in
4 quarters of 16384, so blocks by registers = (16384 // regs_per_warp) * 4 // W; shared memory
per block is rounded up to 256 B (sm_75) or, plus 1024 B reserved, to 128 B (sm_80+).
sm_75: 32 warps, 16 blocks, 65536 B per SM. sm_90: 64 warps, 32 blocks, 233472 B per SM.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from course.gemm.occupancy import (
    ARCH_LIMITS,
    RESOURCES,
    UNLIMITED,
    KernelResources,
    ResourcesUnavailableError,
    describe,
    driver_occupancy,
    kernel_resources,
    theoretical_occupancy,
)

T4, H200 = (7, 5), (9, 0)

# (cc, threads, regs, smem bytes) -> (blocks per SM, limited_by, occupancy)
CASES = {
    # 8 warps: warps 32//8=4; regs 1024/warp -> 16*4=64 warps -> 8; smem none; cap 16 -> 4.
    "t4_256x32_nosmem": ((T4, 256, 32, 0), (4, "warps", 1.0)),
    # regs 128*32=4096/warp -> 16384//4096=4 per quarter -> 16 warps -> 2 blocks (warps: 4).
    "t4_256x128_regs": ((T4, 256, 128, 0), (2, "registers", 16 / 32)),
    # 24 KiB: 65536//24576 = 2 (2.67); warps 4, regs 8 -> 2 blocks, 16 of 32 warps.
    "t4_256x32_24k_smem": ((T4, 256, 32, 24 * 1024), (2, "shared_memory", 0.5)),
    # 21800 B rounds up to 22016 (86*256): 65536//22016 = 2, not 65536//21800 = 3; 4 warps.
    "t4_smem_rounding": ((T4, 128, 32, 21800), (2, "shared_memory", 8 / 32)),
    # 1 warp: warps 32; regs 512/warp -> 32*4=128; cap 16 -> 16 blocks = 16 warps.
    "t4_tiny_blocks": ((T4, 32, 16, 0), (16, "blocks", 0.5)),
    # 48 KiB + 1 KiB reserved = 50176 B: 233472//50176 = 4 (4.65); warps 8, regs 8.
    "h200_48k_smem": ((H200, 256, 32, 48 * 1024), (4, "shared_memory", 32 / 64)),
    # 57 KiB = 228/4 KiB, but + 1 KiB reserved = 59392 B: 233472//59392 = 3 (3.93), not 4.
    "h200_reserved_57k": ((H200, 256, 32, 57 * 1024), (3, "shared_memory", 24 / 64)),
    # 114 KiB = 228/2 KiB, + 1 KiB = 117760 B: 233472//117760 = 1 (1.98), not 2.
    "h200_reserved_114k": ((H200, 256, 32, 114 * 1024), (1, "shared_memory", 8 / 64)),
    # 40 regs -> 1280/warp; 16384//1280 = 12 per quarter -> 48 warps -> 48//3 = 16 blocks
    # (65536//1280 = 51 warps would wrongly give 17); warps 64//3 = 21; cap 32.
    "h200_subpartitions": ((H200, 96, 40, 0), (16, "registers", 48 / 64)),
    # 64 regs -> 2048/warp -> 8*4 = 32 warps = 1 block of 32 warps; warps alone allow 2.
    "h200_1024x64_regs": ((H200, 1024, 64, 0), (1, "registers", 32 / 64)),
    # Other archs. sm_86: 48 warps, so one 1024-thread block (32 warps) -> 32/48.
    "a10_1024_threads": (((8, 6), 1024, 32, 0), (1, "warps", 32 / 48)),
    # sm_80: (49152+1024) = 50176 B -> 167936//50176 = 3 (3.35); 24 of 64 warps.
    "a100_48k_smem": (((8, 0), 256, 32, 48 * 1024), (3, "shared_memory", 24 / 64)),
    # sm_89: cap 24 blocks; 1-warp blocks -> warps 48, regs 128 -> 24 blocks, 24 of 48 warps.
    "l4_tiny_blocks": (((8, 9), 32, 16, 0), (24, "blocks", 0.5)),
}

# The week's tiled GEMM: tile x tile threads, two float32 tiles of shared memory, 32 registers.
GEMM_CASES = {
    # T4. tile 4: 16 threads = 1 warp; warps 32, regs 64, smem 128->256 B: 256; cap 16.
    (T4, 4): (16, "blocks", 16 / 32),
    # tile 8: 2 warps; warps 16, regs 64//2=32, smem 512 B: 128; cap 16 -> tie, "warps".
    (T4, 8): (16, "warps", 1.0),
    # tile 16: 8 warps; warps 4, regs 8, smem 2048 B: 32 -> 4.
    (T4, 16): (4, "warps", 1.0),
    # tile 32: 32 warps; warps 1, regs 64//32=2, smem 8192 B: 8 -> 1.
    (T4, 32): (1, "warps", 1.0),
    # H200. tile 4: 1 warp; warps 64, regs 64, smem 128+1024=1152 B: 202; cap 32.
    (H200, 4): (32, "blocks", 32 / 64),
    # tile 8: 2 warps; warps 32, regs 32, smem 1536 B: 152, cap 32 -> three-way tie.
    (H200, 8): (32, "warps", 1.0),
    # tile 16: 8 warps; warps 8, regs 8, smem 3072 B: 76 -> 8 (warps and registers tie).
    (H200, 16): (8, "warps", 1.0),
    # tile 32: 32 warps; warps 2, regs 2, smem 9216 B: 25 -> 2.
    (H200, 32): (2, "warps", 1.0),
}


@pytest.mark.parametrize("name", CASES)
def test_hand_worked_cases(name: str) -> None:
    args, (blocks, limited_by, occupancy) = CASES[name]
    occ = theoretical_occupancy(*args)
    assert (occ.blocks_per_sm, occ.limited_by) == (blocks, limited_by)
    assert occ.occupancy == pytest.approx(occupancy)
    assert occ.warps_per_sm == blocks * occ.warps_per_block


@pytest.mark.parametrize(("cc", "tile"), GEMM_CASES)
def test_tiled_gemm(cc: tuple[int, int], tile: int) -> None:
    blocks, limited_by, occupancy = GEMM_CASES[cc, tile]
    occ = theoretical_occupancy(cc, tile * tile, 32, 2 * tile * tile * 4)
    assert (occ.blocks_per_sm, occ.limited_by) == (blocks, limited_by)
    assert occ.occupancy == pytest.approx(occupancy)


def test_tile32_with_40_registers_halves_occupancy() -> None:
    # 40 regs -> 1280/warp -> 12*4 = 48 warps by registers < 2 blocks of 32 warps -> 1 block.
    occ = theoretical_occupancy(H200, 1024, 40, 8192)
    assert (occ.blocks_per_sm, occ.limited_by, occ.occupancy) == (1, "registers", 0.5)


def test_ties_and_extra_fields() -> None:
    # H200 tile 16: warps 64//8 = 8, registers (16*4)//8 = 8 -> both listed, warps reported.
    occ = theoretical_occupancy(H200, 256, 32, 2048)
    assert occ.limiting_factors == ("warps", "registers")
    assert (occ.blocks_by_warps, occ.blocks_by_registers) == (8, 8)
    assert (occ.blocks_by_shared_memory, occ.blocks_by_blocks) == (233472 // 3072, 32)
    assert (occ.regs_per_warp_alloc, occ.regs_per_block_alloc) == (1024, 8192)
    assert (occ.smem_per_block_alloc, occ.smem_per_sm, occ.max_warps_per_sm) == (3072, 233472, 64)
    # No registers and no shared memory on sm_75: those resources never limit.
    free = theoretical_occupancy(T4, 64, 0, 0)
    assert free.blocks_by_registers == free.blocks_by_shared_memory == UNLIMITED
    with pytest.raises(dataclasses.FrozenInstanceError):
        occ.blocks_per_sm = 9  # type: ignore[misc]


def test_register_allocation_rounds_to_256_per_warp() -> None:
    # 33 regs * 32 = 1056 -> 1280 per warp; 16384//1280 = 12 per quarter -> 48 warps -> 6 blocks.
    occ = theoretical_occupancy(H200, 256, 33, 0)
    assert (occ.regs_per_warp_alloc, occ.blocks_per_sm, occ.limited_by) == (1280, 6, "registers")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (((6, 1), 256, 32, 0), ["compute capability", "sm_75", "sm_90"]),
        (("90", 256, 32, 0), ["compute capability"]),
        ((T4, 0, 32, 0), ["threads"]),
        ((H200, 1025, 32, 0), ["threads", "1024"]),
        ((T4, 256, -1, 0), ["registers"]),
        ((H200, 256, 256, 0), ["registers", "255"]),
        ((T4, 256, 32, -1), ["shared memory"]),
        ((T4, 256, 32, 64 * 1024 + 1), ["shared memory", "65536"]),
        ((H200, 256, 32, 227 * 1024 + 1), ["shared memory", "232448"]),
        # 65 regs -> 2304/warp; 16384//2304 = 7 per quarter -> 28 warps < 32 (73728 > 65536).
        ((T4, 1024, 65, 0), ["impossible", "registers", "2304", "SM 28"]),
        ((H200, 1024, 255, 0), ["impossible", "registers"]),
        # 25 warps x 2560 = 64000 < 65536 registers, yet 16384//2560 = 6 per quarter -> 24 < 25.
        ((H200, 800, 80, 0), ["impossible", "registers", "2560", "24"]),
    ],
)
def test_bad_input_names_the_resource(args: tuple, words: list[str]) -> None:
    with pytest.raises(ValueError) as info:
        theoretical_occupancy(*args)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("cc", ARCH_LIMITS)
def test_invariants_over_a_grid(cc: tuple[int, int]) -> None:
    """Consistency over many inputs: the minimum rule, tie order, and monotone resources."""
    lim = ARCH_LIMITS[cc]
    for threads in (1, 32, 33, 96, 100, 128, 256, 384, 512, 768, 1000, 1024):
        previous = None
        for regs in (0, 16, 32, 40, 48, 64, 96, 128, 168, 255):
            try:
                occ = theoretical_occupancy(cc, threads, regs, 4096)
            except ValueError as exc:
                assert "registers" in str(exc)
                previous = 0
                continue
            counts = [occ.blocks_by_warps, occ.blocks_by_registers,
                      occ.blocks_by_shared_memory, occ.blocks_by_blocks]
            assert occ.blocks_per_sm == min(counts) >= 1
            assert occ.limited_by == RESOURCES[counts.index(min(counts))]
            assert 0 < occ.occupancy <= 1
            assert occ.warps_per_sm <= lim.max_warps_per_sm
            assert previous is None or occ.blocks_per_sm <= previous  # more regs, never more
            previous = occ.blocks_per_sm
        sizes = (0, 1, 1000, 4096, 16384, 48 * 1024, lim.smem_per_block_optin)
        blocks = [theoretical_occupancy(cc, threads, 32, s).blocks_per_sm for s in sizes]
        assert blocks == sorted(blocks, reverse=True)  # more shared memory, never more blocks


def test_arch_table_matches_reported_device_limits() -> None:
    # H200 (sm_90) reports 233472 B shared memory per SM and 1024 B reserved per block; and
    # what a block may opt in to plus its reservation always fits on one SM.
    assert ARCH_LIMITS[H200].smem_per_sm == 233472
    assert ARCH_LIMITS[H200].smem_reserved_per_block == 1024
    for lim in ARCH_LIMITS.values():
        assert lim.smem_per_block_optin + lim.smem_reserved_per_block <= lim.smem_per_sm


def test_describe_is_one_plain_line() -> None:
    text = describe(theoretical_occupancy(H200, 96, 40, 0))
    assert "\n" not in text
    for part in ("sm_90", "96 threads", "3 warps", "16 blocks per SM", "48 of 64 warps", "75%",
                 "limited by registers"):
        assert part in text
    assert "1 block per SM" in describe(theoretical_occupancy(H200, 256, 32, 114 * 1024))
    assert "1024 B reserved" in describe(theoretical_occupancy(H200, 256, 32, 114 * 1024))


def test_import_is_cheap() -> None:
    """Loading the module pulls in neither Numba nor CuPy."""
    path = Path(__file__).resolve().parents[1] / "course" / "gemm" / "occupancy.py"
    code = (
        "import importlib.util as u, sys\n"
        f"spec = u.spec_from_file_location('occ', {str(path)!r})\n"
        "mod = u.module_from_spec(spec); sys.modules['occ'] = mod; spec.loader.exec_module(mod)\n"
        "print(sorted(m for m in ('numba', 'cupy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------------------------------------
# Compiled-kernel queries: CPU-side behaviour, then the real-GPU comparison.


def test_simulator_kernels_have_no_resources() -> None:
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") in ("", "0"):
        pytest.skip("checks the simulator; NUMBA_ENABLE_CUDASIM is not set")
    from numba import cuda

    @cuda.jit
    def fill(a):
        a[cuda.grid(1)] = 1.0

    with pytest.raises(ResourcesUnavailableError, match="real CUDA GPU"):
        kernel_resources(fill, "void(float32[::1])")
    with pytest.raises(ResourcesUnavailableError, match="simulator"):
        driver_occupancy(fill, 128)
    assert issubclass(ResourcesUnavailableError, RuntimeError)


def test_kernel_resources_reads_a_numba_overload() -> None:
    # Stand-ins for a compiled numba-cuda overload: the current property names, and the
    # driver-attribute tuple that older releases keep behind them.
    current = SimpleNamespace(regs_per_thread=40, shared_mem_per_block=2048,
                              local_mem_per_thread=0, max_threads_per_block=1024)
    attrs = SimpleNamespace(regs=72, shared=8192, local=16, maxthreads=896)
    older = SimpleNamespace(_codelibrary=SimpleNamespace(get_cufunc=lambda: SimpleNamespace(
        attrs=attrs)))
    assert kernel_resources(current) == KernelResources(40, 2048, 0, 1024)
    assert kernel_resources(older) == KernelResources(72, 8192, 16, 896)
    with pytest.raises(TypeError, match="RawKernel"):
        kernel_resources(lambda a: a)


def _real_gpu_or_skip():
    if os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0"):
        pytest.skip("needs a real CUDA GPU: NUMBA_ENABLE_CUDASIM is set (simulator)")
    try:
        from numba import cuda
    except ImportError as exc:
        pytest.skip(f"needs a real CUDA GPU: numba is not importable ({exc})")
    if not cuda.is_available():
        pytest.skip("needs a real CUDA GPU: numba.cuda.is_available() is False")
    return cuda


def _numba_tiled_gemm(tile: int):
    from numba import cuda, float32

    @cuda.jit
    def gemm(a, b, c):
        sa = cuda.shared.array((tile, tile), float32)
        sb = cuda.shared.array((tile, tile), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row, col = cuda.blockIdx.y * tile + ty, cuda.blockIdx.x * tile + tx
        n = a.shape[1]
        acc = float32(0.0)
        for k in range(0, n, tile):
            ok_a = row < a.shape[0] and k + tx < n
            ok_b = k + ty < n and col < b.shape[1]
            sa[ty, tx] = a[row, k + tx] if ok_a else float32(0.0)
            sb[ty, tx] = b[k + ty, col] if ok_b else float32(0.0)
            cuda.syncthreads()
            for i in range(tile):
                acc += sa[ty, i] * sb[i, tx]
            cuda.syncthreads()
        if row < c.shape[0] and col < c.shape[1]:
            c[row, col] = acc

    return gemm


@pytest.mark.gpu
def test_model_matches_driver_on_gpu() -> None:
    cuda = _real_gpu_or_skip()
    cc = tuple(cuda.get_current_device().compute_capability)
    if cc not in ARCH_LIMITS:
        pytest.skip(f"no occupancy table for compute capability {cc}")
    sig = "void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"
    for tile in (4, 8, 16, 32):
        kernel = _numba_tiled_gemm(tile)
        res = kernel_resources(kernel, sig)
        assert res.static_smem_bytes == 2 * tile * tile * 4
        for threads in (tile * tile, 32, 96, 256, 1024):
            if threads > res.max_threads_per_block:
                continue
            model = theoretical_occupancy(cc, threads, res.regs_per_thread, res.static_smem_bytes)
            assert model.blocks_per_sm == driver_occupancy(kernel, threads), describe(model)
