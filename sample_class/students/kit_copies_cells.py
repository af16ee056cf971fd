"""Kit copied cells of every kind in a notebook saved as nbformat 4.4 (no cell ids): an answer
(`ai_gemm_tiled`), a visible test (`ai_vector_add_basic`), a read-only description
(`request_models`) and the read-only plot cell (`plot_ai`). The answer's copy is kept as her
own cell, the others are dropped; full marks, and the note says each."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
DUPLICATE = {"01_arithmetic_intensity": ["ai_gemm_tiled", "ai_vector_add_basic",
                                         "request_models", "plot_ai"]}
STRIP_IDS = ["01_arithmetic_intensity"]
EXPECTED = {"01_arithmetic_intensity": 11}
EXPECTED_NOTES = {"01_arithmetic_intensity": [
    "a copy of `ai_gemm_tiled` was kept as your own cell",
    "a copy of the test `ai_vector_add_basic` was dropped",
    "a copy of the read-only cell `request_models` was dropped",
    "a copy of the read-only cell `plot_ai` was dropped"]}
