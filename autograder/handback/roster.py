"""Who is handed back what: each student of the gradebook with their LMS ids, total and state.

The ids come from ``make collect``'s own record: every row of ``collection.csv`` keeps the
path the file had in the LMS's zip, and that path holds the LMS's id (Canvas's user id and the
attachment id of the upload, Moodle's participant id and the student's full name), whatever
``MAPPING=`` turned the student's folder into. A student collected some other way (nbgrader's
exchange, a folder) gets their id from the gradebook's ``lms_user_id`` or from a ``MAPPING=``
file (``lms_id,student_id``, as ``make collect`` reads it).

The total is the grade table's (:func:`autograder.results.table.total`: one track, hand grades
in, not-measured GPU checks out of the maximum). A student is :data:`READY` unless their grade
is not final: a written answer still waits for hand grading (:data:`WAITING`), a notebook's
grading failed (:data:`FAILED`), they handed nothing in (:data:`ABSENT`), or a zip named them
and they are not in the gradebook yet (:data:`UNGRADED`: ``make grade`` has not run since).
Only ready students get a grade and feedback sent; the others are listed with the reason, never
dropped.
Asked to (``include_ungraded``, ``include_failed``), waiting and failed students are sent
what was graded so far.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from autograder.handin import lms
from autograder.handin import report as handin_report
from autograder.results import table
from autograder.runner.names import ASSIGNMENT
from autograder.viewing.terminal import as_typed
from course.runtime.i18n import DEFAULT, in_language

READY = "ready"
WAITING = "waiting for hand grading"
FAILED = "grading failed"
ABSENT = "not handed in"
UNGRADED = "collected, not graded"


@dataclass
class Student:
    """One student of the gradebook, as the way back needs them."""

    student: str
    name: str = ""
    #: LMS -> the student's id there, as collected from that LMS's zip
    collected: dict[str, str] = field(default_factory=dict)
    #: the name in the LMS's file names (Canvas: "doejane"; Moodle: "Jane Doe")
    lms_name: dict[str, str] = field(default_factory=dict)
    #: notebook -> the Canvas attachment id of the upload that was graded
    attachments: dict[str, str] = field(default_factory=dict)
    lms_user_id: str = ""
    mapped_id: str = ""
    score: float = 0.0
    maximum: float = 0.0
    state: str = READY
    why: str = ""
    language: str = ""
    not_measured: int = 0
    feedback: list[Path] = field(default_factory=list)

    def lms_id(self, which: str) -> str:
        """The student's id in LMS ``which`` (canvas, moodle): collected from its zip; for a
        student collected from no LMS's zip, the gradebook's ``lms_user_id``, else the mapping
        file's; "" when none is known (a student collected from the other LMS has none)."""
        if self.collected:
            return self.collected.get(which, "")
        return self.lms_user_id or self.mapped_id

    def scaled(self, out_of: float | None) -> float:
        """The total, on ``out_of`` points if given (else on the course's own points)."""
        if out_of is None or not self.maximum:
            return self.score
        return self.score * out_of / self.maximum

    def label(self) -> str:
        """How the summary names the student: the course id and, if known, the name."""
        return f"{self.student} ({self.name})" if self.name and self.name != self.student \
            else self.student


def number(value: float) -> str:
    """A score as an LMS reads it: at most two decimals, no trailing zeros (``10.5``, ``11``)."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def comment(who: Student, points: float, out_of: float | None) -> str:
    """The short comment each student reads beside their grade, in their language."""
    text = in_language(who.language or DEFAULT,
                       "Week 4: {score} of {maximum} points. Your feedback for each notebook "
                       "is in the attached file(s).")
    return text.format(score=number(who.scaled(out_of)), maximum=number(points))


def points_possible(students: list[Student], out_of: float | None) -> float:
    """The points the LMS's column is on: ``out_of`` if given, else the ready students'
    maximum (the course's own points)."""
    if out_of is not None:
        return out_of
    return max((s.maximum for s in students if s.state == READY), default=0.0)


def canvas_ready(students: list[Student]) -> tuple[list[tuple[Student, str]], list[str]]:
    """(student, their Canvas user id) for each ready student who has one, and a line for each
    ready student who has none (the Canvas zip and the upload both need it)."""
    ready, left_out = [], []
    for who in students:
        if who.state != READY:
            continue
        user = who.lms_id("canvas")
        if user.isdigit():
            ready.append((who, user))
        else:
            left_out.append(f"{who.label()}: no Canvas user id (collect from a Canvas zip, or "
                            "give MAPPING=)")
    return ready, left_out


def _from_collection(root: Path) -> dict[str, Student]:
    found: dict[str, Student] = {}
    for entry in handin_report.read(root):
        if not entry.student or not entry.step.startswith("zip "):
            continue
        for which in lms.LAYOUTS:
            info = lms.parse(entry.handed_in, lms.patterns(which))
            if info is None:
                continue
            who = found.setdefault(entry.student, Student(entry.student))
            who.collected.setdefault(which, info["student_id"])
            who.lms_name.setdefault(which, info.get("name", ""))
            if which == "canvas" and entry.outcome in ("kept", "renamed") and entry.notebook:
                who.attachments[entry.notebook] = info.get("submission_id", "")
            break
    return found


def reverse_mapping(path: Path | None) -> dict[str, str]:
    """A ``MAPPING=`` file (``lms_id,student_id``) read backwards: student id -> LMS id."""
    if path is None:
        return {}
    if not path.is_file():
        raise SystemExit(f"no such mapping file: {path}")
    try:
        return {student: lms_id for lms_id, student in lms.read_mapping(str(path)).items()}
    except ValueError as exc:
        raise SystemExit(str(exc)) from None


def _state(row: table.Row, include_ungraded: bool, include_failed: bool) -> tuple[str, str]:
    if "no submission" in row.notes or (row.missing and set(row.missing) >= set(row.scores)):
        return ABSENT, "no notebook handed in"
    broken = sorted(set(row.failed))
    if (broken or any(n.startswith("GRADING FAILED") for n in row.notes)) \
            and not include_failed:
        what = "grading failed for " + ", ".join(broken) if broken else "grading failed"
        return FAILED, (f"{what}: re-grade after fixing, then export again (a kernel the "
                        "student's own code kills: INCLUDE_FAILED=1 sends what was graded)")
    if row.manual and not include_ungraded:
        return WAITING, ("to grade by hand in the formgrader: " + ", ".join(row.manual)
                         + "; then `make table` and export again")
    return READY, ""


def build(root: Path, mapping: Path | None = None, include_ungraded: bool = False,
          include_failed: bool = False) -> list[Student]:
    """Every student of ``root``'s gradebook, with ids, total, state and feedback files."""
    from nbgrader.api import Gradebook

    if not (root / "gradebook.db").exists():
        raise SystemExit(f"nothing to hand back: no gradebook.db in {root}; grade first "
                         f"({as_typed('make grade', 'python -m autograder grade')})")
    collected = _from_collection(root)
    mapped = reverse_mapping(mapping)
    notebooks, rows = table.collect(root)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        people = {s.id: s for s in gb.students}
        students = []
        for row in rows:
            who = collected.get(row.student) or Student(row.student)
            person = people.get(row.student)
            if person is not None:
                full = " ".join(x for x in (person.first_name, person.last_name) if x)
                who.name = full or ""
                who.lms_user_id = str(person.lms_user_id or "")
            who.name = who.name or who.lms_name.get("moodle", "") or row.student
            who.mapped_id = mapped.get(row.student, "")
            who.score, who.maximum = table.total(row, notebooks)
            who.state, who.why = _state(row, include_ungraded, include_failed)
            who.language = row.language
            who.not_measured = len(row.not_measured)
            folder = root / "feedback" / row.student / ASSIGNMENT
            who.feedback = [folder / f"{nb}.html" for nb in notebooks
                            if nb not in row.off_track and (folder / f"{nb}.html").is_file()
                            and not (folder / f"{nb}.html").is_symlink()]
            students.append(who)
    graded = {s.student for s in students}
    for student in sorted(set(collected) - graded):  # named by a zip, never graded
        who = collected[student]
        who.name = who.lms_name.get("moodle", "") or student
        who.state, who.why = UNGRADED, "in the LMS's zip, not in the gradebook: run `make grade`"
        students.append(who)
    return students
