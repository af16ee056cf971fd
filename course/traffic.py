"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.checks.traffic`,
:mod:`course.gemm.reads`.
"""

from course.checks.traffic import (  # noqa: F401
    TRAFFIC_SLACK,
    TrafficCheckError,
    TrafficReport,
    check_traffic,
)
from course.gemm.reads import (  # noqa: F401
    naive_reads,
    tiled_reads,
)
