"""The CUDA C bonus ladder (scripts/reference/cudac_ladder.py) computes the right product with no
race, on the CPU runner: its GPU timings in scripts/gpu/cudac.py are of correct kernels."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from course.gemm.cudac import cpu, nvrtc
from course.gemm.cudac.source import KernelSpec, compile_kernel

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("cudac_ladder",
                                              ROOT / "scripts" / "reference" / "cudac_ladder.py")
ladder = importlib.util.module_from_spec(spec)
sys.modules["cudac_ladder"] = ladder
spec.loader.exec_module(ladder)

pytestmark = pytest.mark.skipif(not (nvrtc.available() and cpu.available()),
                                reason="needs NVRTC and g++ for the CUDA C CPU runner")


@pytest.mark.parametrize("rung", ladder.RUNGS, ids=lambda r: r.name)
def test_rung_is_correct_and_race_free(rung) -> None:
    kspec = KernelSpec(rung.name, rung.name.upper(), tiled=False)
    compiled = compile_kernel(rung.source, kspec)  # compiles for a GPU, right signature
    assert compiled.resources.registers <= 128  # two blocks of 256 threads fit an SM
    M, N, K = 2 * rung.block_m, rung.block_n, 3 * rung.block_k  # K: several steps
    assert rung.fits(M, N, K)
    rng = np.random.default_rng(0)
    A = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    B = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    run = cpu.run(cpu.build(rung.source, kspec), A, B, rung.grid(M, N), rung.threads)
    assert not (run.problems or run.races or run.uninitialised), \
        (run.problems + run.races + run.uninitialised)[:2]
    assert np.allclose(run.C, A.astype(np.float64) @ B, atol=1e-4)
    assert run.reads_a == M * K * (N // rung.block_n)  # each block reads its strip once


def test_a_race_in_the_double_buffer_is_caught() -> None:
    """Storing the next tiles into the stage being read (one buffer) must be a race."""
    rung = ladder.RUNGS[-1]
    broken = rung.source.replace("int nxt = cur ^ 1;", "int nxt = cur;")
    kspec = KernelSpec(rung.name, "BROKEN", tiled=False)
    M, N, K = rung.block_m, rung.block_n, 3 * rung.block_k
    A = np.ones((M, K), np.float32)
    B = np.ones((K, N), np.float32)
    run = cpu.run(cpu.build(broken, kspec), A, B, rung.grid(M, N), rung.threads)
    assert run.races and "no __syncthreads() in between" in run.races[0]


def test_gpu_script_finds_its_kernels_and_says_it_needs_a_gpu(capsys) -> None:
    sys.path.insert(0, str(ROOT / "scripts" / "gpu"))  # its `from common import …`
    spec_ = importlib.util.spec_from_file_location("cudac", ROOT / "scripts" / "gpu" / "cudac.py")
    script = importlib.util.module_from_spec(spec_)
    sys.modules["cudac"] = script
    spec_.loader.exec_module(script)
    src = script.kernels()  # the mutations still apply to the notebooks' solutions
    assert set(src) == {"naive", "tiled", "fake", "racy"}
    assert "A[row * K + t * TILE + k]" in src["fake"]
    from course.gemm.cudac import gpu

    if not gpu.available():
        assert script.main([]) == 2
        assert "needs a CUDA GPU" in capsys.readouterr().out
