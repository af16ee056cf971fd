"""Noa pressed `y` on a read-only description (`matmul_ideal`) and turned it into a code cell,
in an editor that saves nbformat 4.4 (no cell ids). Found by the property test of random
edits (tests/test_edits.py): nbgrader turns the cell back into markdown, and validating the
result without an id failed the whole notebook (GRADING FAILED). The grader gives it its type
back first: full marks."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
RETYPE = {"01_arithmetic_intensity": ["matmul_ideal"]}
STRIP_IDS = ["01_arithmetic_intensity"]
EXPECTED = {"01_arithmetic_intensity": 11}
