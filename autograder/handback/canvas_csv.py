"""Canvas's *Gradebook → Import* file, from the grade table and the gradebook Canvas exported.

The format is the one Canvas's ``GradebookImporter`` (``app/models/gradebook_importer.rb``)
reads: a header ``Student,ID,SIS User ID,SIS Login ID,Section,<Title> (<assignment id>)``, an
optional second row whose first cell is ``Points Possible``, then a row per student. A column
whose title ends in ``(<id>)`` is that assignment; one without an id is a new assignment Canvas
creates (its points from the ``Points Possible`` row). A blank score changes nothing.

Canvas's own export (Gradebook → Export) has more: ``Integration ID`` and ``Root Account``
columns, a ``Points Possible`` row with ``(read only)`` under the totals, sometimes a
``Manual Posting`` row, every assignment, the totals. :func:`read_export` reads all of it, with
the importer's own rules for those rows (a first cell that contains ``Points Possible``; a row
of nothing but blanks, ``Muted`` and ``Manual Posting``). The importer also takes a number in
the ``Points Possible`` row as the assignment's new points possible: the row repeats Canvas's
own points unless ``OUT_OF=`` asks for others (and the export then says it changes them).

Each graded student is matched to a row of the export the way Canvas matches an import's rows
to its students: by Canvas user id (``ID``: the id ``make collect`` read from the zip's file
names, the gradebook's ``lms_user_id`` or ``MAPPING=``'s), then by SIS id (``SIS User ID``,
then ``SIS Login ID``, against the course id and the mapped id), then by name (``Student`` as
the full name, the sortable ``Last, First`` name, or the name Canvas's zip gives: the sortable
name, lowercased, without spaces or punctuation), a name only when it is unique. A student of
the export never matched is listed as "in Canvas, never handed in"; a graded student matched
to no row as "graded, not in the Canvas export"; neither is dropped silently.
"""

from __future__ import annotations

import contextlib
import csv
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from autograder.handback.roster import READY, Student, number, points_possible
from autograder.handin import report

HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_ROW = "Points Possible"
DEFAULT_TITLE = "Week 4: Roofline & Tiling"
_ASSIGNMENT = re.compile(r"^(?P<title>.*\S)\s*\((?P<id>\d+)\)\s*$")
_POSTING = re.compile(r"^\s*(Muted|Manual Posting.*)?\s*$", re.IGNORECASE)
_NOT_ASSIGNMENTS = {"student", "id", "sis user id", "sis login id", "integration id",
                    "root account", "section"}


@dataclass
class CanvasExport:
    """What a Canvas gradebook export holds that the import needs."""

    rows: list[dict[str, str]]
    #: (title, assignment id) of every assignment column, in the export's order
    assignments: list[tuple[str, str]]
    #: assignment id -> points possible, from the ``Points Possible`` row
    points: dict[str, float] = field(default_factory=dict)


def read_export(path: Path) -> CanvasExport:
    """Read a gradebook exported from Canvas (see the module's docstring)."""
    if not path.is_file():
        raise SystemExit(f"no such file: {path} (GRADEBOOK= is the CSV Canvas's Gradebook → "
                         "Export gave)")
    with open(path, newline="", encoding="utf-8-sig") as fh:
        lines = list(csv.reader(fh))
    if not lines or [c.strip() for c in lines[0][:2]] != ["Student", "ID"]:
        raise SystemExit(f"{path} is not a Canvas gradebook export: its header does not start "
                         "with Student,ID")
    header = [c.strip() for c in lines[0]]
    assignments = []
    for column in header:
        match = _ASSIGNMENT.match(column)
        if match and column.lower() not in _NOT_ASSIGNMENTS:
            assignments.append((match["title"], match["id"]))
    rows, points = [], {}
    for line in lines[1:]:
        cells = dict(zip(header, (c.strip() for c in line), strict=False))
        first = cells.get("Student", "")
        if POINTS_ROW in first:
            for title, aid in assignments:
                with contextlib.suppress(ValueError):
                    points[aid] = float(cells.get(f"{title} ({aid})", ""))
            continue
        if all(_POSTING.match(c) for c in line):  # Canvas's "Manual Posting" / "Muted" rows
            continue
        rows.append(cells)
    return CanvasExport(rows, assignments, points)


def pick_assignment(export: CanvasExport | None, wanted: str) -> tuple[str, str]:
    """The (title, id) of the assignment column ``wanted`` names (its id or its title), or a
    new column (``wanted`` or the default title, no id) when it names none given."""
    if not wanted or export is None:
        if wanted.isdigit():
            raise SystemExit(f"assignment {wanted} is an id: give GRADEBOOK= (Canvas's export) "
                             "so its title is known, or give its title")
        return wanted or DEFAULT_TITLE, ""
    for title, aid in export.assignments:
        if wanted == aid or wanted.casefold() == title.casefold():
            return title, aid
    if wanted.isdigit():
        names = ", ".join(f"{t} ({a})" for t, a in export.assignments) or "none"
        raise SystemExit(f"the Canvas export has no assignment {wanted}; its assignments: "
                         f"{names}")
    return wanted, ""


def _squash(name: str) -> str:
    return re.sub(r"\W", "", name).casefold()


def _name_keys(row: dict[str, str]) -> set[str]:
    """The names a Canvas row's student goes by (its ``Student`` is the sortable name)."""
    shown = row.get("Student", "")
    keys = {shown.casefold(), _squash(shown)}
    if "," in shown:
        last, first = (p.strip() for p in shown.split(",", 1))
        keys.add(f"{first} {last}".casefold())
    return {k for k in keys if k}


def match(students: list[Student], export: CanvasExport
          ) -> tuple[dict[str, dict[str, str]], list[dict[str, str]]]:
    """Student id -> their row of the export, and the export's rows matched to no student."""
    free = list(export.rows)
    found: dict[str, dict[str, str]] = {}

    def claim(student: Student, rule: Callable[[Student, dict[str, str]], bool]) -> None:
        hits = [r for r in free if rule(student, r)]
        if len(hits) == 1:
            found[student.student] = hits[0]
            free.remove(hits[0])

    rules: list[Callable[[Student, dict[str, str]], bool]] = [
        lambda s, r: bool(s.lms_id("canvas")) and r.get("ID") == s.lms_id("canvas"),
        lambda s, r: bool(r.get("SIS User ID")) and r["SIS User ID"] in (s.student,
                                                                          s.mapped_id),
        lambda s, r: bool(r.get("SIS Login ID")) and r["SIS Login ID"] in (s.student,
                                                                            s.mapped_id),
        lambda s, r: bool(({s.name.casefold(), _squash(s.name),
                            s.lms_name.get("canvas", "").casefold()} - {""}) & _name_keys(r)),
    ]
    for rule in rules:  # every student by the first rule, then the next: as Canvas does
        for student in students:
            if student.student not in found:
                claim(student, rule)
    return found, free


def write_import(path: Path, students: list[Student], export: CanvasExport | None,
                 title: str, assignment_id: str, out_of: float | None
                 ) -> tuple[list[Student], list[str], list[dict[str, str]]]:
    """Write the import file; return the students written, a line for each graded student not
    written, and the export's students never matched (never handed in)."""
    ready = [s for s in students if s.state == READY]
    rows_of, lms_only = match(students, export) if export else ({}, [])
    column = f"{title} ({assignment_id})" if assignment_id else title
    points = points_possible(students, out_of)
    written, left_out = [], []
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([*HEADER, column])
        writer.writerow([POINTS_ROW, "", "", "", "", number(points)])
        for who in ready:
            if export is not None:
                row = rows_of.get(who.student)
                if row is None:
                    left_out.append(f"{who.label()}: graded, but no row of the Canvas export "
                                    "is theirs (no Canvas ID, SIS id or name matches)")
                    continue
                cells = [row.get(h, "") for h in HEADER]
            elif who.lms_id("canvas").isdigit():
                cells = [report.to_cell(who.name), who.lms_id("canvas"), "", "", ""]
            else:  # Canvas would match them by name alone, or not at all
                left_out.append(f"{who.label()}: no Canvas user id (collect from a Canvas "
                                "zip, or give MAPPING= or GRADEBOOK=)")
                continue
            writer.writerow([*cells, number(who.scaled(out_of))])
            written.append(who)
    return written, left_out, lms_only
