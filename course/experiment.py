"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.perf.experiment`,
:mod:`course.perf.experiment_report`.
"""

from course.perf.experiment import (  # noqa: F401
    CUBLAS,
    NAIVE,
    NUMPY,
    WRITEUP_RESULTS,
    ExperimentResult,
    Row,
    WriteupNumbers,
    check_writeup_correctness,
    exact_product,
    max_abs_diff,
    numpy_row,
    run_writeup_experiment,
    smoke_test,
    tiled_name,
    writeup_inputs,
)
from course.perf.experiment_report import (  # noqa: F401
    format_table,
    plot_experiment,
)
