"""Tia's notebooks went through an editor that keeps only what it knows: every cell lost its
nbgrader metadata and its id (nbformat 4.4). The grader recognises the cells against the
release, restores their metadata and grades them as the originals: full marks, and the grade
table says the metadata was restored."""

# Three notebooks of different shapes (formulas and one written answer; a kernel, a test
# cell with hidden tests and an optional exercise; tables of hints): recognising cells
# depends on a notebook's layout, not on its topic, and tests/test_restore.py covers every
# notebook of the week cell by cell.
NOTEBOOKS = ["01_arithmetic_intensity", "02_naive_gemm", "06_tile_sweep"]
BASE = "solutions"
STRIP_METADATA = "all"
EXPECTED = {"01_arithmetic_intensity": 11, "02_naive_gemm": 6, "06_tile_sweep": 5}
