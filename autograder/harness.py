"""The instructor's commands: build the release, grade a class, print the grade table.

``python -m autograder.harness demo`` (what ``make demo`` runs) does the whole job on the
sample class in ``autograder/samples``:

1. ``nbgrader generate_assignment week4`` — regenerate ``release/week4`` from ``source/``;
2. copy each sample student's notebooks into ``submitted/<student>/week4``;
3. ``nbgrader autograde week4`` — run them in the sandbox, re-score every test cell;
4. ``nbgrader generate_feedback`` and ``nbgrader export`` (``grades.csv``);
5. print a student × notebook table. A test that needs a GPU and ran without one shows as
   "not measured" and is left out of the maximum, never silently awarded or denied.

``python -m autograder.harness release`` (``make release``) first brings the generated parts of
``source/`` and the README up to date (setup cells, figures, Open-in-Colab links:
:mod:`autograder.release`), then does step 1 and writes the translated releases from it
(``release-ko/week4``: :mod:`autograder.translation`), and says loudly when the course's
repository URL (``course/runtime/config.py``) is still the placeholder.
``python -m autograder.harness grade`` does steps 3–5 for a real class already collected
in ``submitted/``, on this machine or, with ``--engine slurm``, as a Slurm job array
(:mod:`autograder.engines`); ``table`` exports ``grades.csv`` again (hand grades given in the
formgrader since) and prints the table. ``collect --zip download.zip`` (``make collect``) puts an
LMS's bulk download into ``submitted/`` (:mod:`autograder.handin`); before grading, ``grade`` and
``demo`` add the assignment to a fresh gradebook and give renamed notebooks (``Copy of …``) their
release names, and print what was collected (``collection.csv``).
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

from autograder import engines, normalise, progress, release, samples, sandbox, translation, worker
from autograder.config import ASSIGNMENT
from autograder.handin import collect as handin_collect
from autograder.handin import failure, ready
from autograder.handin import report as handin_report
from autograder.samples import handin as sample_handin

ROOT = Path(__file__).resolve().parents[1]
_LOG_LOCK = threading.Lock()
#: Notebooks 2 and 3 exist in two tracks; a student does one. The other track's notebooks are
#: shown but never counted (see :func:`choose_track`).
TRACKS = {"Numba": ("02_naive_gemm", "03_tiled_gemm"),
          "CUDA C": ("02c_naive_gemm_cuda", "03c_tiled_gemm_cuda")}


def nbgrader(*args: str, root: Path, check: bool = True, quiet: bool = False) -> bool:
    """Run one nbgrader command in the course directory; stop on failure if ``check``.

    With ``check=False`` a failure returns False, and the tail of nbgrader's output is kept
    in ``LAST_FAILURE[args]`` so the caller can say why.
    """
    cmd = [sys.executable, "-m", "nbgrader", *args]
    if not quiet:
        print(f"$ nbgrader {' '.join(args)}", flush=True)
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True,
                          env=worker.nbgrader_env())
    log = append_log(root, args, f"{proc.stdout}{proc.stderr}")
    if proc.returncode != 0:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
        if check:
            raise SystemExit(f"nbgrader {args[0]} failed (full log: {log}):\n{tail}")
        LAST_FAILURE[args] = tail
    return proc.returncode == 0


def append_log(root: Path, args: tuple[str, ...], text: str) -> Path:
    """Add one nbgrader command's output to the course's ``.nbgrader.log``; return its path."""
    log = root / ".nbgrader.log"
    with _LOG_LOCK, open(log, "a") as fh:
        fh.write(f"$ {' '.join(args)}\n{text}\n")
    return log


#: nbgrader commands that failed with check=False -> the tail of their output.
LAST_FAILURE: dict[tuple[str, ...], str] = {}
GRADING_FAILED = "GRADING_FAILED.txt"


def record_grading_failure(root: Path, student: str, why: str) -> None:
    """Remember why nbgrader could not grade ``student``, for the grade table's row."""
    folder = root / "autograded" / student
    folder.mkdir(parents=True, exist_ok=True)
    (folder / GRADING_FAILED).write_text(why)


def build_release(root: Path, sync: bool = False) -> None:
    """Generate the release; with ``sync``, first update the generated parts of source/ and
    the README (``demo`` runs on a copy of source/ alone, and leaves it as it is)."""
    if sync:
        for name in release.sync(root).changed:
            print(f"updated {name} (setup cell, figures or Colab links)", flush=True)
    nbgrader("generate_assignment", ASSIGNMENT, "--force", root=root)
    for language in translation.LANGUAGES:  # release-ko/week4 from release/week4
        if not (root / "i18n" / language).is_dir():
            print(f"no i18n/{language}/ in {root}: no {language} release", flush=True)
            continue
        try:
            translation.write_release(root, language)
        except translation.TranslationError as exc:
            raise SystemExit(f"release/{ASSIGNMENT} was built; {exc}") from None


def stage_samples(root: Path, only: list[str] | None = None) -> list[str]:
    """Write the sample class (or ``only`` those students) into submitted/, replacing what a
    previous demo left; the students who hand in through an LMS are collected from its zip."""
    shutil.rmtree(root / "submitted", ignore_errors=True)
    ids = samples.build_class(root, root / "submitted", only)
    sample_handin.collect(root, nbgrader)
    return ids


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


def _summary_notes(row: Row, notebook: str, summary: dict) -> None:
    """Turn what the trusted re-check recorded into the row's notes and reasons (the notes in
    the notebook's language)."""
    from course.runtime.i18n import DEFAULT, in_language

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
    for gid, cell in summary.get("cells", {}).items():
        key = f"{notebook}:{gid}"
        if cell.get("status") == "fail":
            row.lost[key] = f"{cell.get('ename')}: {cell.get('evalue')}".splitlines()[0][:200]
        shown = (cell.get("notebook") or {}).get("status")
        if shown in ("pass", "fail") and cell.get("status") in ("pass", "fail") \
                and shown != cell["status"]:
            mark = {"pass": "✓", "fail": "✗"}
            row.differs[key] = (f"the notebook showed {mark[shown]}, the grader recorded "
                                f"{mark[cell['status']]}")


def collect(root: Path, only: list[str] | None = None) -> tuple[list[str], list[Row]]:
    """Scores from the gradebook, plus what the trusted re-check recorded beside them.

    ``only``: just these students (e.g. the one that just finished, for its progress line).
    """
    from nbgrader.api import Gradebook

    rows: list[Row] = []
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        assignment = gb.find_assignment(ASSIGNMENT)
        notebooks = [nb.name for nb in assignment.notebooks]
        for student in sorted(s.id for s in gb.students):
            if only is not None and student not in only:
                continue
            row = Row(student)
            failed = root / "autograded" / student / GRADING_FAILED
            if failed.exists():
                row.notes.append("GRADING FAILED (re-grade after fixing): "
                                 + failure.explain(failed.read_text()))
            row.notes += handin_report.notes_for(root, student)
            try:
                sub = gb.find_submission(ASSIGNMENT, student)
            except Exception:  # noqa: BLE001 - no submission: a row of zeros, said so
                row.notes.append("no submission")
                row.missing = list(notebooks)  # every notebook "—", out of its full points
                row.scores = {nb.name: (0.0, nb.max_score) for nb in assignment.notebooks}
                rows.append(row)
                continue
            for nb in sub.notebooks:
                score, maximum = 0.0, 0.0
                summary = _read_summary(root, student, nb.name)
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
    for row in rows:
        choose_track(row, notebooks)
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
            if nb in row.off_track:
                cells.append("·".rjust(10))
                continue
            tot, mx = tot + s, mx + m
            cells.append(("—" if nb in row.missing else f"{s:g}/{m:g}").rjust(10))
        notes = [f"track: {row.track}"] if row.track else []
        notes += row.notes
        if row.manual:
            notes.append(f"to grade by hand: {', '.join(row.manual)}")
        if row.hand_graded:
            notes.append(f"graded by hand: {', '.join(row.hand_graded)}")
        if row.not_measured:
            notes.append(f"{len(row.not_measured)} GPU check(s) not measured (no GPU): "
                         + ", ".join(row.not_measured))
        if row.differs:
            notes.append("the notebook's own verdict differed for "
                         + ", ".join(f"{k} ({v})" for k, v in row.differs.items()))
        lines.append(f"{row.student:<28}" + "".join(cells) + f"{tot:g}/{mx:g}".rjust(12) + "  "
                     + "; ".join(notes))
    reasons = [f"  {row.student} {key}: {why}" for row in rows for key, why in row.lost.items()]
    if reasons:
        lines += ["", "Why points were lost (the grader's message for every failed test):",
                  *reasons]
    lines.append("")
    lines.append(f"sandbox: {sandbox.sandbox_status()}")
    lines.append("— = notebook not handed in (scored 0). · = the other track's notebook "
                 "(2/3 in Numba, 2c/3c in CUDA C): not counted. 'not measured' checks are "
                 "excluded from the maximum; grade them on a GPU machine with `make grade`.")
    return "\n".join(lines)


def workers() -> int:
    """Students graded at once on this machine (``COURSE_GRADING_WORKERS``).

    Default: CPU cores, at most 4, without a GPU; half the cores with one — the notebooks run
    on the simulator (CPU work), and speedup timings queue for the GPU one at a time behind
    :mod:`course.runtime.gpulock`, so students no longer need to wait for each other.
    """
    from course.runtime.backend import driver_gpu_count

    if os.environ.get("COURSE_GRADING_WORKERS"):
        value = os.environ["COURSE_GRADING_WORKERS"]
        if not value.isdigit() or int(value) < 1:
            raise SystemExit(f"COURSE_GRADING_WORKERS must be a whole number ≥ 1, got {value!r}")
        return int(value)
    cores = os.cpu_count() or 1
    return max(1, cores // 2) if driver_gpu_count()[0] else min(4, cores)


def autograde_all(root: Path, engine: engines.Engine | None = None,
                  students: list[str] | None = None) -> str | None:
    """Autograde the submitted students with ``engine``, then feedback and ``grades.csv``.

    Prints a progress bar and a line per student as they finish. Returns the engine's error
    message when some students could not be graded (the rest still get feedback and their
    export), else None.
    """
    engine = engine or engines.LocalEngine(workers())
    everyone = sorted(p.name for p in (root / "submitted").iterdir() if p.is_dir())
    students = everyone if students is None else students
    unknown = sorted(set(students) - set(everyone))
    if unknown:
        raise SystemExit(f"not in submitted/: {', '.join(unknown)}")
    how = (f"{engine.workers} at a time" if isinstance(engine, engines.LocalEngine)
           else f"engine {engine.name}")
    print(f"$ nbgrader autograde {ASSIGNMENT} --student <each of {len(students)}> ({how})",
          flush=True)
    error = None
    with progress.Progress(len(students)) as bar:
        try:
            if students:
                engine.grade(root, students, bar.done)
        except engines.GradingError as exc:
            error = str(exc)
    if not nbgrader("generate_feedback", ASSIGNMENT, "--force", root=root, check=False):
        # no student graded at all: the table still says why for each
        print("  no feedback written: "
              + failure.explain(LAST_FAILURE.get(("generate_feedback", ASSIGNMENT, "--force"),
                                                 "")), flush=True)
    ready.alias_feedback(root)  # a renamed notebook's feedback under its handed-in name too
    nbgrader("export", root=root)
    return error


def reset_grading_state(root: Path) -> None:
    for name in ("autograded", "feedback", engines.SLURM_DIR, "downloaded", "set_aside"):
        shutil.rmtree(root / name, ignore_errors=True)
    for name in ("gradebook.db", "grades.csv", ".nbgrader.log", handin_report.CSV_NAME):
        (root / name).unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.harness", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["release", "demo", "grade", "table", "collect"])
    parser.add_argument("--root", type=Path, default=ROOT, help="course directory")
    parser.add_argument("--json", type=Path, help="also write the table as JSON here")
    parser.add_argument("--students", help="only these students, comma-separated (demo: sample "
                        "students; grade: students in submitted/); default: everyone")
    parser.add_argument("--class", dest="sample_class", choices=samples.CLASSES,
                        default=os.environ.get("COURSE_SAMPLE_CLASS", "core"),
                        help="demo: the demo class (one student of every kind, a few minutes "
                        "on 2 cores), the core class (every kind, all the correct answers in "
                        "other styles: what CI checks) or the full one (every sample student); "
                        "default: COURSE_SAMPLE_CLASS, else core")
    parser.add_argument("--engine", choices=["local", "slurm"],
                        default=os.environ.get("COURSE_GRADING_ENGINE", "local"),
                        help="where to autograde: this machine, or a Slurm job array "
                        "(see autograder/engines.py)")
    parser.add_argument("--workers", type=int, help="local: students at once (default: "
                        "COURSE_GRADING_WORKERS, else see harness.workers)")
    parser.add_argument("--per-task", type=int, default=8,
                        help="slurm: students per array task (default 8)")
    parser.add_argument("--sbatch-args", default="",
                        help="slurm: extra sbatch options, e.g. \"--partition=gpu --gres=gpu:1 "
                        "--time=02:00:00\" (default: COURSE_SLURM_ARGS)")
    parser.add_argument("--fresh", action="store_true",
                        help="slurm: forget an unfinished run and grade every shard again")
    handin_collect.add_arguments(parser)
    args = parser.parse_args(argv)
    if args.command == "collect":  # before chdir: paths are relative to where it was typed
        return handin_collect.from_arguments(args, nbgrader)
    root = args.root.resolve()
    os.chdir(root)
    if args.command in ("release", "demo"):
        if args.command == "demo":
            reset_grading_state(root)
        warning = release.placeholder_warning() if args.command == "release" else None
        if warning:
            print(warning, file=sys.stderr, flush=True)
        build_release(root, sync=args.command == "release")
        if warning:
            print(f"release/{ASSIGNMENT} was built, but students on Colab cannot install the "
                  "course package from the placeholder URL (see above).", file=sys.stderr)
    only = args.students.split(",") if args.students else None
    if args.command == "demo":
        which = "the students asked for" if only else f"the {args.sample_class} sample class"
        students = stage_samples(root, only or samples.class_members(args.sample_class))
        print(f"staged {len(students)} of {len(samples.class_members('full'))} sample "
              f"submissions in submitted/ ({which}; `make demo-full` grades everyone)",
              flush=True)
    error = None
    if args.command in ("demo", "grade"):
        graded = ready.ready_to_grade(root, nbgrader, only if args.command == "grade" else None)
        engine = engines.make_engine(args.engine, workers=args.workers or workers(),
                                     per_task=args.per_task, sbatch_args=args.sbatch_args,
                                     fresh=args.fresh)
        error = autograde_all(root, engine, graded)
    if args.command == "table":  # hand grades given since the last grading reach grades.csv
        nbgrader("export", root=root, quiet=True)
    if args.command in ("demo", "grade", "table"):
        notebooks, rows = collect(root)
        print(render(notebooks, rows))
        print()
        print(progress.summary(notebooks, rows))
        if args.json:
            args.json.write_text(json.dumps(
                {r.student: {"scores": r.scores, "not_measured": r.not_measured,
                             "manual": r.manual, "hand_graded": r.hand_graded,
                             "missing": r.missing, "failed": r.failed, "notes": r.notes,
                             "lost": r.lost, "differs": r.differs,
                             "track": r.track, "off_track": r.off_track}
                 for r in rows}, indent=1))
    if error:
        print(f"\nERROR: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
