"""Rae worked on Colab and downloaded her notebooks: Colab kept the nbgrader metadata, copied
each cell's id into metadata.id, added its own keys, trimmed trailing whitespace and wrote
2-space JSON. Correct: full marks."""

NOTEBOOKS = ["01_arithmetic_intensity", "02_naive_gemm", "05_roofline"]
BASE = "solutions"
ROUND_TRIP = "colab"
EXPECTED = {"01_arithmetic_intensity": 11, "02_naive_gemm": 6, "05_roofline": 13}
