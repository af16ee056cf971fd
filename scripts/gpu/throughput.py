"""Grading throughput on one GPU machine: seconds per student, serial vs parallel.

    python3 scripts/gpu/throughput.py --full-serial 1 --full-parallel 8 --out throughput.md

Builds the release once in a scratch course directory, then grades two copies of it with
``python -m autograder grade`` (exactly what ``make grade`` runs):

* **serial**: ``--full-serial`` replicas of the sample student ``ada_correct`` (every notebook,
  all correct: a full submission) plus one replica of each ``--checks`` student, one student
  at a time (``--workers 1``: the old way on a GPU machine);
* **parallel**: ``--full-parallel`` replicas of ``ada_correct`` plus the ``--checks`` students,
  ``--workers`` at a time (default: the harness's, 1.25 per core on a GPU machine), speedup
  timings queueing for the GPU behind :mod:`course.runtime.gpulock`.

It prints each student's line as it finishes and, per phase, the wall time (autograde,
feedback and export), wall ÷ students, the mean of the full submissions' own lines, and the
projected time for 100 full submissions — serial: 100 × a full submission's own seconds;
parallel: wall ÷ full replicas × 100 (the ``--checks`` students and the feedback are counted as
overhead, so it errs long) —, the **CPU seconds per full submission** (the CPU of the grade
command's whole process tree, ``scripts/gpu/grading_cost.py``, ÷ full replicas, overhead
included alike) with the minutes 100 such take when every core is busy (a floor), and checks the
verdicts: every replica scores what its sample student is expected to score on a GPU
(``EXPECTED_GPU``), and the measured speedup ratios of the serial and parallel phases are
listed side by side (the lock must keep them undisturbed). Exit code 1 when a verdict differs.

The report (``--out``) is rewritten after each phase, so a run cut short keeps what it measured.
The last phase's numbers are appended to ``docs/grading-history.md`` (``--history``,
``--no-history``; on a GPU box ``session.sh`` copies the file to ``$OUT``).
Without a GPU it says so and stops, unless ``--allow-simulator`` (a plumbing check on a CPU
machine: no speedups are measured there, so choose cheap ``--full`` students).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import ROOT, build_scratch_release, versions  # first: the shared setup
from grading_cost import (
    HISTORY,
    append_history,
    become_subreaper,
    history_row,
    measure,
    per_100_minutes,
)

import sample_class as samples
from autograder.runner.names import ASSIGNMENT

LINE = re.compile(r"^(\S+)\s+(\d+) notebooks? graded\s+(\S+)/(\S+)\s+(\d+) s")
RATIO = re.compile(r"(\d+(?:\.\d+)?)× the speed of")
SPEEDUP_CELL = ("03_tiled_gemm", "tiled_gemm_speedup")
TARGET = 100


def replica_id(base: str, i: int) -> str:
    return f"{base}_r{i:03d}"


def stage(root: Path, full: str, n_full: int, checks: list[str]) -> dict[str, str]:
    """Write the replicas' submissions under ``root/submitted``; return replica → sample id."""
    everyone = samples.sample_students()
    wanted = [(replica_id(full, i), full) for i in range(1, n_full + 1)]
    wanted += [(replica_id(c, 1), c) for c in checks]
    released = sorted(p.stem for p in (root / "release" / ASSIGNMENT).glob("*.ipynb"))
    for rid, base in wanted:
        if base not in everyone:
            raise SystemExit(f"no sample student called {base}")
        spec = everyone[base]
        folder = root / "submitted" / rid / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        for nb in released if spec.NOTEBOOKS == "all" else spec.NOTEBOOKS:
            (folder / f"{nb}.ipynb").write_text(
                json.dumps(samples.build_notebook(root, nb, spec), indent=1))
    return dict(wanted)


def parse_lines(stdout: str) -> dict[str, float]:
    """Seconds per student from the harness's progress lines."""
    out = {}
    for line in stdout.splitlines():
        m = LINE.match(line)
        if m:
            out[m.group(1)] = float(m.group(5))
    return out


def speedup_ratios(root: Path, students: list[str]) -> dict[str, tuple[str, float | None]]:
    """(verdict, ratio) of the speedup test cell of each student, read from the autograded
    notebook: what the trusted re-check printed or raised."""
    notebook, grade_id = SPEEDUP_CELL
    out = {}
    for student in students:
        path = root / "autograded" / student / ASSIGNMENT / f"{notebook}.ipynb"
        if not path.exists():
            continue
        for cell in json.loads(path.read_text())["cells"]:
            if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") != grade_id:
                continue
            text, verdict = "", "pass"
            for o in cell.get("outputs", []):
                if o.get("output_type") == "error":
                    verdict = "not measured" if o.get("ename") == "NotMeasured" else "fail"
                    text += o.get("evalue", "")
                else:
                    raw = o.get("text", "")
                    text += "".join(raw) if isinstance(raw, list) else raw
            m = RATIO.search(text)
            out[student] = (verdict, float(m.group(1)) if m else None)
    return out


def speedup_seconds(root: Path, students: list[str]) -> dict[str, float]:
    """Seconds each student's speedup check took in the trusted re-check, queueing for the GPU
    included (``seconds`` of the cell in ``<notebook>.trusted.json``): what a hung kernel
    graded at the same time would make the others wait."""
    notebook, grade_id = SPEEDUP_CELL
    out = {}
    for student in students:
        path = root / "autograded" / student / ASSIGNMENT / f"{notebook}.trusted.json"
        if path.exists():
            cell = json.loads(path.read_text())["cells"].get(grade_id) or {}
            if cell.get("seconds") is not None:
                out[student] = float(cell["seconds"])
    return out


def verdict_problems(table: dict, bases: dict[str, str], gpu: bool) -> list[str]:
    """Replicas whose scores differ from their sample student's expected scores."""
    expected = samples.expected_scores(gpu=gpu)
    problems = []
    for rid, base in sorted(bases.items()):
        got = table.get(rid)
        if got is None:
            problems.append(f"{rid}: missing from the grade table")
            continue
        for nb, points in expected[base].items():
            score = got["scores"].get(nb, [0.0, 0.0])[0]
            if abs(score - points) > 1e-9:
                problems.append(f"{rid} {nb}: got {score:g}, expected {points:g}")
    return problems


def projected(wall_s: float, n_full: int, target: int = TARGET) -> float:
    """Seconds for ``target`` full submissions at the measured parallel throughput."""
    if n_full < 1:
        raise ValueError("no full submissions to project from")
    return wall_s / n_full * target


def holds_summary(lock_dir: Path) -> str:
    """The exclusive holds of the GPU locks logged under ``lock_dir`` (course.runtime.gpulock's
    LOG_ENV; one lock folder per GPU): how many, how long they held a GPU and how long they
    waited for it."""
    from course.runtime.gpulock import HOLDS_LOG

    rows = []
    logs = sorted(lock_dir.glob(f"*/{HOLDS_LOG}"))
    for path in logs:
        for line in path.read_text().splitlines():
            with contextlib.suppress(ValueError):
                waited, held = (float(x) for x in line.split())
                rows.append((waited, held))
    if not rows:
        return "no exclusive holds logged"
    waited, held = [r[0] for r in rows], [r[1] for r in rows]
    return (f"{len(rows)} exclusive holds (speedup timings) on {len(logs)} GPU(s): "
            f"held {sum(held):.0f} s in all, "
            f"each {statistics.median(held):.2f} s median, {max(held):.2f} s longest; waited "
            f"{statistics.median(waited):.1f} s median, {max(waited):.1f} s longest")


def grade(root: Path, workers: int, log: Path, lock_dir: Path, stagger: bool = True
          ) -> tuple[float, dict, str, float]:
    """Run `harness grade` with its own GPU lock in ``lock_dir`` (each exclusive hold logged);
    stream its lines; return (wall s, table JSON, stdout, CPU s of its process tree).
    ``stagger`` False: every slot runs its notebooks in name order (autograder.runner.order)."""
    from autograder.runner.order import STAGGER_ENV
    from course.runtime.gpulock import LOCK_ENV, LOG_ENV

    table = root / "table.json"
    cmd = [sys.executable, "-m", "autograder", "grade", "--root", str(root),
           "--workers", str(workers), "--json", str(table)]
    shutil.rmtree(lock_dir, ignore_errors=True)

    def show(line: str) -> None:
        if LINE.match(line):
            print("  " + line, flush=True)

    run = measure("grade", cmd, cwd=Path.cwd(), on_line=show,
                  env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                      filter(None, [os.environ.get("PYTHONPATH"), str(ROOT)])),
                      **{LOCK_ENV: str(lock_dir), LOG_ENV: "1",
                         STAGGER_ENV: "1" if stagger else "0"}))
    log.write_text(run.output)
    if run.returncode != 0 or not table.exists():
        raise SystemExit(f"harness grade failed ({run.returncode}); log: {log}\n"
                         + run.output[-3000:])
    return run.wall_s, json.loads(table.read_text()), run.output, run.cpu_s


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", default="ada_correct",
                        help="the sample student replicated as a full submission")
    parser.add_argument("--full-serial", type=int, default=1)
    parser.add_argument("--full-parallel", type=int, default=8)
    parser.add_argument("--checks", default="ivy_global_inner_loop",
                        help="sample students graded once per phase for their verdicts "
                        "(comma-separated; '' for none)")
    parser.add_argument("--workers", type=int, help="parallel phase: students at once "
                        "(default: the harness's, 1.25 per core on a GPU machine)")
    parser.add_argument("--skip-serial", action="store_true")
    parser.add_argument("--out", type=Path, help="write the markdown report here")
    parser.add_argument("--keep", type=Path, help="keep the scratch courses in this folder")
    parser.add_argument("--allow-simulator", action="store_true",
                        help="run without a GPU (plumbing check only)")
    parser.add_argument("--history", type=Path, default=None,
                        help="append the last phase's numbers here (default: "
                        "docs/grading-history.md)")
    parser.add_argument("--no-history", action="store_true", help="append no history row")
    parser.add_argument("--no-stagger", action="store_true",
                        help="every slot runs its notebooks in name order, as before the "
                        "staggered order (autograder/runner/order.py): for measuring it")
    args = parser.parse_args(argv)

    from autograder.engines.local import workers as default_workers
    from course.runtime.backend import driver_gpu_count

    gpus, why = driver_gpu_count()
    if not gpus and not args.allow_simulator:
        print(f"needs a GPU: {why}")
        return 0
    checks = [c for c in args.checks.split(",") if c]
    parallel_workers = args.workers or default_workers()
    become_subreaper()  # the grade command's orphans are reaped here, their CPU counted
    cores = os.cpu_count() or 1
    scratch = Path(args.keep or tempfile.mkdtemp(prefix="week4-throughput-"))
    scratch.mkdir(parents=True, exist_ok=True)
    base = scratch / "release"
    started = time.monotonic()
    built = build_scratch_release(base)
    if built.returncode:
        log = base / ".nbgrader.log"
        tail = log.read_text(errors="replace")[-6000:] if log.is_file() else "(no log)"
        print(f"building the release failed (exit {built.returncode}):\n{built.stdout[-3000:]}"
              f"\n{built.stderr[-3000:]}\n--- {log}:\n{tail}", flush=True)
        return 1
    print(f"release built in {time.monotonic() - started:.0f} s; {os.cpu_count()} cores, "
          f"{gpus} GPU(s); parallel phase: {parallel_workers} at a time", flush=True)

    command = ("python3 scripts/gpu/throughput.py "
               + ("--skip-serial " if args.skip_serial else f"--full-serial {args.full_serial} ")
               + f"--full-parallel {args.full_parallel} --checks '{args.checks}'"
               + (f" --workers {args.workers}" if args.workers else "")
               + (" --no-stagger" if args.no_stagger else ""))
    report = [f"# Grading throughput, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
              "", f"- Versions: {versions()}", f"- Machine: {os.cpu_count()} cores, {gpus} GPU(s)",
              f"- Command: `{command}`", "",
              "| phase | workers | students (full + checks) | wall s | wall ÷ students | "
              f"s per full submission (its line) | projected for {TARGET} full | "
              f"CPU-s per full submission | {TARGET} full, every core busy |",
              "|---|---|---|---|---|---|---|---|---|"]
    ratios: dict[str, dict[str, tuple[str, float | None]]] = {}
    waits: dict[str, dict[str, float]] = {}
    holds: dict[str, str] = {}  # the GPU lock's exclusive holds, per phase
    problems: list[str] = []
    phases = [] if args.skip_serial else [("serial", 1, args.full_serial)]
    phases.append(("parallel", parallel_workers, args.full_parallel))
    for name, workers, n_full in phases:
        root = scratch / name
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(base, root)
        bases = stage(root, args.full, n_full, checks)
        print(f"== {name}: {len(bases)} students, {workers} at a time", flush=True)
        lock_dir = scratch / f"gpu-lock-{name}"
        wall, table, stdout, cpu = grade(root, workers, scratch / f"{name}.log", lock_dir,
                                         stagger=not args.no_stagger)
        cpu_full = cpu / n_full  # the check students, feedback and export as overhead
        floor = per_100_minutes(cpu_full, cores, TARGET)
        seconds = parse_lines(stdout)
        full = [seconds[s] for s, b in bases.items() if b == args.full and s in seconds]
        own = statistics.mean(full) if full else float("nan")
        # serial: 100 one after another, each as long as its own line; parallel: at the rate
        # measured (wall ÷ full submissions, the check students counted as overhead).
        projection = projected(wall, n_full) if name == "parallel" else own * TARGET
        report.append(f"| {name} | {workers} | {n_full} + {len(checks)} | {wall:.0f} | "
                      f"{wall / len(bases):.1f} | {own:.1f} | {projection / 60:.1f} min | "
                      f"{cpu_full:.1f} | {floor:.1f} min |")
        print(f"{name}: wall {wall:.0f} s for {len(bases)} students ({wall / len(bases):.1f} s "
              f"each), a full submission {own:.1f} s; projected {TARGET} full submissions: "
              f"{projection / 60:.1f} min", flush=True)
        print(f"{name}: {cpu:.0f} CPU-s for the grade command ({cores} cores); per full "
              f"submission {cpu_full:.1f} CPU-s (the check students, feedback and export "
              f"included); {TARGET} full submissions at every core busy: {floor:.1f} min",
              flush=True)
        last = (name, workers, cpu_full, projection, floor)
        holds[name] = holds_summary(lock_dir)
        print(f"{name}: {holds[name]}", flush=True)
        phase_problems = verdict_problems(table, bases, gpu=bool(gpus))
        problems += [f"{name}: {p}" for p in phase_problems]
        ratios[name] = speedup_ratios(root, sorted(bases))
        waits[name] = speedup_seconds(root, sorted(bases))
        _write(args.out, report + [""] + [f"- GPU lock, {k}: {v}" for k, v in holds.items()],
                   ratios, bases, problems, waits)
    _write(args.out, report + [""] + [f"- GPU lock, {k}: {v}" for k, v in holds.items()],
                   ratios, bases, problems, waits)
    if not args.no_history:
        name, workers, cpu_full, projection, floor = last
        row = history_row(command, cpu_full, projection / 60,
                          f"throughput, {name} phase, {workers} at a time: min per 100 = wall "
                          f"÷ full × 100 (every core busy: {floor:.1f}); "
                          + ("every verdict as expected" if not problems
                             else f"{len(problems)} verdict(s) differ"))
        print(f"history: a row appended to {append_history(row, args.history or HISTORY)}")
    print("\n".join(problems) or "verdicts: every replica scored as its sample student "
          "is expected to")
    for name, got in ratios.items():
        summary = ", ".join(f"{s} {v} {r if r is not None else '—'}" for s, (v, r) in
                            sorted(got.items()))
        print(f"speedup ({name}): {summary}")
        if waits.get(name):
            slowest = max(waits[name].items(), key=lambda kv: kv[1])
            print(f"speedup check seconds ({name}, GPU queue included): " + ", ".join(
                f"{s} {v:.0f}" for s, v in sorted(waits[name].items()))
                + f"; longest {slowest[0]} {slowest[1]:.0f} s")
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    return 1 if problems else 0


def _write(out: Path | None, report: list[str], ratios: dict, bases: dict[str, str],
           problems: list[str], waits: dict[str, dict[str, float]]) -> None:
    if out is None:
        return
    lines = list(report) + ["", "## Speedup verdicts (test cell `tiled_gemm_speedup`; the "
                            "check's seconds, GPU queue included)", "",
                            "| student | sample | " + " | ".join(ratios) + " |",
                            "|---|---|" + "---|" * len(ratios)]
    for student in sorted({s for got in ratios.values() for s in got}):
        cells = []
        for name, got in ratios.items():
            verdict, ratio = got.get(student, ("—", None))
            wait = waits.get(name, {}).get(student)
            cells.append((f"{verdict} {ratio:.2f}×" if ratio is not None else verdict)
                         + (f", {wait:.0f} s" if wait is not None else ""))
        lines.append(f"| {student} | {bases.get(student, '')} | " + " | ".join(cells) + " |")
    lines += ["", "## Scores", "", "\n".join(problems) if problems else
              "Every replica scored exactly what its sample student is expected to score."]
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    raise SystemExit(main())
