"""Xan duplicated a read-only description (the markdown cell `matmul_ideal`) by accident. The
copy is dropped and the note says so: full marks (nbgrader alone: 0/11)."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
DUPLICATE = {"01_arithmetic_intensity": ["matmul_ideal"]}
EXPECTED = {"01_arithmetic_intensity": 11}
EXPECTED_NOTES = {"01_arithmetic_intensity": [
    "a copy of the read-only cell `matmul_ideal` was dropped"]}
