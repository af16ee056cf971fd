"""Re-exports for notebooks and gradebooks; the code lives in :mod:`course.gemm.cudac.source`."""

from course.gemm.cudac.source import (  # noqa: F401
    NAIVE,
    PARAMETERS,
    TILED,
    CompiledKernel,
    CudaCompileError,
    CudaSourceError,
    KernelSpec,
    compile_kernel,
    full_source,
    require_text,
)
