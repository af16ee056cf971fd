"""Pat solved everything on the Numba track, then, in every notebook with tests, deleted one
test cell and rewrote another (some right after a markdown cell, the case that once made
nbgrader drop the whole notebook). The tests are put back from the release and the gradebook:
full marks, and the grade table says which cells were added back."""

NOTEBOOKS = ["01_arithmetic_intensity", "02_naive_gemm", "03_tiled_gemm", "05_roofline",
             "06_tile_sweep", "07_bonus_register_tiling"]
BASE = "solutions"
DELETE = {
    "01_arithmetic_intensity": ["ai_gemm_naive_model"],
    "02_naive_gemm": ["naive_gemm_visible"],
    "03_tiled_gemm": ["tiled_gemm_correct_visible"],
    "05_roofline": ["vector_add_correct"],
    "06_tile_sweep": ["blocks_per_sm_t4"],
    "07_bonus_register_tiling": ["register_tiled_correct_visible"],
}
EDIT_TESTS = {
    "01_arithmetic_intensity": {"ai_bad_arguments": "pass\n"},
    "02_naive_gemm": {"naive_gemm_hidden": 'print("all good")\n'},
    "03_tiled_gemm": {"tiled_gemm_traffic": "pass\n"},
    "05_roofline": {"critical_ai_ridge": "assert True\n"},
    "06_tile_sweep": {"occupancy_fraction": "# skipped\n"},
    "07_bonus_register_tiling": {"register_tiled_correct_hidden": "1 + 1\n"},
}
EXPECTED = {"01_arithmetic_intensity": 11, "02_naive_gemm": 6, "03_tiled_gemm": 11,
            "05_roofline": 13, "06_tile_sweep": 5, "07_bonus_register_tiling": 3}
EXPECTED_GPU = {"03_tiled_gemm": 14}
