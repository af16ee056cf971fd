"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.perf.sweep`,
:mod:`course.perf.sweep_table`, :mod:`course.checks.occupancy`, :mod:`course.gemm.occupancy`,
:mod:`course.notebooks.tracks`, :mod:`course.perf.kernel_models`.
"""

from course.checks.occupancy import (  # noqa: F401
    Case,
    OccupancyPredictionError,
    check_blocks_per_sm_prediction,
    check_occupancy_prediction,
)
from course.gemm.occupancy import (  # noqa: F401
    ARCH_LIMITS,
    ResourcesUnavailableError,
    theoretical_occupancy,
)
from course.notebooks.tracks import (  # noqa: F401
    load_week_kernels,
)
from course.perf.kernel_models import (  # noqa: F401
    ASSUMED_REGS,
    BYTES,
    PROFILES,
    CompiledCounts,
    KernelModel,
    Target,
    as_kernel_model,
    available_profiles,
    cuda_c_model,
    cuda_counts,
    resolve_target,
)
from course.perf.sweep import (  # noqa: F401
    NEEDS_GPU,
    SweepRow,
    model_row,
    run_sweep,
)
from course.perf.sweep_table import (  # noqa: F401
    plot_sweep,
    resource_report,
    rows_to_table,
)
