"""The CUDA C speedup: never passed without a GPU; on a GPU, a fake tiled kernel fails."""

from __future__ import annotations

import pytest

from course.checks.cuda_speedup import (
    SPEEDUP_THRESHOLD_CUDA,
    check_speedup_cuda,
    measure_speedup_cuda,
)
from course.checks.speedup import NotMeasuredError, SpeedupCheckError
from course.gemm.cudac import gpu
from tests import cudac_kernels as k


def test_threshold_sits_between_fake_and_real_tiling() -> None:
    # H200, CuPy 14 (gpu-notes): fake tiling 0.92–0.95×, tile 32 1.67–1.75× the naive speed
    assert 0.95 < SPEEDUP_THRESHOLD_CUDA < 1.67


@pytest.mark.skipif(gpu.available(), reason="this machine has a GPU: the speedup is measured")
def test_without_a_gpu_the_speedup_is_not_measured() -> None:
    with pytest.raises(NotMeasuredError, match="never counted as passed"):
        measure_speedup_cuda(k.TILED, k.NAIVE)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu.available(), reason="needs a CUDA GPU and CuPy")
def test_on_a_gpu_real_tiling_passes_and_fake_tiling_fails() -> None:
    check_speedup_cuda(k.TILED, k.NAIVE)
    with pytest.raises(SpeedupCheckError, match="at least"):
        check_speedup_cuda(k.TILED_GLOBAL_INNER_LOOP, k.NAIVE)
    with pytest.raises(SpeedupCheckError, match="not correct"):
        check_speedup_cuda(k.TILED_NO_FIRST_BARRIER, k.NAIVE)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu.available(), reason="needs a CUDA GPU and CuPy")
def test_on_a_gpu_a_kernel_lazy_at_the_timed_size_gets_no_speedup() -> None:
    """Every timed launch's C is counted on the device (``gpu.count_bad_kernel``): a kernel that
    skips the work at 2048³ is caught there, however fast it looks."""
    with pytest.raises(SpeedupCheckError, match=r"elements of C are not A·B at M=2048"):
        check_speedup_cuda(k.TILED_LAZY_AT_LARGE_K, k.NAIVE)
