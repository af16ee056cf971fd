"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.checks.cuda_speedup`."""

from course.checks.cuda_speedup import (  # noqa: F401
    REFERENCE_KEY,
    SPEEDUP_REPEATS,
    SPEEDUP_SIZE,
    SPEEDUP_THRESHOLD_CUDA,
    SPEEDUP_TILE,
    check_speedup_cuda,
    measure_speedup_cuda,
)
