"""Seo's notebook hangs as Fay's does (fay_hangs), on the Korean release: both hangs are cut
off by the per-cell timeout and grading goes on, to Fay's score."""

from sample_class.students import fay_hangs as _en

LANGUAGE = "ko"
SAME_AS = "fay_hangs"
NOTEBOOKS = _en.NOTEBOOKS
BASE = _en.BASE
ANSWERS = _en.ANSWERS
APPEND = _en.APPEND
EXPECTED = _en.EXPECTED
