"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.checks.speedup`."""

from course.checks.speedup import (  # noqa: F401
    CHECK_SHAPE,
    REFERENCE_ENV,
    SPEEDUP_REPEATS,
    SPEEDUP_SIZE,
    SPEEDUP_THRESHOLD,
    SPEEDUP_TILE,
    NotMeasuredError,
    SpeedupCheckError,
    SpeedupReport,
    check_speedup,
    measure_speedup,
)
