"""Re-exports for notebooks and gradebooks; the code is in :mod:`course.checks.roofline_answers`."""

from course.checks.roofline_answers import (  # noqa: F401
    check_attainable,
    check_attainable_array,
    check_bound,
    check_critical_ai,
)
