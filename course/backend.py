"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.runtime.backend`."""

from course.runtime.backend import (  # noqa: F401
    AUTOGRADE_ENV,
    COLAB_HINT,
    SIM_ENV,
    TRUSTED_ENV,
    Backend,
    NoGPUError,
    autograding,
    choose_numba_target,
    describe,
    detect,
    driver_gpu_count,
    load_cuda_driver,
    on_colab,
    require_gpu,
    show,
    simulator_requested,
)
