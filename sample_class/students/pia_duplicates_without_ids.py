"""Pia duplicated the `ai_matmul` answer cell in an editor that saves nbformat 4.4: no cell
ids, so the copy and the original look alike but for their place. Graded as Ora: full marks,
and the note says a copy was kept as her own cell."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
DUPLICATE = {"01_arithmetic_intensity": ["ai_matmul"]}
STRIP_IDS = ["01_arithmetic_intensity"]
EXPECTED = {"01_arithmetic_intensity": 11}
EXPECTED_NOTES = {"01_arithmetic_intensity": ["a copy of `ai_matmul` was kept as your own cell"]}
