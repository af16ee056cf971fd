"""What the class report says, from the grade table and the trusted re-check's records.

:func:`gather` reads a graded course directory: the rows of the grade table
(:func:`autograder.results.table.collect`, totals from :func:`autograder.results.table.total`:
the one total every other place shows), each notebook's ``<notebook>.trusted.json`` (every
test cell's verdict, its message, its seconds, and a speedup's measurement), and the class's
names from the gradebook (to take them out of the example messages). :func:`build` turns
those into a :class:`ClassReport`; it reads no file, so tests give it synthetic classes.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from autograder.report import mistakes as named
from autograder.results.table import Row, collect, is_gpu_timing, total
from autograder.runner.names import ASSIGNMENT
from course.runtime.i18n import DEFAULT, LANGUAGES

Summaries = dict[tuple[str, str], dict[str, Any]]


@dataclass
class TestCount:
    """One test cell across the class: how many students' notebooks it checked, and how."""

    notebook: str
    grade_id: str
    handed_in: int = 0
    passed: int = 0
    failed: int = 0
    not_measured: int = 0

    @property
    def not_checked(self) -> int:
        """Handed in, but no verdict recorded (the notebook could not be graded)."""
        return max(0, self.handed_in - self.passed - self.failed - self.not_measured)


@dataclass
class Mistake:
    """A named mistake: one test, one message template, the students who got it."""

    notebook: str
    grade_id: str
    template: str
    students: list[str] = field(default_factory=list)
    example: str = ""


@dataclass
class Kernel:
    """One student's measured speedup: their tiled and naive kernels at the graded size."""

    student: str
    notebook: str
    track: str
    device: str  # the GPU's model, as its driver names it ("NVIDIA H200")
    gpu: str  # the grading slot's GPU ("GPU 0 (NVIDIA H200)"), else the model
    size: int
    tile: int
    tiled_gflops: float
    naive_gflops: float | None
    naive_kind: str  # "own naive" or "reference naive"
    #: the course's own naive kernel, timed in the same run: what the speedup is measured against
    reference_gflops: float | None
    speedup: float
    passed: bool  # the speedup check's verdict
    correct: bool  # every other check of the notebook passed


@dataclass
class ClassReport:
    language: str
    notebooks: list[str]
    students: int
    handed_in: dict[str, int]
    #: track -> each student's total as a percentage of their maximum (who handed in anything)
    scores: dict[str, list[float]]
    totals: dict[str, tuple[float, float]]
    tests: list[TestCount]
    mistakes: list[Mistake]
    kernels: list[Kernel]
    #: student -> seconds the re-check's test cells took, summed over their notebooks
    check_seconds: dict[str, float]
    #: (notebook:test, why) -> how many students' checks were not measured for that reason
    not_measured: dict[tuple[str, str], int]
    #: (student, notebook, why) for every notebook that could not be graded
    failed_to_run: list[tuple[str, str, str]]

    @property
    def median_seconds(self) -> float:
        return statistics.median(self.check_seconds.values()) if self.check_seconds else 0.0

    def as_json(self) -> dict[str, Any]:
        """Everything the report says, as JSON (``class.json``)."""
        data = asdict(self)
        data["not_measured"] = [{"test": test, "why": why, "students": n}
                                for (test, why), n in sorted(self.not_measured.items())]
        data["failed_to_run"] = [{"student": s, "notebook": nb, "why": why}
                                 for s, nb, why in self.failed_to_run]
        return data


def _language(rows: list[Row]) -> str:
    found = Counter(r.language for r in rows if r.language in LANGUAGES)
    return found.most_common(1)[0][0] if found else DEFAULT


def _kernel(row: Row, notebook: str, summary: dict[str, Any]) -> Kernel | None:
    cells = summary.get("cells") or {}
    for gid, cell in cells.items():
        measured = cell.get("measured")
        if not (is_gpu_timing(gid) and isinstance(measured, dict)):
            continue
        gflops = measured.get("gflops") or {}
        if not gflops.get("tiled"):
            continue
        kind = "own naive" if "own naive" in gflops else "reference naive"
        others = [c.get("status") for g, c in cells.items() if g != gid]
        device = str(measured.get("device") or summary.get("gpu") or "")
        return Kernel(row.student, notebook, row.track, device,
                      str(summary.get("gpu") or device), int(measured.get("size") or 0),
                      int(measured.get("tile") or 0), float(gflops["tiled"]),
                      float(gflops[kind]) if kind in gflops else None, kind,
                      float(gflops["reference naive"]) if gflops.get("reference naive")
                      else None,
                      float(measured.get("speedup") or 0.0), cell.get("status") == "pass",
                      all(s in ("pass", "not_measured") for s in others))
    return None


def build(notebooks: list[str], rows: list[Row], summaries: Summaries,
          people: list[str], language: str | None = None) -> ClassReport:
    """The class report of graded ``rows`` (the grade table's) and the re-check's
    ``summaries`` ((student, notebook) -> its trusted.json); ``people``: every id and name of
    the class, taken out of the example messages."""
    tests: dict[tuple[str, str], TestCount] = {}
    found: dict[tuple[str, str, str], Mistake] = {}
    handed_in = {nb: 0 for nb in notebooks}
    scores: dict[str, list[float]] = {}
    totals: dict[str, tuple[float, float]] = {}
    seconds: dict[str, float] = {}
    not_measured: Counter[tuple[str, str]] = Counter()
    failed: list[tuple[str, str, str]] = []
    kernels: list[Kernel] = []
    for row in rows:
        totals[row.student] = total(row, notebooks)
        handed = [nb for nb in notebooks if nb in row.scores and nb not in row.missing]
        for nb in handed:
            handed_in[nb] += 1
        if handed:
            score, maximum = totals[row.student]
            scores.setdefault(row.track or "", []).append(
                100.0 * score / maximum if maximum else 0.0)
        for nb in handed:
            summary = summaries.get((row.student, nb), {})
            cells = summary.get("cells") or {}
            for gid, cell in cells.items():
                count = tests.setdefault((nb, gid), TestCount(nb, gid))
                status = cell.get("status")
                count.passed += status == "pass"
                count.failed += status == "fail"
                count.not_measured += status == "not_measured"
                seconds[row.student] = seconds.get(row.student, 0.0) + float(
                    cell.get("seconds") or 0.0)
                message = str(cell.get("evalue") or "")
                if status == "not_measured":
                    why = named.anonymised(named.first_line(message), people)
                    not_measured[(f"{nb}:{gid}", why)] += 1
                if status == "fail":  # grouped by what it says, with nobody's name in it
                    ename, said = str(cell.get("ename") or ""), named.anonymised(message, people)
                    key = (nb, gid, named.template(ename, said))
                    mistake = found.setdefault(key, Mistake(nb, gid, key[2]))
                    if row.student not in mistake.students:
                        mistake.students.append(row.student)
                    if not mistake.example:
                        mistake.example = f"{ename}: {named.first_line(said)}"
            kernel = _kernel(row, nb, summary) if nb not in row.off_track else None
            if kernel is not None:
                kernels.append(kernel)
        for nb in sorted(set(row.failed)):
            why = (summaries.get((row.student, nb)) or {}).get("dead_kernel") or ""
            failed.append((row.student, nb, str(why) or "grading failed (see .nbgrader.log)"))
        for note in row.notes:
            if note.startswith("GRADING FAILED"):
                failed.append((row.student, "", note))
    for count in tests.values():
        count.handed_in = handed_in.get(count.notebook, 0)
    order = {nb: i for i, nb in enumerate(notebooks)}
    ranked = sorted(found.values(),
                    key=lambda m: (-len(m.students), order.get(m.notebook, 99), m.grade_id))
    return ClassReport(language or _language(rows), notebooks, len(rows), handed_in, scores,
                       totals, sorted(tests.values(), key=lambda t: order.get(t.notebook, 99)),
                       ranked, kernels, seconds, dict(not_measured), failed)


def read_summaries(root: Path, rows: list[Row], notebooks: list[str]) -> Summaries:
    """Every (student, notebook) trusted.json the re-check wrote."""
    found: Summaries = {}
    for row in rows:
        for nb in notebooks:
            path = root / "autograded" / row.student / ASSIGNMENT / f"{nb}.trusted.json"
            if path.is_file():
                found[(row.student, nb)] = json.loads(path.read_text(encoding="utf-8"))
    return found


def class_people(root: Path) -> list[str]:
    """Every student id, first and last name in the gradebook."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return [str(x) for s in gb.students
                for x in (s.id, s.first_name, s.last_name, s.email) if x]


def gather(root: Path, language: str | None = None) -> ClassReport:
    """The class report of the graded course directory ``root``."""
    notebooks, rows = collect(root)
    return build(notebooks, rows, read_summaries(root, rows, notebooks), class_people(root),
                 language)
