"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.gemm.launch`."""

from course.gemm.launch import (  # noqa: F401
    NAIVE_BLOCK,
    TILES,
    GemmInputError,
    GemmKernel,
    Launch,
    NotAKernelError,
    check_array,
    check_operands,
    is_cuda_kernel,
    matmul,
    naive,
    naive_launch,
    quiet_numba,
    require_kernel,
    tiled,
    tiled_launch,
)
