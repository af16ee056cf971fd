"""Ara hands in Ada's full correct submission (ada_correct) on the Korean release: every
notebook, the same answers, so the same grade; the feedback is in Korean."""

from sample_class.students import ada_correct as _en

LANGUAGE = "ko"
SAME_AS = "ada_correct"
NOTEBOOKS = _en.NOTEBOOKS
BASE = _en.BASE
EXPECTED = _en.EXPECTED
EXPECTED_GPU = _en.EXPECTED_GPU
