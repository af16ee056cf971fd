"""The way back from the gradebook to the students: grades and feedback into an LMS.

``make export LMS=canvas|moodle`` and ``make return LMS=canvas`` (:mod:`autograder.cli.handback`)
use these: :mod:`.roster` (who is graded, their LMS ids from ``make collect``'s record, their
total from the grade table), :mod:`.canvas_csv` (Canvas's Gradebook → Import file, matched
against the gradebook exported from Canvas), :mod:`.moodle` (the grading worksheet and the
feedback zip), :mod:`.package` (safe file names, Canvas's feedback zip) and
:mod:`.canvas_upload` (comments, files and scores through the Canvas API, with ``canvasapi``).
"""
