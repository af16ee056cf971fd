"""The grade table: each student's scores from the gradebook, with what the trusted re-check
recorded beside them (reasons, notes, the track a student did), and the table as text.

Below the engines (whose progress line reads one student's row) and the harness (which prints
the whole table); above nothing but the gradebook, the re-check's summaries and the hand-in
notes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.grading import normalise
from autograder.grading.config import cell_timeout
from autograder.handin import failure
from autograder.handin import report as handin_report
from autograder.runner.names import ASSIGNMENT
from autograder.runner.nbgrader_cli import GRADING_FAILED
from autograder.sandbox import bwrap as sandbox
from autograder.sandbox import limits as limits_mod
from autograder.similarity import summary as similarity_report
from autograder.viewing import notebook as viewing
from autograder.viewing.terminal import printable
from course.runtime.i18n import DEFAULT, in_language, text_width

#: Notebooks 2 and 3 exist in two tracks; a student does one. The other track's notebooks are
#: shown but never counted (see :func:`choose_track`).
TRACKS = {"Numba": ("02_naive_gemm", "03_tiled_gemm"),
          "CUDA C": ("02c_naive_gemm_cuda", "03c_tiled_gemm_cuda")}


@dataclass
class Row:
    student: str
    scores: dict[str, tuple[float, float]] = field(default_factory=dict)
    not_measured: list[str] = field(default_factory=list)
    manual: list[str] = field(default_factory=list)
    hand_graded: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: "notebook:grade_id": why the grader recorded a failure (the first line of its error).
    lost: dict[str, str] = field(default_factory=dict)
    #: "notebook:grade_id": the student's kernel showed one verdict, the grader recorded another.
    differs: dict[str, str] = field(default_factory=dict)
    track: str = ""
    off_track: list[str] = field(default_factory=list)
    #: the language of the student's notebooks (their release's), as the re-check recorded it
    language: str = ""


def choose_track(row: Row, notebooks: list[str]) -> None:
    """Decide which track a student did, and leave the other track's notebooks out.

    The track whose notebooks the student handed in; if both or neither, the one that scores
    more (points, then fraction). An untouched notebook of the other track then never lowers
    the student's total, and a student who tried both keeps the better.
    """
    present = {name: [nb for nb in nbs if nb in notebooks] for name, nbs in TRACKS.items()}
    present = {name: nbs for name, nbs in present.items() if nbs}
    if len(present) < 2:
        return
    handed = [name for name, nbs in present.items()
              if any(nb in row.scores and nb not in row.missing for nb in nbs)]

    def points(name: str) -> tuple[float, float]:
        s = sum(row.scores.get(nb, (0.0, 0.0))[0] for nb in present[name])
        m = sum(row.scores.get(nb, (0.0, 0.0))[1] for nb in present[name])
        return s, s / m if m else 0.0

    candidates = handed if len(handed) == 1 else list(present)
    row.track = max(candidates, key=points)
    row.off_track = [nb for name, nbs in present.items() if name != row.track for nb in nbs]


def _read_summary(root: Path, student: str, notebook: str) -> dict:
    path = root / "autograded" / student / ASSIGNMENT / f"{notebook}.trusted.json"
    return json.loads(path.read_text()) if path.exists() else {}


#: A grade cell whose id ends so is a GPU timing (``tiled_gemm_speedup``,
#: ``tiled_gemm_cuda_speedup``): graded without a GPU it is not measured for anyone, whoever
#: has been graded yet; graded on one, the table names the GPU and the class report plots it.
GPU_ONLY_SUFFIX = "_speedup"


def is_gpu_timing(grade_id: str) -> bool:
    """Whether the test cell ``grade_id`` is a speedup timing, the checks that need a GPU."""
    return grade_id.endswith(GPU_ONLY_SUFFIX)


def _summary_notes(row: Row, notebook: str, summary: dict) -> None:
    """Turn what the trusted re-check recorded into the row's notes and reasons (the notes in
    the notebook's language)."""
    language = summary.get("language") or DEFAULT
    restored = summary.get("restored") or {}
    if restored.get("metadata_restored"):
        row.notes.append(in_language(language, "{notebook}: nbgrader metadata restored from the "
                                               "release for {count} cell(s)").format(
            notebook=notebook, count=len(restored["metadata_restored"])))
    if restored.get("cells_added"):
        row.notes.append(in_language(language, "{notebook}: test cell(s) added back: {cells}"
                                     ).format(notebook=notebook,
                                              cells=", ".join(restored["cells_added"])))
    row.notes += normalise.table_notes(notebook, restored, language)  # copies, order
    timed = [gid for gid, cell in summary.get("cells", {}).items()
             if is_gpu_timing(gid) and cell.get("status") in ("pass", "fail")]
    if timed and summary.get("gpu"):  # which GPU measured it, where a slot was bound to one
        row.notes.append(in_language(language, "{notebook}: speedup timed on {gpu}").format(
            notebook=notebook, gpu=summary["gpu"]))
    for gid, cell in summary.get("cells", {}).items():
        key = f"{notebook}:{gid}"
        if cell.get("status") == "fail":
            # whole (the table shortens it at a word; grade-reasons.csv keeps it), bounded
            row.lost[key] = " ".join(f"{cell.get('ename')}: {cell.get('evalue')}".split())[:4000]
        shown = (cell.get("notebook") or {}).get("status")
        if shown in ("pass", "fail") and cell.get("status") in ("pass", "fail") \
                and shown != cell["status"]:
            mark = {"pass": "✓", "fail": "✗"}
            row.differs[key] = (f"the notebook showed {mark[shown]}, the grader recorded "
                                f"{mark[cell['status']]}")


#: At most this many removed things are named for one cell (a hostile cell can hold many).
VIEWING_ITEMS = 12


def _viewing_notes(root: Path, student: str, notebook: str, summary: dict) -> list[str]:
    """What was removed from the autograded notebook so that it is safe to look at."""
    removed = viewing.read_removed(root / "autograded" / student / ASSIGNMENT, notebook)
    if not removed:
        return []
    places = []
    for where, whats in removed.items():
        more = f" +{len(whats) - VIEWING_ITEMS}" if len(whats) > VIEWING_ITEMS else ""
        places.append(f"{where} ({', '.join(whats[:VIEWING_ITEMS])}{more})")
    shown = "; ".join(places)
    language = summary.get("language") or DEFAULT
    return [in_language(language, "{notebook}: removed from view (it could run script where "
                                  "the notebook is shown): {items}").format(
        notebook=notebook, items=shown)]


#: What grading recorded about its own limits and GPU (the footer states them as graded, not
#: as now; :func:`_gpu_only_unmeasured` reads whether it had a GPU).
LIMITS_FILE = "grading-limits.json"


def _gpu_only_unmeasured(root: Path, gb: Any) -> set[str]:
    """The GPU timings of the assignment, when the last grading recorded that it had no GPU
    (so that a student's maximum never depends on who was graded before them)."""
    record = root / "autograded" / LIMITS_FILE
    if not record.is_file() or json.loads(record.read_text()).get("gpu", True):
        return set()
    return {f"{nb.name}:{cell.name}" for nb in gb.find_assignment(ASSIGNMENT).notebooks
            for cell in nb.grade_cells if is_gpu_timing(cell.name)}


def _submissions(gb: Any, assignment_id: str, only: list[str] | None) -> dict[str, Any]:
    """Every student's submission of the assignment (``only`` theirs, if given), by student
    id, with its notebooks, their grades, each grade's cell and maximum loaded in a few
    queries.

    Read one attribute at a time, as nbgrader's objects load them, a class of 100 full
    submissions took 7,433 queries (3.0-3.5 CPU-s on 2 cores; 37 queries and 0.5-0.8 CPU-s
    this way) — and the progress line reads the whole class after every student
    (:func:`autograder.engines.local.student_result`).
    """
    from nbgrader.api import Grade, SubmittedAssignment, SubmittedNotebook
    from sqlalchemy.orm import joinedload, selectinload, undefer

    query = gb.db.query(SubmittedAssignment).filter(
        SubmittedAssignment.assignment_id == assignment_id)
    if only is not None:
        query = query.filter(SubmittedAssignment.student_id.in_(only))
    query = query.options(selectinload(SubmittedAssignment.notebooks).options(
                 joinedload(SubmittedNotebook.notebook),
                 selectinload(SubmittedNotebook.grades).options(
                     joinedload(Grade.cell), undefer(Grade.max_score))))
    return {sub.student_id: sub for sub in query}


def collect(root: Path, only: list[str] | None = None) -> tuple[list[str], list[Row]]:
    """Scores from the gradebook, plus what the trusted re-check recorded beside them.

    ``only``: just these students (e.g. the one that just finished, for its progress line).
    """
    from nbgrader.api import Gradebook

    rows: list[Row] = []
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        assignment = gb.find_assignment(ASSIGNMENT)
        notebooks = [nb.name for nb in assignment.notebooks]
        submissions = _submissions(gb, assignment.id, only)
        for student in sorted(s.id for s in gb.students):
            if only is not None and student not in only:
                continue
            row = Row(student)
            failed = root / "autograded" / student / GRADING_FAILED
            if failed.exists():
                row.notes.append("GRADING FAILED (re-grade after fixing): "
                                 + failure.explain(failed.read_text()))
            if not (root / "submitted" / student).is_dir():
                row.notes.append("from an earlier grading: not in submitted/ now")
            row.notes += handin_report.notes_for(root, student)
            sub = submissions.get(student)
            if sub is None:  # no submission: a row of zeros, said so
                row.notes.append("no submission")
                row.missing = list(notebooks)  # every notebook "—", out of its full points
                row.scores = {nb.name: (0.0, nb.max_score) for nb in assignment.notebooks}
                rows.append(row)
                continue
            for nb in sub.notebooks:
                score, maximum = 0.0, 0.0
                summary = _read_summary(root, student, nb.name)
                row.language = row.language or summary.get("language") or ""
                _summary_notes(row, nb.name, summary)
                unmeasured = {g for g, v in summary.get("cells", {}).items()
                              if v["status"] == "not_measured"}
                for grade in nb.grades:
                    if grade.needs_manual_grade:
                        row.manual.append(f"{nb.name}:{grade.name}")
                    elif grade.manual_score is not None:
                        row.hand_graded.append(
                            f"{nb.name}:{grade.name} {grade.score:g}/{grade.max_score:g}")
                    if grade.name in unmeasured:
                        row.not_measured.append(f"{nb.name}:{grade.name}")
                        continue
                    score += grade.score or 0.0
                    maximum += grade.max_score
                if not (root / "submitted" / student / ASSIGNMENT / f"{nb.name}.ipynb").exists():
                    row.missing.append(nb.name)
                elif not (root / "autograded" / student / ASSIGNMENT
                          / f"{nb.name}.ipynb").exists():
                    row.failed.append(nb.name)
                    row.notes.append(f"{nb.name}: not graded (grading failed, see .nbgrader.log)")
                if summary.get("dead_kernel"):
                    row.failed.append(nb.name)
                    row.notes.append(f"{nb.name}: {summary['dead_kernel']}")
                row.notes += [f"{nb.name}: {note}" for note in summary.get("notes", [])]
                row.notes += _viewing_notes(root, student, nb.name, summary)
                row.scores[nb.name] = (score, maximum)
            rows.append(row)
    # A GPU-only check that was not measured for one student was not measured for anyone:
    # leave it out of every maximum, including for notebooks a student did not hand in.
    unmeasured = {x for r in rows for x in r.not_measured}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        unmeasured |= _gpu_only_unmeasured(root, gb)
        maxima: dict[str, float] = {}  # "notebook:cell": its points, looked up once
        for row in rows:
            for name in list(row.scores):
                if any(x.startswith(f"{name}:") for x in unmeasured) and \
                        not any(x.startswith(f"{name}:") for x in row.not_measured):
                    s, m = row.scores[name]
                    for x in unmeasured:
                        if x.startswith(f"{name}:"):
                            if x not in maxima:
                                maxima[x] = gb.find_grade_cell(
                                    x.split(":", 1)[1], name, ASSIGNMENT).max_score
                            m -= maxima[x]
                    row.scores[name] = (s, m)
    for row in rows:
        choose_track(row, notebooks)
    return notebooks, rows


def total(row: Row, notebooks: list[str]) -> tuple[float, float]:
    """The student's total and its maximum: every notebook of the track they did (the other
    track's are not counted), not-measured checks left out of the maximum, hand grades in."""
    score, maximum = 0.0, 0.0
    for nb in notebooks:
        if nb in row.off_track:
            continue
        s, m = row.scores.get(nb, (0.0, 0.0))
        score, maximum = score + s, maximum + m
    return score, maximum


#: The table fits a terminal this wide; notes wrap at words below their row.
WIDTH = 100
#: One note, or one reason a point was lost, is shortened (at a word) past this many columns;
#: the whole text is in ``grades.csv`` and ``grade-reasons.csv`` (:mod:`.export`).
NOTE_LIMIT = 300


def wrap(text: str, width: int = WIDTH, indent: str = "    ", limit: int = NOTE_LIMIT
         ) -> list[str]:
    """``text`` in lines of at most ``width`` columns (Hangul counts two), broken at spaces,
    never inside a word; past ``limit`` columns it stops at a word and ends with "…". A single
    word wider than a line stays whole on its own line."""
    words, lines, line, used = text.split(), [], indent, 0
    for word in words:
        if used + text_width(word) > limit:
            if text_width(line + "…") > width:
                lines.append(line)
                line = indent + "  "
            line += "…"
            break
        gap = "" if line == indent or line.endswith("  ") else " "
        if line.strip() and text_width(line + gap + word) > width:
            lines.append(line)
            line, gap = indent + "  ", ""
        line += gap + word
        used += text_width(word) + 1
    if line.strip():
        lines.append(line)
    return lines


def _cell(row: Row, nb: str) -> str:
    if nb in row.off_track:
        return "·"
    if nb in row.missing:
        return "—"
    s, m = row.scores.get(nb, (0.0, 0.0))
    return f"{s:g}/{m:g}"


def row_notes(row: Row) -> list[str]:
    """Everything the table says about a student beside the numbers (whole, unshortened)."""
    notes = [f"track: {row.track}"] if row.track else []
    notes += row.notes
    if row.manual:
        notes.append(f"to grade by hand: {', '.join(row.manual)}")
    if row.hand_graded:
        notes.append(f"graded by hand: {', '.join(row.hand_graded)}")
    if row.not_measured:
        notes.append(f"{len(row.not_measured)} GPU check(s) not measured (no GPU), out of the "
                     "maximum: " + ", ".join(row.not_measured))
    if row.differs:
        notes.append("the notebook's own verdict differed for "
                     + ", ".join(f"{k} ({v})" for k, v in row.differs.items()))
    return notes


def grading_limits(cell_timeout: float) -> dict[str, Any]:
    """The sandbox and time limits in force now, as :func:`limits_line` reads them back (the
    harness records them when it grades: ``autograded/`` :data:`LIMITS_FILE`)."""
    from course.runtime.backend import driver_gpu_count

    return {"sandbox": sandbox.sandbox_status(), "cell_timeout": cell_timeout,
            "after_timeout": limits_mod.Limits.from_env().after_timeout,
            "gpu": driver_gpu_count()[0] > 0}


def limits_line(root: Path | None) -> str:
    """The sandbox and the time limits, once: as the last grading recorded them (else as
    they would be now, and said so)."""
    record = root / "autograded" / LIMITS_FILE if root is not None else None
    if record is not None and record.is_file():
        data, when = json.loads(record.read_text()), "as graded"
    else:
        data, when = grading_limits(cell_timeout()), "not recorded by a grading; as set now"
    return (f"sandbox ({when}): {data['sandbox']}; time: {data['cell_timeout']:g} s per cell, "
            f"then {data['after_timeout']:g} s for the rest of that notebook after a timeout")


def render(notebooks: list[str], rows: list[Row], root: Path | None = None) -> str:
    """A plain-text table at most :data:`WIDTH` columns wide: one line of scores per student,
    their notes wrapped at words below it, then why points were lost and what the signs mean."""
    short = [n.split("_", 1)[0] for n in notebooks]
    cell = max([6, *(len(_cell(r, nb)) + 1 for r in rows for nb in notebooks)])
    name = WIDTH - cell * len(notebooks) - 9
    head = f"{'student':<{name}}" + "".join(f"{s:>{cell}}" for s in short) + f"{'total':>9}"
    lines = [head, "-" * len(head)]
    for row in rows:
        tot, mx = total(row, notebooks)
        scores = "".join(_cell(row, nb).rjust(cell) for nb in notebooks) \
            + f"{tot:g}/{mx:g}".rjust(9)
        if len(row.student) < name:
            lines.append(printable(f"{row.student:<{name}}" + scores))
        else:  # a long id on a line of its own, whole: never cut, the scores under it
            lines += [printable(row.student), " " * name + scores]
        for note in row_notes(row):
            lines += wrap(printable(note))
    reasons = [(row.student, key, why) for row in rows for key, why in row.lost.items()]
    if reasons:
        lines += ["", "Why points were lost (the grader's message for every failed test; "
                  "whole, in grade-reasons.csv):"]
        for student, key, why in reasons:
            lines += wrap(printable(f"{student} {key}: {why}"), indent="  ", limit=200)
    lines.append("")
    lines += wrap(limits_line(root), indent="", limit=10_000)
    lines += wrap("— = notebook not handed in (scored 0). · = the other track's notebook "
                  "(2/3 in Numba, 2c/3c in CUDA C): not counted. The total is the student's "
                  "track; GPU checks 'not measured' (no GPU) are out of the maximum, for every "
                  "student alike — the same total as grades.csv, the formgrader and the LMS "
                  "exports. Grade on a GPU machine (`make grade`) to measure them.", indent="",
                  limit=10_000)
    return "\n".join(lines)


def similarity_note(root: Path) -> str | None:
    """The line under the table about the class's similarity report (how many pairs were
    flagged and where the report is), or None before ``make similarity`` has run. It reads the
    report and never a score: a flag is for a person to read, never a grade."""
    return similarity_report.summary(root)
