"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.checks.answers`."""

from course.checks.answers import (  # noqa: F401
    AnswerError,
    expect_close,
    expect_equal,
    expect_value_error,
)
