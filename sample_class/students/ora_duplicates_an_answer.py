"""Ora kept a working copy of her answer: she duplicated the `ai_matmul` cell (JupyterLab's
*Duplicate*: the copy keeps the nbgrader metadata and gets a new id, right below). nbgrader
alone failed her whole notebook (0/11). The grader grades the last copy above the test, keeps
the other as her own cell and says so: full marks."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
DUPLICATE = {"01_arithmetic_intensity": ["ai_matmul"]}
EXPECTED = {"01_arithmetic_intensity": 11}
EXPECTED_NOTES = {"01_arithmetic_intensity": ["a copy of `ai_matmul` was kept as your own cell"]}
