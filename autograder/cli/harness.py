"""The instructor's commands: build the release, grade a class, print the grade table.

``python -m autograder release`` (``make release``) first brings the generated parts of
``source/`` and the README up to date (setup cells, figures, Open-in-Colab links:
:mod:`autograder.release.generated`), then runs ``nbgrader generate_assignment week4`` (which
regenerates ``release/week4`` from ``source/``) and writes the translated releases from it
(``release-ko/week4``: :mod:`autograder.release.translation`), and says loudly when the course's
repository URL (``course/runtime/config.py``) is still the placeholder.

``python -m autograder grade`` grades a real class already collected in ``submitted/``:

1. ``nbgrader autograde week4`` — run each notebook in the sandbox, re-score every test cell,
   on this machine or, with ``--engine slurm``, as a Slurm job array (:mod:`autograder.engines`);
2. feedback (each grading slot writes its student's as soon as they are graded;
   ``nbgrader generate_feedback`` for any others) and ``nbgrader export`` (``grades.csv``);
3. print a student × notebook table. A test that needs a GPU and ran without one shows as
   "not measured" and is left out of the maximum, never silently awarded or denied.

``table`` exports ``grades.csv`` again (hand grades given in the formgrader since) and prints the
table. ``collect --zip download.zip`` (``make collect``) puts an LMS's bulk download into
``submitted/`` (:mod:`autograder.handin`); ``export`` and ``return`` (``make export``,
``make return``) hand grades and feedback back to Canvas or Moodle
(:mod:`autograder.cli.handback`); before grading, ``grade`` adds the assignment to a
fresh gradebook and gives renamed notebooks (``Copy of …``) their release names, and prints what
was collected (``collection.csv``).

The demo on the sample class (``make demo``) is the sample class's own driver,
``python -m sample_class`` (:mod:`sample_class.demo`): it stages the sample students and then
calls the functions here, so the grader never imports its sample class.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

from autograder import engines
from autograder.cli import handback
from autograder.engines import gpus, progress, slots
from autograder.engines.local import workers, workers_reason
from autograder.engines.slurm import SLURM_DIR
from autograder.grading.config import cell_timeout
from autograder.handin import collect as handin_collect
from autograder.handin import failure, ready
from autograder.handin import report as handin_report
from autograder.release import generated as release
from autograder.release import translation
from autograder.results.table import (
    LIMITS_FILE,
    collect,
    grading_limits,
    render,
    similarity_note,
    total,
)
from autograder.runner.names import ASSIGNMENT, submitted_students
from autograder.runner.nbgrader_cli import LAST_FAILURE, nbgrader
from autograder.similarity import command as similarity
from autograder.viewing import feedback as viewing_feedback
from autograder.viewing.terminal import as_typed

ROOT = Path(__file__).resolve().parents[2]


def build_release(root: Path, sync: bool = False) -> None:
    """Generate the release; with ``sync``, first update the generated parts of source/ and
    the README (``demo`` runs on a copy of source/ alone, and leaves it as it is)."""
    if sync:
        for name in release.sync(root).changed:
            print(f"updated {name} (setup cell, figures, Colab links or the answer table)",
                  flush=True)
    nbgrader("generate_assignment", ASSIGNMENT, "--force", root=root)
    for language in translation.LANGUAGES:  # release-ko/week4 from release/week4
        if not (root / "i18n" / language).is_dir():
            print(f"no i18n/{language}/ in {root}: no {language} release", flush=True)
            continue
        try:
            translation.write_release(root, language)
        except translation.TranslationError as exc:
            raise SystemExit(f"release/{ASSIGNMENT} was built; {exc}") from None


def autograde_all(root: Path, engine: engines.Engine | None = None,
                  students: list[str] | None = None) -> str | None:
    """Autograde the submitted students with ``engine``, then feedback and ``grades.csv``.

    Prints a progress bar and a line per student as they finish. Returns the engine's error
    message when some students could not be graded (the rest still get feedback and their
    export), else None.
    """
    engine = engine or engines.LocalEngine(workers(), why=workers_reason())
    everyone = submitted_students(root)
    students = everyone if students is None else students
    unknown = sorted(set(students) - set(everyone))
    if unknown:
        raise SystemExit(f"not in submitted/: {', '.join(unknown)}")
    if isinstance(engine, engines.LocalEngine):
        used = slots.balanced(len(students), engine.workers)
        how = "; ".join(filter(None, [
            slots.describe(len(students), engine.workers), gpus.describe(engine.slot_gpus[:used]),
            f"at most {engine.workers} at once: {engine.why}" if engine.why else ""]))
    else:
        how = f"engine {engine.name}"
    print(f"$ nbgrader autograde {ASSIGNMENT} --student <each of {len(students)}> ({how})",
          flush=True)
    (root / "autograded").mkdir(exist_ok=True)  # the table states the limits as graded
    (root / "autograded" / LIMITS_FILE).write_text(json.dumps(grading_limits(cell_timeout())))
    error = None
    with progress.Progress(len(students)) as bar:
        try:
            if students:
                engine.grade(root, students, bar.done)
        except engines.GradingError as exc:
            error = str(exc)
    # The engine wrote feedback for the students it graded (local slots do); the rest (Slurm,
    # a student retried alone, students graded in an earlier run) get it here.
    written = sorted(engine.with_feedback)
    args = ("generate_feedback", ASSIGNMENT, "--force",
            *([f"--CourseDirectory.student_id_exclude={','.join(written)}"] if written else []))
    graded = {p.parent.name for p in (root / "autograded").glob(f"*/{ASSIGNMENT}")}
    if not (graded and graded <= set(written)) and not nbgrader(*args, root=root, check=False):
        # no student graded at all: the table still says why for each
        print("  no feedback written: " + failure.explain(LAST_FAILURE.get(args, "")),
              flush=True)
    # only the pages a student should see, each with a policy against script
    viewing_feedback.finish(root, ASSIGNMENT)
    ready.alias_feedback(root)  # a renamed notebook's feedback under its handed-in name too
    nbgrader("export", root=root)
    return error


def reset_grading_state(root: Path) -> None:
    for name in ("autograded", "feedback", SLURM_DIR, "downloaded", "set_aside", handback.OUT):
        shutil.rmtree(root / name, ignore_errors=True)
    for name in ("gradebook.db", "grades.csv", ".nbgrader.log", handin_report.CSV_NAME):
        (root / name).unlink(missing_ok=True)


def add_grading_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of every command that grades and prints the table (``grade``, the sample
    class's demo)."""
    parser.add_argument("--root", type=Path, default=ROOT, help="course directory")
    parser.add_argument("--json", type=Path, help="also write the table as JSON here")
    parser.add_argument("--students", help="only these students, comma-separated (demo: sample "
                        "students; grade: students in submitted/); default: everyone")
    parser.add_argument("--engine", choices=["local", "slurm"],
                        default=os.environ.get("COURSE_GRADING_ENGINE", "local"),
                        help="where to autograde: this machine, or a Slurm job array "
                        "(see autograder/engines/)")
    parser.add_argument("--workers", type=int, help="local: students at once (default: "
                        "COURSE_GRADING_WORKERS, else see engines.local.workers)")
    parser.add_argument("--per-task", type=int, default=8,
                        help="slurm: students per array task (default 8)")
    parser.add_argument("--sbatch-args", default="",
                        help="slurm: extra sbatch options, e.g. \"--partition=gpu --gres=gpu:1 "
                        "--time=02:00:00\" (default: COURSE_SLURM_ARGS)")
    parser.add_argument("--fresh", action="store_true",
                        help="slurm: forget an unfinished run and grade every shard again")
    parser.add_argument("--gpus-per-task", type=int,
                        default=int(os.environ.get("COURSE_SLURM_GPUS_PER_TASK") or 0),
                        help="slurm: GPUs each array task asks for (sbatch --gres=gpu:N, or "
                        "--gpus-per-task=N with COURSE_SLURM_GPU_FLAG=gpus-per-task); its "
                        "grading slots spread over them (default: COURSE_SLURM_GPUS_PER_TASK, "
                        "else none asked: put them in --sbatch-args)")


def grade(root: Path, args: argparse.Namespace, only: list[str] | None) -> str | None:
    """Autograde the students of ``submitted/`` (``only`` those, if given) with the engine the
    options name; the engine's error message, or None. Nothing in ``submitted/`` is not a
    success: it says so, names the next step and exits 1 (no table of an earlier run)."""
    if not submitted_students(root):
        collect_zip = as_typed("make collect ZIP=<the LMS's download>.zip",
                               "python -m autograder collect --zip <the LMS's download>.zip")
        again = as_typed("make grade", "python -m autograder grade")
        raise SystemExit(f"nothing to grade: {root / 'submitted'} holds no student's folder. "
                         f"Collect the class first ({collect_zip}, or put each student's "
                         f"notebooks in submitted/<student id>/{ASSIGNMENT}/), then {again} "
                         "again.")
    graded = ready.ready_to_grade(root, nbgrader, only)
    engine = engines.make_engine(args.engine, workers=args.workers or workers(),
                                 why="--workers" if args.workers else workers_reason(),
                                 per_task=args.per_task, sbatch_args=args.sbatch_args,
                                 fresh=args.fresh, gpus_per_task=args.gpus_per_task)
    return autograde_all(root, engine, graded)


def nothing_graded(root: Path) -> str | None:
    """Why there is no table to show (no gradebook, no assignment, no student in it), naming
    the next step; None when there is one."""
    from nbgrader.api import Gradebook

    grade = as_typed("make grade", "python -m autograder grade")
    if not (root / "gradebook.db").exists() or not ready.has_assignment(root):
        return f"nothing graded yet: no gradebook of {ASSIGNMENT} in {root}; grade first ({grade})"
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        if not gb.students:
            return (f"nothing graded yet: the gradebook in {root} has no student; put the class "
                    f"in submitted/ and grade it ({grade})")
    return None


def report(root: Path, args: argparse.Namespace, error: str | None) -> int:
    """Print the grade table and its summary (and write it as JSON with ``--json``); the exit
    status: 1 if some students could not be graded (``error``) or nothing was graded yet."""
    why = nothing_graded(root)
    if why:
        print(why, file=sys.stderr)
        return 1
    notebooks, rows = collect(root)
    print(render(notebooks, rows, root))
    print()
    print(progress.summary(notebooks, rows))
    note = similarity_note(root)
    if note:
        print(note)
    if args.json:
        args.json.write_text(json.dumps(
            {r.student: {"total": total(r, notebooks), "scores": r.scores,
                         "not_measured": r.not_measured,
                         "manual": r.manual, "hand_graded": r.hand_graded,
                         "missing": r.missing, "failed": r.failed, "notes": r.notes,
                         "lost": r.lost, "differs": r.differs,
                         "track": r.track, "off_track": r.off_track}
             for r in rows}, indent=1))
    if error:
        print(f"\nERROR: {error}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m autograder", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Also: `python -m autograder translation update|check|release` (the translated "
        "editions' catalogs and folders; see its --help), `python -m autograder.publish` (the "
        "student distribution) and `python -m sample_class` (the demo on the sample class).")
    parser.add_argument("command", choices=["release", "grade", "table", "collect", "export",
                                            "return", "similarity", "report"])
    parser.add_argument("--leaderboard", action="store_true",
                        help="report: also write report/leaderboard.html, for students "
                        "(pseudonyms; docs/report.md)")
    add_grading_arguments(parser)
    handin_collect.add_arguments(parser)
    handback.add_arguments(parser)
    args = parser.parse_args(argv)
    if args.command == "collect":  # before chdir: paths are relative to where it was typed
        return handin_collect.from_arguments(args, nbgrader)
    if args.command in ("export", "return"):  # the same
        return handback.from_arguments(args)
    root = args.root.resolve()
    os.chdir(root)
    if args.command == "similarity":  # copied answers: a report to read, never a grade
        return similarity.main(root)
    if args.command == "report":  # the class at a glance: reads the grades, writes none
        # imported here: its figures load matplotlib (about a second), which no other
        # command needs
        from autograder.report import command as class_report

        return class_report.main(root, args.leaderboard)
    if args.command == "release":
        warning = release.placeholder_warning()
        if warning:
            print(warning, file=sys.stderr, flush=True)
        build_release(root, sync=True)
        if warning:
            print(f"release/{ASSIGNMENT} was built, but students on Colab cannot install the "
                  "course package from the placeholder URL (see above).", file=sys.stderr)
        return 0
    error = None
    if args.command == "grade":
        error = grade(root, args, args.students.split(",") if args.students else None)
    if args.command == "table":  # hand grades given since the last grading reach grades.csv
        why = nothing_graded(root)
        if why:
            print(why, file=sys.stderr)
            return 1
        nbgrader("export", root=root, quiet=True)
    return report(root, args, error)
