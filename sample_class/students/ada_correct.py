"""Ada solved everything: full marks (the GPU-only speedup is "not measured" without a GPU;
the written answer in notebook 06 waits for the instructor)."""

NOTEBOOKS = "all"
BASE = "solutions"
EXPECTED = {"01_arithmetic_intensity": 11, "02_naive_gemm": 6, "03_tiled_gemm": 11,
            "02c_naive_gemm_cuda": 6, "03c_tiled_gemm_cuda": 11,
            "05_roofline": 13, "06_tile_sweep": 5, "07_bonus_register_tiling": 3}
EXPECTED_GPU = {"03_tiled_gemm": 14, "03c_tiled_gemm_cuda": 14}
