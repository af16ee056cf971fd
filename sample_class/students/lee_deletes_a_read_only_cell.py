"""Lee deleted a read-only code cell of notebook 05 (`imports`: `from numba import cuda`),
which Colab lets a student do. Found by the property test of random edits (tests/test_edits.py):
the grader rebuilt `vector_add` without `cuda` and failed both of its tests, although every
answer was right. Read-only code is the instructor's: it is put back where the release has it,
the note says so, and Lee keeps full marks."""

NOTEBOOKS = ["05_roofline"]
BASE = "solutions"
DELETE = {"05_roofline": ["imports"]}
EXPECTED = {"05_roofline": 13}
EXPECTED_NOTES = {"05_roofline": ["read-only cell(s) you deleted were put back: `imports`"]}
