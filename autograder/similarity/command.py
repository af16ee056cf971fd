"""``python -m autograder similarity``: the report, with progress on the terminal.

Reads ``submitted/`` (every route in has put the notebooks there: ``make collect``), indexes
each notebook's answers of every student and of the solution, scores the pairs and writes
``similarity.csv`` and ``similarity.html`` in the course directory, beside ``grades.csv``.
It reads no grade and writes none.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from autograder.similarity import answers, report_csv, report_html, scoring
from autograder.similarity.index import Document, NotebookIndex
from autograder.similarity.summary import CSV_NAME, HTML_NAME
from autograder.viewing.terminal import printable

#: the report's name for a student whose folder is called ``solution``
STUDENT_CALLED_SOLUTION = "solution (a student's folder)"


class NothingToCompare(Exception):
    """No submitted folder, or fewer than one student with an answer: a sentence says which."""


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def build_indexes(root: Path, submitted: Path) -> tuple[list[NotebookIndex], set[str]]:
    """One index per notebook with answers: every student's and the solution's documents."""
    notebooks = answers.released_notebooks(root)
    indexes = {name: NotebookIndex(name, answers.given(root, name))
               for name in notebooks}
    students: set[str] = set()
    handed_in = answers.handed_in(root, submitted, notebooks)
    for count, (student, name, nb) in enumerate(handed_in, start=1):
        index = indexes[name]
        mine = answers.student_answers(nb, index.given)
        if student == answers.SOLUTION:  # a folder that would pass for the instructor's
            student = STUDENT_CALLED_SOLUTION
        if mine:
            index.add(student, mine)
            students.add(student)
        if count % 200 == 0:
            _say(f"similarity: read {count} notebooks of {len(students)} students")
    for name, index in indexes.items():
        if index.documents:
            index.add(answers.SOLUTION, answers.solution(root, name))
    return [i for i in indexes.values() if i.documents], students


def run(root: Path, submitted: Path | None = None) -> tuple[list[scoring.Pair], int]:
    """Write the report of the class in ``submitted`` (default ``root/submitted``); returns
    the pairs and how many students were compared."""
    submitted = submitted or root / "submitted"
    if not submitted.is_dir():
        raise NothingToCompare(f"no {submitted} folder: put the class's notebooks there "
                               "first (make collect)")
    start = time.perf_counter()
    _say(f"similarity: reading {submitted}")
    indexes, students = build_indexes(root, submitted)
    if not students:
        raise NothingToCompare(f"no answer of any student in {submitted}: nothing to compare")
    _say(f"similarity: {len(students)} students, {len(indexes)} notebooks with answer cells "
         f"indexed ({time.perf_counter() - start:.1f} s); scoring the pairs")
    pairs = scoring.pairs(indexes)
    documents: dict[str, dict[str, Document]] = {i.notebook: i.documents for i in indexes}
    report_csv.write(root / CSV_NAME, pairs, documents)
    report_html.write(root / HTML_NAME, pairs, documents, len(students))
    _say(f"similarity: done in {time.perf_counter() - start:.1f} s")
    return pairs, len(students)


def main(root: Path, submitted: Path | None = None) -> int:
    """The command: the report written and a summary printed; 1 when there is nothing to
    compare (no stale report is left to be mistaken for this class's)."""
    for name in (CSV_NAME, HTML_NAME):
        (root / name).unlink(missing_ok=True)
    try:
        pairs, students = run(root, submitted)
    except (NothingToCompare, FileNotFoundError) as exc:  # no release: Release.load says so
        print(f"similarity: {exc}", file=sys.stderr)
        return 1
    flagged = [p for p in pairs if p.flagged]
    print(f"{students} students compared with each other and with the solution; "
          f"{len(flagged)} pair(s) flagged (never a grade).")
    for pair in flagged:
        a, b = report_csv.ordered(pair)
        print(printable(f"  {a} ~ {b}: " + "; ".join(pair.reasons)))
    print(f"report: {root / HTML_NAME}\ntable:  {root / CSV_NAME}")
    return 0
