"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.perf.timing`."""

from course.perf.timing import (  # noqa: F401
    Clock,
    CudaEventClock,
    Timing,
    time_gemm,
    time_launch,
    time_launches,
)
