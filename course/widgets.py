"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.perf.widgets`."""

from course.perf.widgets import (  # noqa: F401
    SIZES,
    StaticSummary,
    rows_to_html,
    single_tile_html,
    sweep_panel,
)
