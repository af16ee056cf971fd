"""The course's fixed names in nbgrader: the course id and the assignment (``week4``).

The bottom of the grader: every module that needs a path like ``submitted/<student>/week4``
imports the name from here, and this module imports nothing of the grader's.
"""

from pathlib import Path

COURSE_ID = "gpu-week4"
ASSIGNMENT = "week4"


def submitted_students(root: Path) -> list[str]:
    """The students with a folder in ``root``/submitted, sorted (none if it does not exist)."""
    submitted = root / "submitted"
    return sorted(p.name for p in submitted.iterdir() if p.is_dir()) \
        if submitted.exists() else []
