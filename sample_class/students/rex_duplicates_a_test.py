"""Rex duplicated the visible test `ai_matmul_square` to run it again beside his change. A
test runs once, where the release put it: the copy is dropped and the note says so. Full
marks (nbgrader alone: 0/11)."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
DUPLICATE = {"01_arithmetic_intensity": ["ai_matmul_square"]}
EXPECTED = {"01_arithmetic_intensity": 11}
EXPECTED_NOTES = {"01_arithmetic_intensity": [
    "a copy of the test `ai_matmul_square` was dropped"]}
