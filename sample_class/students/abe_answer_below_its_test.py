"""Abe moved his (correct) `ai_matmul` answer below the tests that use it. The grader runs the
notebook top to bottom, as Run All does, so both tests of `ai_matmul` fail (8/11, what his own
Run All shows); the note names the cell and the test, so the lost points have a reason."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
MOVE = {"01_arithmetic_intensity": [("ai_matmul", "ai_matmul_ragged")]}
EXPECTED = {"01_arithmetic_intensity": 8}
EXPECTED_NOTES = {"01_arithmetic_intensity": [
    "`ai_matmul` stands after its test `ai_matmul_square`"]}
