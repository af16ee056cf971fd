"""The rules behind notebooks 1 and 5's answer checks: the grader's side, never the student's.

The models the exercises ask for (notebook 1's intensities, notebook 5's roofline formulas),
each with switches that make its typical mistakes, live here and not in ``course``: a student's
copy of the course holds only what they give at the visible tests' calls
(``course/checks/expected_answers.json``, written from these rules by :mod:`.table` when the
release is built). The hidden tests import the checks of :mod:`.intensity`, :mod:`.roofline`
and :mod:`.levels` (notebook 5's intensities per memory level and bounding level),
which work the same values out for any call and hand them to ``course.checks``' own judging
functions, so a hidden test's message reads exactly like a visible one's. The grading sandbox
and the trusted re-check run in the instructor's environment, where this package is installed.
"""
