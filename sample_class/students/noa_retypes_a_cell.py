"""Noa pressed `y` on a read-only description with a figure (`roofline`) and turned it into a
code cell, which drops the figure, in an editor that saves nbformat 4.4 (no cell ids). Found
by the property test of random edits (tests/test_edits.py), twice: nbgrader turns the cell
back into markdown, and validating it without an id failed the whole notebook (GRADING
FAILED); with that fixed, the end-to-end run found that the cell's text came back without its
figure, so `nbgrader generate_feedback` failed on its `attachment:` link and Noa had no
feedback. The grader gives the cell its type and its figure back first: full marks, and
feedback."""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
RETYPE = {"01_arithmetic_intensity": ["roofline"]}
STRIP_IDS = ["01_arithmetic_intensity"]
EXPECTED = {"01_arithmetic_intensity": 11}
