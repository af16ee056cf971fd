"""The course's fixed names in nbgrader: the course id and the assignment (``week4``).

The bottom of the grader: every module that needs a path like ``submitted/<student>/week4``
imports the name from here, and this module imports nothing of the grader's.
"""

COURSE_ID = "gpu-week4"
ASSIGNMENT = "week4"
