"""Layer 5: the graded checks — every check a test cell calls, with messages that say what to fix.

Numeric answers (``answers``), the GEMM kernels (``gemm``; CUDA C: ``cuda_gemm``), memory
traffic (``traffic``), the speedup (``speedup``, ``cuda_speedup``), notebook 05's vector add
(``vector_add``), notebook 06's occupancy predictions (``occupancy``) and the bonus
(``bonus``).

``from course.checks import check_tiled_gemm`` — the path notebooks and gradebooks use — keeps
working: this package re-exports what the flat module ``course.checks`` offered (the GEMM
checks and, from :mod:`course.gemm.operands`, the operands and diagnosis they use).
"""

from course.checks.gemm import (
    GPU_SHAPES,
    RACE_PROBE_TILE,
    SIM_BIG_TILE,
    SIM_SHAPES,
    GemmCheckError,
    GemmReport,
    check_naive_gemm,
    check_tiled_gemm,
    not_written,
    run_cases,
    try_gemm,
)
from course.gemm.operands import (
    C_GUARD,
    C_POISON_BITS,
    GUARD,
    INPUT_GUARD_BITS,
    Shape,
    diagnose,
    random_operands,
    reference_and_tolerance,
    run_guarded,
)

__all__ = [
    "C_GUARD", "C_POISON_BITS", "GPU_SHAPES", "GUARD", "INPUT_GUARD_BITS", "RACE_PROBE_TILE",
    "SIM_BIG_TILE", "SIM_SHAPES", "GemmCheckError", "GemmReport", "Shape", "check_naive_gemm",
    "check_tiled_gemm", "diagnose", "not_written", "random_operands", "reference_and_tolerance",
    "run_cases", "run_guarded", "try_gemm",
]
