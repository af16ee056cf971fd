"""Re-exports for notebooks and gradebooks; code: :mod:`course.checks.intensity_answers`."""

from course.checks.intensity_answers import (  # noqa: F401
    check_ai_gemm_naive,
    check_ai_gemm_tiled,
    check_ai_matmul,
    check_ai_vector_add,
    naive_model,
    tiled_model,
)
