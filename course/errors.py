"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.runtime.errors`."""

from course.runtime.errors import (  # noqa: F401
    explain,
    not_written_yet,
    plain_errors,
)
