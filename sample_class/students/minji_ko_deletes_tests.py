"""Minji makes Eli's mistake (eli_deletes_tests) on the Korean release: tile counts rounded
down, and the test cell deleted. The test cell is put back from the Korean release and scores
0, exactly as for Eli; the restored notebook and its feedback stay Korean."""

from sample_class.students import eli_deletes_tests as _en

LANGUAGE = "ko"
SAME_AS = "eli_deletes_tests"
NOTEBOOKS = _en.NOTEBOOKS
BASE = _en.BASE
ANSWERS = _en.ANSWERS
DELETE = _en.DELETE
EXPECTED = _en.EXPECTED
