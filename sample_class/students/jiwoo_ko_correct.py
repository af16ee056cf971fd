"""Jiwoo hands in three of Ada's correct notebooks (ada_correct) on the Korean release: the
formulas of notebook 1, the roofline and vector add of notebook 5, and notebook 6 with its
written answer (to grade by hand) — the same points as Ada's, the feedback in Korean. The
core class's Korean student: cheaper than all ten notebooks."""

from sample_class.students import ada_correct as _en

LANGUAGE = "ko"
SAME_AS = "ada_correct"
NOTEBOOKS = ["01_arithmetic_intensity", "05_roofline", "06_tile_sweep"]
BASE = _en.BASE
EXPECTED = {nb: _en.EXPECTED[nb] for nb in NOTEBOOKS}
