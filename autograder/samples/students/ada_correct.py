"""Ada solved everything: full marks (the GPU-only speedup is 'not measured' without a GPU)."""

NOTEBOOKS = "all"
BASE = "solutions"
EXPECTED = {"01_arithmetic_intensity": 11, "02_naive_gemm": 6, "03_tiled_gemm": 11}
EXPECTED_GPU = {"03_tiled_gemm": 14}
