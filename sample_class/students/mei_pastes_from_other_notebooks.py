"""Mei pasted cells of notebook 01 into later notebooks, in an editor that saves nbformat 4.4
(no cell ids). Found by the property test of random edits (tests/test_edits.py); the cells
keep notebook 01's metadata, and their grade_ids exist in the later notebooks as other cells:

* 01's `roofline` description (a markdown cell with a figure) into 03, whose `roofline` is a
  read-only code cell: nbgrader turned the markdown into code, the figure's attachment made the
  cell invalid and the whole notebook failed (GRADING FAILED);
* 01's `vector_add` description into 05, below her `vector_add` answer: the last cell marked
  `vector_add` was graded as the answer, nbgrader turned it into code, and her kernel was gone.

A cell of another type (or another checksum) than the release's is not a copy of it: both are
kept as her own cells, the note says so, and she keeps full marks."""

NOTEBOOKS = ["03_tiled_gemm", "05_roofline"]
BASE = "solutions"
PASTE = {"03_tiled_gemm": [("01_arithmetic_intensity", "roofline", "setup")],
         "05_roofline": [("01_arithmetic_intensity", "vector_add", "vector_add")]}
STRIP_IDS = ["03_tiled_gemm", "05_roofline"]
EXPECTED = {"03_tiled_gemm": 11, "05_roofline": 13}
EXPECTED_GPU = {"03_tiled_gemm": 14}
EXPECTED_NOTES = {
    "03_tiled_gemm": ["a cell marked `roofline` that is not this notebook's"],
    "05_roofline": ["a cell marked `vector_add` that is not this notebook's"]}
