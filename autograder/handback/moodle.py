"""Moodle's grading worksheet and feedback zip, keyed by the participant ids of Moodle's zip.

**The worksheet** is what the assignment's *Upload grading worksheet* reads
(``mod/assign/feedback/offline``): a CSV whose header names ``Identifier``, ``Grade``,
``Last modified (grade)`` and, for the comments, ``Feedback comments`` (the comments plugin's
field); Moodle finds each row's student from ``Identifier`` = ``Participant <id>`` (the same
participant id as in the download's ``<Full Name>_<id>_assignsubmission_file_`` names),
skips a blank grade, a grade over the assignment's maximum, and a row whose
``Last modified (grade)`` is older than the grade Moodle already has (unless the instructor
ticks "allow updating records that have been modified more recently in Moodle"). So the time
written is the export's, in ISO 8601 with its offset (PHP's ``strtotime`` reads it in any
server's time zone), and the grade is on the assignment's scale: set its *Maximum grade* to the
points printed, or give ``OUT_OF=``.

**The feedback zip** is what *Upload multiple feedback files in a zip* reads
(``mod/assign/feedback/file/importziplib.php``): Moodle splits each folder name at ``_`` into
full name, participant id, plugin type and plugin name, so the student's folder is
``<Full Name>_<participant id>_assignsubmission_file_`` (the download's own name) with no
``_`` in the full name; a file name starting with ``.`` or ``~`` would be skipped.
"""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

from autograder.handback import package
from autograder.handback.roster import READY, Student, comment, number, points_possible
from autograder.handin import report

IDENTIFIER = "Identifier"
GRADE = "Grade"
MODIFIED = "Last modified (grade)"
COMMENTS = "Feedback comments"
PARTICIPANT = "Participant "
COLUMNS = [IDENTIFIER, "Full name", GRADE, "Maximum Grade", MODIFIED, COMMENTS]


def read_worksheet(path: Path) -> dict[str, str]:
    """A worksheet downloaded from Moodle: participant id -> full name."""
    if not path.is_file():
        raise SystemExit(f"no such file: {path} (WORKSHEET= is Moodle's grading worksheet)")
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or IDENTIFIER not in rows[0]:
        raise SystemExit(f"{path} is not a Moodle grading worksheet: no {IDENTIFIER} column")
    return {r[IDENTIFIER].removeprefix(PARTICIPANT).strip(): (r.get("Full name") or "").strip()
            for r in rows if r[IDENTIFIER].startswith(PARTICIPANT)}


def write(out: Path, students: list[Student], out_of: float | None,
          participants: dict[str, str] | None = None, now: dt.datetime | None = None
          ) -> tuple[Path, Path, list[Student], list[str], list[str]]:
    """Write the worksheet and the feedback zip into ``out``; return their paths, the students
    written, a line for each graded student left out, and Moodle's participants who never
    handed in (from ``participants``, a downloaded worksheet's)."""
    stamp = (now or dt.datetime.now(dt.UTC)).isoformat(timespec="seconds")
    ready = [s for s in students if s.state == READY]
    points = points_possible(students, out_of)
    written, left_out, members = [], [], []
    worksheet, archive = out / "moodle-worksheet.csv", out / "moodle-feedback.zip"
    out.mkdir(parents=True, exist_ok=True)
    ours = {s.lms_id("moodle") for s in students}
    with open(worksheet, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(COLUMNS)
        for who in ready:
            pid = who.lms_id("moodle")
            if not pid.isdigit():
                left_out.append(f"{who.label()}: no Moodle participant id (collect from "
                                "Moodle's zip, or give MAPPING=)")
                continue
            if participants is not None and pid not in participants:
                left_out.append(f"{who.label()}: participant {pid} is not in the Moodle "
                                "worksheet given")
                continue
            full = who.lms_name.get("moodle") or who.name
            writer.writerow([f"{PARTICIPANT}{pid}", report.to_cell(full),
                             number(who.scaled(out_of)), number(points), stamp,
                             comment(who, points, out_of)])
            folder = f"{package.safe_part(full, no_underscore=True)}_{pid}_assignsubmission_file_"
            members += [(f"{folder}/{package.safe_part(html.stem, fallback='notebook')}"
                         "-feedback.html", html) for html in who.feedback]
            written.append(who)
    package.write_zip(archive, members)
    never = [f"{name or '(no name)'} (Participant {pid})"
             for pid, name in sorted((participants or {}).items()) if pid not in ours]
    return worksheet, archive, written, left_out, never
