"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.notebooks.tracks`."""

from course.notebooks.tracks import (  # noqa: F401
    CUDA_C,
    NUMBA,
    TRACKS,
    WEEK_KERNELS,
    Track,
    TrackKernels,
    UnusableKernelError,
    load_gemm_kernels,
    load_week_kernels,
)
