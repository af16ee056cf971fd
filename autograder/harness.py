"""The instructor's commands: build the release, grade a class, print the grade table.

``python -m autograder.harness demo`` (what ``make demo`` runs) does the whole job on the
sample class in ``autograder/samples``:

1. ``nbgrader generate_assignment week4`` — regenerate ``release/week4`` from ``source/``;
2. copy each sample student's notebooks into ``submitted/<student>/week4``;
3. ``nbgrader autograde week4`` — run them in the sandbox, re-score every test cell;
4. ``nbgrader generate_feedback`` and ``nbgrader export`` (``grades.csv``);
5. print a student × notebook table. A test that needs a GPU and ran without one shows as
   "not measured" and is left out of the maximum, never silently awarded or denied.

``python -m autograder.harness grade`` does steps 3–5 for a real class already collected
in ``submitted/``; ``table`` only prints.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from autograder import samples, sandbox
from autograder.config import ASSIGNMENT

ROOT = Path(__file__).resolve().parents[1]
_LOG_LOCK = threading.Lock()


def nbgrader(*args: str, root: Path, check: bool = True, quiet: bool = False) -> bool:
    """Run one nbgrader command in the course directory; stop on failure if ``check``."""
    cmd = [sys.executable, "-m", "nbgrader", *args]
    if not quiet:
        print(f"$ nbgrader {' '.join(args)}", flush=True)
    # nbgrader runs `alembic` (gradebook migrations) from PATH: make it this environment's.
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                 os.environ.get("PATH", "")]))
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env)
    log = root / ".nbgrader.log"
    with _LOG_LOCK, open(log, "a") as fh:
        fh.write(f"$ {' '.join(args)}\n{proc.stdout}{proc.stderr}\n")
    if proc.returncode != 0 and check:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        raise SystemExit(f"nbgrader {args[0]} failed (full log: {log}):\n{tail}")
    return proc.returncode == 0


def build_release(root: Path) -> None:
    nbgrader("generate_assignment", ASSIGNMENT, "--force", root=root)


def stage_samples(root: Path, only: list[str] | None = None) -> list[str]:
    """Write the sample class (or ``only`` those students) into submitted/, replacing what a
    previous demo left."""
    shutil.rmtree(root / "submitted", ignore_errors=True)
    return samples.build_class(root, root / "submitted", only)


@dataclass
class Row:
    student: str
    scores: dict[str, tuple[float, float]] = field(default_factory=dict)
    not_measured: list[str] = field(default_factory=list)
    manual: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def collect(root: Path) -> tuple[list[str], list[Row]]:
    """Scores from the gradebook, plus what the trusted re-check recorded beside them."""
    from nbgrader.api import Gradebook

    rows: list[Row] = []
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        assignment = gb.find_assignment(ASSIGNMENT)
        notebooks = [nb.name for nb in assignment.notebooks]
        for student in sorted(s.id for s in gb.students):
            row = Row(student)
            try:
                sub = gb.find_submission(ASSIGNMENT, student)
            except Exception:  # noqa: BLE001 - no submission: a row of zeros, said so
                row.notes.append("no submission")
                rows.append(row)
                continue
            for nb in sub.notebooks:
                score, maximum = 0.0, 0.0
                folder = root / "autograded" / student / ASSIGNMENT
                summary_path = folder / f"{nb.name}.trusted.json"
                summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
                unmeasured = {g for g, v in summary.get("cells", {}).items()
                              if v["status"] == "not_measured"}
                for grade in nb.grades:
                    if grade.needs_manual_grade:
                        row.manual.append(f"{nb.name}:{grade.name}")
                    if grade.name in unmeasured:
                        row.not_measured.append(f"{nb.name}:{grade.name}")
                        continue
                    score += grade.score or 0.0
                    maximum += grade.max_score
                if not (root / "submitted" / student / ASSIGNMENT / f"{nb.name}.ipynb").exists():
                    row.missing.append(nb.name)
                if summary.get("dead_kernel"):
                    row.notes.append(f"{nb.name}: {summary['dead_kernel']}")
                row.notes += [f"{nb.name}: {note}" for note in summary.get("notes", [])]
                row.scores[nb.name] = (score, maximum)
            rows.append(row)
    # A GPU-only check that was not measured for one student was not measured for anyone:
    # leave it out of every maximum, including for notebooks a student did not hand in.
    unmeasured = {x for r in rows for x in r.not_measured}
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for row in rows:
            for name in list(row.scores):
                if any(x.startswith(f"{name}:") for x in unmeasured) and \
                        not any(x.startswith(f"{name}:") for x in row.not_measured):
                    s, m = row.scores[name]
                    for x in unmeasured:
                        if x.startswith(f"{name}:"):
                            cell = gb.find_grade_cell(x.split(":", 1)[1], name, ASSIGNMENT)
                            m -= cell.max_score
                    row.scores[name] = (s, m)
    return notebooks, rows


def render(notebooks: list[str], rows: list[Row]) -> str:
    """A plain-text table, one row per student."""
    short = [n.split("_", 1)[0] for n in notebooks]
    head = f"{'student':<28}" + "".join(f"{s:>10}" for s in short) + f"{'total':>12}  notes"
    lines = [head, "-" * len(head)]
    for row in rows:
        cells, tot, mx = [], 0.0, 0.0
        for nb in notebooks:
            s, m = row.scores.get(nb, (0.0, 0.0))
            tot, mx = tot + s, mx + m
            cells.append(("—" if nb in row.missing else f"{s:g}/{m:g}").rjust(10))
        notes = list(row.notes)
        if row.manual:
            notes.append(f"to grade by hand: {', '.join(row.manual)}")
        if row.not_measured:
            notes.append(f"{len(row.not_measured)} GPU check(s) not measured (no GPU): "
                         + ", ".join(row.not_measured))
        lines.append(f"{row.student:<28}" + "".join(cells) + f"{tot:g}/{mx:g}".rjust(12) + "  "
                     + "; ".join(notes))
    lines.append("")
    lines.append(f"sandbox: {sandbox.sandbox_status()}")
    lines.append("— = notebook not handed in (scored 0). 'not measured' checks are excluded "
                 "from the maximum; grade them on a GPU machine with `make grade`.")
    return "\n".join(lines)


def workers() -> int:
    """Students graded at once (COURSE_GRADING_WORKERS; default: CPU cores, at most 4).

    With a GPU, one at a time: speedups are measured there, and two students' timings
    sharing the GPU would disturb each other's ratios.
    """
    from course.backend import driver_gpu_count

    if os.environ.get("COURSE_GRADING_WORKERS"):
        return int(os.environ["COURSE_GRADING_WORKERS"])
    return 1 if driver_gpu_count()[0] else min(4, os.cpu_count() or 1)


def autograde_all(root: Path) -> None:
    """Autograde every submitted student, a few at a time; retry failures one by one.

    Each student is one ``nbgrader autograde --student`` process, so a student whose
    grading breaks (a locked gradebook, a crash) is retried alone and, if it fails again,
    stops the run loudly instead of vanishing from the table.
    """
    from concurrent.futures import ThreadPoolExecutor

    students = sorted(p.name for p in (root / "submitted").iterdir() if p.is_dir())
    print(f"$ nbgrader autograde {ASSIGNMENT} --student <each of {len(students)}> "
          f"({workers()} at a time)", flush=True)

    def grade(student: str) -> bool:
        return nbgrader("autograde", ASSIGNMENT, "--student", student, "--create", "--force",
                        root=root, check=False, quiet=True)

    with ThreadPoolExecutor(max_workers=workers()) as pool:
        ok = dict(zip(students, pool.map(grade, students), strict=True))
    for student in [s for s, good in ok.items() if not good]:
        print(f"  retrying {student} alone", flush=True)
        nbgrader("autograde", ASSIGNMENT, "--student", student, "--create", "--force",
                 root=root)
    nbgrader("generate_feedback", ASSIGNMENT, "--force", root=root)
    nbgrader("export", root=root)


def reset_grading_state(root: Path) -> None:
    for name in ("autograded", "feedback"):
        shutil.rmtree(root / name, ignore_errors=True)
    for name in ("gradebook.db", "grades.csv", ".nbgrader.log"):
        (root / name).unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.harness", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["release", "demo", "grade", "table"])
    parser.add_argument("--root", type=Path, default=ROOT, help="course directory")
    parser.add_argument("--json", type=Path, help="also write the table as JSON here")
    parser.add_argument("--students", help="demo: only these sample students, comma-separated "
                        "(default: the whole class)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    os.chdir(root)
    if args.command in ("release", "demo"):
        if args.command == "demo":
            reset_grading_state(root)
        build_release(root)
    if args.command == "demo":
        students = stage_samples(root, args.students.split(",") if args.students else None)
        print(f"staged {len(students)} sample submissions in submitted/", flush=True)
    if args.command in ("demo", "grade"):
        autograde_all(root)
    if args.command in ("demo", "grade", "table"):
        notebooks, rows = collect(root)
        print(render(notebooks, rows))
        if args.json:
            args.json.write_text(json.dumps(
                {r.student: {"scores": r.scores, "not_measured": r.not_measured,
                             "manual": r.manual, "missing": r.missing, "notes": r.notes}
                 for r in rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
