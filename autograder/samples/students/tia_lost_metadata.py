"""Tia's notebooks went through an editor that keeps only what it knows: every cell lost its
nbgrader metadata and its id (nbformat 4.4). The grader recognises the cells against the
release, restores their metadata and grades them as the originals: full marks, and the grade
table says the metadata was restored."""

NOTEBOOKS = "all"
BASE = "solutions"
STRIP_METADATA = "all"
EXPECTED = {"01_arithmetic_intensity": 11, "02_naive_gemm": 6, "03_tiled_gemm": 11,
            "05_roofline": 9, "06_tile_sweep": 5, "07_bonus_register_tiling": 3}
EXPECTED_GPU = {"03_tiled_gemm": 14}
