"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.perf.roofline`."""

from course.perf.roofline import (  # noqa: F401
    AI_LABEL,
    PERF_LABEL,
    KernelPoint,
    Roof,
    percent_of_roof,
    plot_roofline,
)
