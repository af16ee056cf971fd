"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.perf.ceilings`,
:mod:`course.perf.roof`, :mod:`course.checks.vector_add`.
"""

from course.checks.vector_add import (  # noqa: F401
    ALIAS_BLOCKS,
    GPU_SIZES,
    LOOP_HINT,
    SIM_SIZES,
    VECTOR_GUARD,
    VectorAddReport,
    check_grids,
    check_vector_add,
)
from course.perf.ceilings import (  # noqa: F401
    PEAK_GEMM_SIZE,
    STREAM_BATCH,
    STREAM_BLOCKS_PER_SM,
    STREAM_N,
    VECTOR_ADD_AI,
    VECTOR_ADD_BLOCK,
    Ceiling,
    MissingDependencyError,
    VectorAddCheckError,
    check_copies,
    copy_bytes,
    copy_launches,
    measure_bandwidth,
    measure_copy_bandwidth,
    measure_fp32_peak,
    vector_add_bytes,
    vector_add_launch,
)
from course.perf.roof import (  # noqa: F401
    ceilings_for_plot,
    compare_with_datasheet,
)
