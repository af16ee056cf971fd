"""The course's grader against plain nbgrader on one full submission: the CPU ratio, in one run.

    make bench-grading                       # = .venv/bin/python scripts/gpu/bench_grading.py
    .venv/bin/python scripts/gpu/bench_grading.py --rounds 3 --student ada_correct
    bash scripts/gpu/session.sh bench-grading  # the same on a GPU box

Builds the release once in a scratch course directory and stages one sample student's
submission (default ``ada_correct``: every notebook, all correct), then grades a fresh copy of
that directory again and again, alternating (course, plain, course, plain, … ``--rounds`` of
each), so that a machine that grows busier or quieter meanwhile weighs on both alike:

* **course**: ``python -m autograder grade --root <copy> --workers 1`` — what ``make grade``
  runs: the sandboxed kernels, the trusted re-check, feedback written by the grading slot, the
  export and the grade table;
* **plain**: nbgrader itself with a four-line ``nbgrader_config.py`` (:func:`plain_config`: the
  course id and the course's per-cell time limit, nothing of the course's preprocessors, no
  sandbox) in the same course directory: ``nbgrader autograde week4 --student <id> --create``,
  then ``nbgrader generate_feedback week4 --student <id>``.

Each run's cost is **the CPU seconds of its own process tree** (``getrusage(RUSAGE_CHILDREN)``
around it, this process a child subreaper so that orphans are counted:
``scripts/gpu/grading_cost.py``), not the machine's, which on a shared machine counts other
people's work; and its wall seconds. It prints every run as it ends, the medians, the ratio
course ÷ plain of the median CPU seconds, and whether that ratio is within issue 39's goal
(at most 1.0× on a 2-core machine without a GPU), then appends a row to
``docs/grading-history.md`` (``--history``; ``--no-history`` for none).

**Plain nbgrader runs the student's code unsandboxed**, with this user's rights, files and
network. That is acceptable here only because the submission is one of our own sample students
(``sample_class/students/``), written by the course's authors; never point ``--student`` at
anything else, and never use the plain configuration to grade a real class.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from common import ROOT, build_scratch_release  # first: the shared setup (common.py)
from grading_cost import (
    HISTORY,
    Run,
    append_history,
    become_subreaper,
    gpu_name,
    history_row,
    measure,
    per_100_minutes,
)

from autograder.grading.config import cell_timeout
from autograder.runner.names import ASSIGNMENT, COURSE_ID

#: issue 39's goal: the course's grader at most this many times plain nbgrader's CPU
GOAL = 1.0
SIDES = ("course", "plain")


def plain_config(timeout: int) -> str:
    """Plain nbgrader's whole configuration: four lines, nothing of the course's."""
    return "\n".join([
        "c = get_config()  # noqa: F821 - plain nbgrader (scripts/gpu/bench_grading.py)",
        f"c.CourseDirectory.course_id = {COURSE_ID!r}",
        f"c.Execute.timeout = {timeout}",
        "c.Execute.interrupt_on_timeout = True",
    ]) + "\n"


def course_commands(root: Path, student: str) -> list[list[str]]:
    """The course's grader: what ``make grade`` runs, for the one student."""
    return [[sys.executable, "-m", "autograder", "grade", "--root", str(root),
             "--students", student, "--workers", "1"]]


def plain_commands(root: Path, student: str) -> list[list[str]]:
    """Plain nbgrader: autograde, then feedback (``root`` is the working directory)."""
    nbgrader = [sys.executable, "-m", "nbgrader"]
    return [[*nbgrader, "autograde", ASSIGNMENT, "--student", student, "--create", "--force"],
            [*nbgrader, "generate_feedback", ASSIGNMENT, "--student", student, "--force"]]


def order(rounds: int, sides: Sequence[str] = SIDES) -> list[str]:
    """The runs in the order they are made: course, plain, course, plain, …"""
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    return [side for _ in range(rounds) for side in sides]


@dataclass(frozen=True)
class Result:
    """One run of one side: the sum of its commands."""

    side: str
    index: int  # 1, 2, … within its side
    cpu_s: float
    wall_s: float
    ok: bool
    problem: str = ""
    points: float | None = None  # the student's total in that run's gradebook


def combine(side: str, index: int, runs: Sequence[Run], problem: str = "",
            points: float | None = None) -> Result:
    """One side's run from its commands' runs (a failed command makes it not ok)."""
    failed = [r for r in runs if r.returncode != 0]
    if failed and not problem:
        problem = f"{failed[0].label} exited {failed[0].returncode}: " \
                  + failed[0].output.strip()[-400:]
    return Result(side, index, sum(r.cpu_s for r in runs), sum(r.wall_s for r in runs),
                  not problem, problem, points)


def median(results: Sequence[Result], side: str, what: str = "cpu_s") -> float:
    values = [getattr(r, what) for r in results if r.side == side and r.ok]
    if not values:
        raise ValueError(f"no successful {side} run")
    return statistics.median(values)


def ratio(results: Sequence[Result]) -> float:
    """Median CPU seconds of the course's runs ÷ plain nbgrader's."""
    return median(results, "course") / median(results, "plain")


def verdict(value: float, goal: float = GOAL) -> str:
    """The line that says whether ``value`` is within the goal."""
    met = "within" if value <= goal else "NOT within"
    return (f"course ÷ plain CPU = {value:.2f}×: {met} issue 39's goal of at most {goal:.1f}× "
            "(stated for a 2-core machine without a GPU)")


def report(results: Sequence[Result], gpu: str) -> list[str]:
    """Every run, the medians and the ratio, as printed at the end."""
    lines = ["", "| run | side | CPU-s (own process tree) | wall s | points (gradebook) | |",
             "|---|---|---|---|---|---|"]
    for i, r in enumerate(results, 1):
        points = "—" if r.points is None else f"{r.points:g}"
        lines.append(f"| {i} | {r.side} {r.index} | {r.cpu_s:.1f} | {r.wall_s:.1f} | {points} | "
                     + ("ok" if r.ok else f"FAILED: {r.problem[:200]}") + " |")
    lines.append("")
    for side in SIDES:
        ok = [r for r in results if r.side == side and r.ok]
        if ok:
            cpu, wall = median(results, side), median(results, side, "wall_s")
            lines.append(f"{side}: median {cpu:.1f} CPU-s, {wall:.1f} s wall ({len(ok)} "
                         f"run{'s' * (len(ok) != 1)}; CPU ÷ wall {cpu / wall:.2f} cores busy)")
    lines.append(f"GPU: {gpu}")
    lines.append(verdict(ratio(results)))
    return lines


def build_base(scratch: Path, student: str, progress: Callable[[str], None]) -> Path:
    """The scratch course directory: the release built, the student's submission staged."""

    import sample_class as samples

    base = scratch / "base"
    started = time.monotonic()
    built = build_scratch_release(base)
    if built.returncode:
        raise SystemExit(f"building the release failed (exit {built.returncode}):\n"
                         f"{built.stdout[-3000:]}\n{built.stderr[-3000:]}")
    if student not in samples.sample_students():
        raise SystemExit(f"no sample student called {student}: this benchmark grades our own "
                         "sample students only (plain nbgrader runs them unsandboxed)")
    samples.build_class(base, base / "submitted", [student])
    handed = len(list((base / "submitted" / student / ASSIGNMENT).glob("*.ipynb")))
    progress(f"release built and {student} staged ({handed} notebooks) in "
             f"{time.monotonic() - started:.0f} s")
    return base


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))


def show_progress(line: str) -> None:
    """Echo the lines of a run that say where it is: the harness's command and student lines,
    nbgrader's notebook by notebook."""
    if line.startswith("$ ") or " graded " in line:
        print(f"      {line.strip()[:150]}", flush=True)
    for step in ("] Autograding ", "] Converting notebook "):
        if step in line:  # nbgrader's log: the notebook's path, shown by its name
            print(f"      {step[2:]}{Path(line.split(step, 1)[1].strip()).name}", flush=True)


def run_side(side: str, index: int, base: Path, scratch: Path, student: str,
             timeout: int) -> Result:
    """A fresh copy of ``base``, graded by ``side``; checks that the student was graded."""
    root = scratch / f"{side}-{index}"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(base, root, symlinks=True)
    if side == "plain":
        (root / "nbgrader_config.py").write_text(plain_config(timeout))
        commands = plain_commands(root, student)
    else:
        commands = course_commands(root, student)
    runs = []
    for command in commands:
        runs.append(measure(f"{side}: {' '.join(command[1:4])}", command, cwd=root, env=_env(),
                            on_line=show_progress))
        if runs[-1].returncode:
            break
    handed = {p.name for p in (base / "submitted" / student / ASSIGNMENT).glob("*.ipynb")}
    graded = {p.name for p in (root / "autograded" / student / ASSIGNMENT).glob("*.ipynb")}
    pages = list((root / "feedback" / student / ASSIGNMENT).glob("*.html"))
    problem = ""
    if not runs[-1].returncode and (graded != handed or not pages):
        problem = (f"{len(graded)} of {len(handed)} notebooks autograded, "
                   f"{len(pages)} feedback pages (kept in {root})")
    result = combine(side, index, runs, problem, score(root, student))
    if result.ok:
        shutil.rmtree(root, ignore_errors=True)
    return result


def score(root: Path, student: str) -> float | None:
    """The student's total in nbgrader's gradebook (None when there is none)."""
    from nbgrader.api import Gradebook, MissingEntry

    if not (root / "gradebook.db").exists():
        return None
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        try:
            return float(gb.find_submission(ASSIGNMENT, student).score)
        except MissingEntry:
            return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int,
                        default=int(os.environ.get("BENCH_ROUNDS") or 2),
                        help="runs of each side, alternating (default 2; BENCH_ROUNDS)")
    parser.add_argument("--student", default="ada_correct",
                        help="the sample student graded (one of ours only: plain nbgrader "
                        "runs it unsandboxed)")
    parser.add_argument("--keep", type=Path, help="scratch folder to use and keep")
    parser.add_argument("--history", type=Path, default=None,
                        help="append the result here (default: docs/grading-history.md)")
    parser.add_argument("--no-history", action="store_true", help="append no history row")
    args = parser.parse_args(argv)


    def progress(text: str) -> None:
        print(f"[{time.monotonic() - began:5.0f} s] {text}", flush=True)

    began = time.monotonic()
    plan = order(args.rounds)
    if not become_subreaper():
        progress("could not become a child subreaper: orphaned processes' CPU is not counted")
    scratch = Path(args.keep or tempfile.mkdtemp(prefix="week4-bench-grading-"))
    scratch.mkdir(parents=True, exist_ok=True)
    gpu = gpu_name()
    progress(f"{os.cpu_count()} cores, GPU: {gpu}; {len(plan)} runs: {', '.join(plan)}")
    base = build_base(scratch, args.student, progress)
    results: list[Result] = []
    counts = dict.fromkeys(SIDES, 0)
    for i, side in enumerate(plan, 1):
        counts[side] += 1
        progress(f"run {i} of {len(plan)}: {side} {counts[side]} …")
        result = run_side(side, counts[side], base, scratch, args.student, cell_timeout())
        results.append(result)
        progress(f"run {i} of {len(plan)}: {side} {counts[side]}: {result.cpu_s:.1f} CPU-s, "
                 f"{result.wall_s:.1f} s wall" + ("" if result.ok else f"; FAILED: "
                                                   f"{result.problem}"))
    failed = [r for r in results if not r.ok]
    if any(not [r for r in results if r.side == s and r.ok] for s in SIDES):
        print("\n".join(f"{r.side} {r.index} failed: {r.problem}" for r in failed))
        return 1
    print("\n".join(report(results, gpu)), flush=True)
    if not args.no_history:
        value = ratio(results)
        row = history_row(
            "make bench-grading" + (f" BENCH_ROUNDS={args.rounds}" if args.rounds != 2 else "")
            + (f" (--student {args.student})" if args.student != "ada_correct" else ""),
            median(results, "course"), per_100_minutes(median(results, "course"),
                                                       os.cpu_count() or 1),
            f"bench-grading: course {median(results, 'course'):.1f} CPU-s "
            f"({median(results, 'course', 'wall_s'):.0f} s wall), plain nbgrader "
            f"{median(results, 'plain'):.1f} CPU-s ({median(results, 'plain', 'wall_s'):.0f} s); "
            f"ratio {value:.2f}×, medians of {args.rounds} each; min per 100 = CPU ÷ cores")
        path = append_history(row, args.history or HISTORY)
        progress(f"history: a row appended to {path}")
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    progress("done")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
