"""Hyun hands in Kim's fake kernel (kim_fake_kernel) on the Korean release: not a CUDA
kernel, so 0, as in English."""

from sample_class.students import kim_fake_kernel as _en

LANGUAGE = "ko"
SAME_AS = "kim_fake_kernel"
NOTEBOOKS = _en.NOTEBOOKS
BASE = _en.BASE
ANSWERS = _en.ANSWERS
EXPECTED = _en.EXPECTED
