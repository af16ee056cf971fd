"""``grades.csv`` with the course's total, and ``grade-reasons.csv`` with every reason whole.

nbgrader's own export (``CsvExportPlugin``) sums every notebook of the assignment: both tracks'
notebooks 2 and 3, and the GPU checks a machine without a GPU could not measure, so a one-track
student graded on a laptop reads 66/74 there and 49/51 in the grade table. The course's export
takes nbgrader's place (``c.ExportApp.plugin_class``, set in :mod:`autograder.grading.config`,
so ``nbgrader export`` and ``make table`` both write it) and writes the grade table's total
(:func:`autograder.results.table.total`: the student's own track, hand grades in, not-measured
checks out of the maximum) in nbgrader's columns, plus what that total is made of. The LMS
exports (:mod:`autograder.handback`) and the formgrader's pages
(:mod:`autograder.results.formgrader_totals`) read the same function.

Late penalties are not applied (the course sets no due date); a penalty nbgrader computed
anyway is named in the row's notes, never silently subtracted or dropped.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from nbgrader.plugins import ExportPlugin

from autograder.results import table
from autograder.runner.names import ASSIGNMENT

#: nbgrader's columns first (what a script or an LMS import reading its grades.csv expects),
#: then the course's.
COLUMNS = ["assignment", "duedate", "timestamp", "student_id", "last_name", "first_name",
           "email", "raw_score", "late_submission_penalty", "score", "max_score", "track",
           "not_measured", "to_grade_by_hand", "notes"]
REASONS = "grade-reasons.csv"


def write(root: Path, dest: Path) -> tuple[int, Path]:
    """Write ``dest`` (grades.csv) and :data:`REASONS` beside it for the gradebook of
    ``root``; the number of students and the reasons file."""
    from nbgrader.api import Gradebook, MissingEntry

    people: dict[str, Any] = {}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        try:
            assignment = gb.find_assignment(ASSIGNMENT)
        except MissingEntry:  # nothing released or graded yet: the columns alone, as nbgrader
            assignment = None
        duedate = (assignment.duedate if assignment is not None else None) or ""
        for student in gb.students:
            try:
                sub = gb.find_submission(ASSIGNMENT, student.id)
                when, penalty = sub.timestamp or "", sub.late_submission_penalty or 0.0
            except MissingEntry:
                when, penalty = "", 0.0
            people[student.id] = (student.last_name or "", student.first_name or "",
                                  student.email or "", when, penalty)
    notebooks, rows = table.collect(root) if assignment is not None else ([], [])
    with open(dest, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(COLUMNS)
        for row in rows:
            last, first, email, when, penalty = people.get(row.student, ("", "", "", "", 0.0))
            score, maximum = table.total(row, notebooks)
            notes = table.row_notes(row)
            if penalty:
                notes.append(f"late penalty {penalty:g} computed by nbgrader, not applied")
            out.writerow([ASSIGNMENT, duedate, when, row.student, last, first, email,
                          f"{score:g}", "0", f"{score:g}", f"{maximum:g}", row.track,
                          len(row.not_measured), len(row.manual), "; ".join(notes)])
    reasons = dest.with_name(REASONS)
    with open(reasons, "w", newline="", encoding="utf-8") as fh:
        out = csv.writer(fh)
        out.writerow(["student_id", "notebook", "check", "reason"])
        for row in rows:
            for key, why in row.lost.items():
                notebook, _, check = key.partition(":")
                out.writerow([row.student, notebook, check, why])
    return len(rows), reasons


class CourseExport(ExportPlugin):
    """``nbgrader export``'s plugin: :func:`write` for the course directory."""

    def export(self, gradebook: Any) -> None:
        database = getattr(getattr(gradebook.engine, "url", None), "database", None)
        root = Path(database).resolve().parent if database else Path.cwd()
        dest = Path(self.to or "grades.csv")
        count, reasons = write(root, dest if dest.is_absolute() else Path.cwd() / dest)
        self.log.info("Exported the course's totals of %d student(s) to %s (reasons: %s)",
                      count, dest, reasons)
