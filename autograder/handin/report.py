"""What collection did with every handed-in file: ``collection.csv``, the summary, the notes.

One row per file (or per archive that could not be read): the student, the file as it was
handed in, the notebook it became, the outcome and why. The outcomes:

``kept``        already had the release notebook's name;
``renamed``     recognised as a release notebook (by a copy's name or by its cells) and graded
                under that name;
``superseded``  another file of the same student maps to the same notebook and is newer;
``unmatched``   matches no notebook of the assignment: set aside, not graded;
``rejected``    cannot be read (not a notebook, not JSON, too large, an unsafe path in a zip,
                a zip that is not a zip): set aside or left in the archive, not graded;
``ignored``     not a notebook at all (a picture, a PDF): left where it is.

``make collect`` writes the rows of the zip (step ``zip <its file name>``); ``make grade`` adds
those of the folder ``submitted/`` (step ``folder``), replacing the previous folder rows. The
grade table puts every outcome but ``kept`` into the student's notes (:func:`notes_for`).
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from autograder.runner.names import submitted_students
from autograder.viewing.terminal import printable

CSV_NAME = "collection.csv"
#: files left out of grading go here, by student, never silently deleted
SET_ASIDE = "set_aside"
OUTCOMES = ("kept", "renamed", "superseded", "unmatched", "rejected", "ignored")


def limit_bytes() -> int:
    """The largest file collection reads (``COURSE_HANDIN_MAX_MB``, default 50 MB)."""
    value = os.environ.get("COURSE_HANDIN_MAX_MB", "50")
    try:
        mb = float(value)
    except ValueError:
        raise SystemExit(f"COURSE_HANDIN_MAX_MB must be a number of megabytes, got {value!r}"
                         ) from None
    return int(mb * 2**20)


@dataclass
class Entry:
    """One handed-in file and what became of it."""

    step: str
    student: str
    handed_in: str
    notebook: str
    outcome: str
    detail: str = ""

    def note(self) -> str:
        """The grade table's note for this file (empty for ``kept``)."""
        what = f"'{Path(self.handed_in).name}'"  # the file's name; the CSV has its path
        if self.outcome == "renamed":
            return f"{what} graded as {self.notebook}" + (f" ({self.detail})"
                                                           if self.detail else "")
        if self.outcome == "superseded":
            return f"{what} not graded: {self.detail}"
        if self.outcome in ("unmatched", "rejected"):
            return f"{what} not graded: {self.detail}"
        if self.outcome == "ignored":
            return f"{what} ignored: {self.detail}"
        return f"{what}: {self.detail}" if self.detail else ""


#: A spreadsheet reads a cell that starts with one of these as a formula (``=HYPERLINK(…)``):
#: a handed-in file's name is the student's, so such a cell is written quoted (OWASP's advice).
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def to_cell(value: str) -> str:
    """A CSV cell a spreadsheet shows as text, never runs as a formula."""
    return QUOTE + value if value.startswith((*FORMULA_START, QUOTE)) else value


def _from_cell(value: str) -> str:
    return value[1:] if value.startswith(QUOTE) else value


def read(root: Path) -> list[Entry]:
    """The rows of ``collection.csv`` (none if there is no such file)."""
    path = root / CSV_NAME
    if not path.exists():
        return []
    with open(path, newline="") as fh:
        return [Entry(**{f.name: _from_cell(row.get(f.name) or "") for f in fields(Entry)})
                for row in csv.DictReader(fh)]


def write(root: Path, entries: list[Entry], step: str) -> Path:
    """Replace the rows of ``step`` in ``collection.csv`` with ``entries``; return its path."""
    kept = [e for e in read(root) if e.step != step]
    rows = kept + entries
    path = root / CSV_NAME
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=[f.name for f in fields(Entry)])
        writer.writeheader()
        for entry in sorted(rows, key=lambda e: (e.step == "folder", e.step, e.student,
                                                 e.handed_in)):
            writer.writerow({k: to_cell(str(v)) for k, v in asdict(entry).items()})
    return path


def notes_for(root: Path, student: str) -> list[str]:
    """The grade table's notes about how ``student``'s files were collected."""
    seen: list[str] = []
    for entry in read(root):
        if entry.student == student and entry.outcome != "kept":
            note = entry.note()
            if note and note not in seen:
                seen.append(note)
    return seen


def summary(entries: list[Entry], submitted: Path, title: str) -> str:
    """The collection summary an instructor reads before grading."""
    students = submitted_students(submitted.parent)
    counts = {s: len(list((submitted / s).glob("*/*.ipynb"))) for s in students}
    by = Counter(e.outcome for e in entries)
    outcomes = ", ".join(f"{by[o]} {o}" for o in OUTCOMES if by[o])
    lines = [f"{title}: {len(students)} student(s) in {submitted.name}/"
             + (f", {outcomes}" if outcomes else "")]
    for student in students:
        lines.append(f"  {student:<28} {counts[student]} notebook(s)")
    for entry in entries:
        if entry.outcome == "kept":
            continue
        who = entry.student or "(no student)"
        note = entry.note() or entry.detail
        lines.append(f"  {entry.outcome.upper():<10} {who}: {note}")
    return printable("\n".join(lines))
