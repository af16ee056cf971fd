"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.checks.cuda_gemm`."""

from course.checks.cuda_gemm import (  # noqa: F401
    CPU_SHAPES,
    CheckNotRunError,
    Shape,
    check_naive_gemm_cuda,
    check_tiled_gemm_cuda,
    check_traffic_cuda,
    run_guarded,
    watch,
)
