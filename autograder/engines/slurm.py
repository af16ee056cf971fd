"""Grading as a Slurm job array (``--engine slurm``).

The class is cut into shards of ``per_task`` students; each array task copies the course
(config, source, release, a snapshot of the gradebook, its students' submissions) into
``slurm-grading/shards/<i>/course``, grades it there with the local engine
(:mod:`autograder.engines.local`), and marks the shard done. The launcher then merges each
finished shard into the course gradebook through nbgrader's :class:`~nbgrader.api.Gradebook` API
(SQLite is not safe for writers on many machines, so no task writes the course gradebook) and
copies its ``autograded/`` folders over. A shard that failed is left unmerged; running the same
command again submits only the shards that are not done. Needs a filesystem shared by the nodes
(the course directory and the Python environment at the same paths), as on any cluster's home or
project space.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from autograder.engines.local import GradingError, LocalEngine, OnDone, workers
from autograder.engines.progress import StudentResult
from autograder.release.translation import LANGUAGES
from autograder.runner.names import ASSIGNMENT

SLURM_DIR = "slurm-grading"


def _alembic_on_path() -> None:
    """nbgrader's Gradebook runs `alembic` (migrations) from PATH: make it this environment's."""
    bindir = str(Path(sys.executable).parent)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([bindir, os.environ.get("PATH", "")])


def merge_gradebook(source_db: Path, target_db: Path, students: Sequence[str]) -> None:
    """Copy these students' submissions of the assignment from one gradebook into another.

    Autograder results (scores, comments, flags, timestamps) come from ``source_db``; hand
    grades already in ``target_db`` (manual score, manual comment, extra credit) are kept.
    """
    from nbgrader.api import Gradebook

    _alembic_on_path()
    with Gradebook(f"sqlite:///{source_db}") as src, Gradebook(f"sqlite:///{target_db}") as dst:
        for student in students:
            who = src.find_student(student)
            dst.update_or_create_student(student, first_name=who.first_name,
                                         last_name=who.last_name, email=who.email,
                                         lms_user_id=who.lms_user_id)
            sub = src.find_submission(ASSIGNMENT, student)
            kwargs = {"extension": sub.extension}
            if sub.timestamp is not None:
                kwargs["timestamp"] = sub.timestamp
            target = dst.update_or_create_submission(ASSIGNMENT, student, **kwargs)
            by_name = {nb.name: nb for nb in target.notebooks}
            for nb in sub.notebooks:
                tnb = by_name[nb.name]
                tnb.flagged = nb.flagged
                tnb.late_submission_penalty = nb.late_submission_penalty
                grades = {g.name: g for g in tnb.grades}
                for g in nb.grades:
                    t = grades[g.name]
                    t.auto_score, t.needs_manual_grade = g.auto_score, g.needs_manual_grade
                    if t.manual_score is None:
                        t.manual_score, t.extra_credit = g.manual_score, g.extra_credit
                comments = {c.name: c for c in tnb.comments}
                for c in nb.comments:
                    t = comments[c.name]
                    t.auto_comment = c.auto_comment
                    if t.manual_comment is None:
                        t.manual_comment = c.manual_comment
            dst.db.commit()


#: how a cluster asks for GPUs per array task (COURSE_SLURM_GPU_FLAG), with N filled in
GPU_FLAGS = {"gres": "--gres=gpu:{n}", "gpus-per-task": "--gpus-per-task={n}"}
_GPU_OPTIONS = ("--gres", "--gpus", "--gpus-per-task", "--gpus-per-node", "-G")


def gpu_request(gpus_per_task: int, sbatch_args: Sequence[str], flag: str = "gres") -> list[str]:
    """The sbatch option that asks for ``gpus_per_task`` GPUs per array task, in the spelling
    ``flag`` names; none for 0. Each task's grading slots then spread over the GPUs Slurm gives
    it (``CUDA_VISIBLE_DEVICES``, :mod:`autograder.engines.gpus`). Asking twice — here and in
    the instructor's own sbatch options — is refused rather than guessed between."""
    if gpus_per_task < 0:
        raise GradingError(f"--gpus-per-task must be 0 or more, got {gpus_per_task}")
    if gpus_per_task == 0:
        return []
    if flag not in GPU_FLAGS:
        raise GradingError(f"COURSE_SLURM_GPU_FLAG must be {' or '.join(GPU_FLAGS)}; got {flag!r}")
    asked = [a for a in sbatch_args if a.split("=", 1)[0] in _GPU_OPTIONS]
    if asked:
        raise GradingError(f"GPUs are asked for twice: --gpus-per-task {gpus_per_task} and "
                           f"{' '.join(asked)} in the sbatch options; keep one")
    return [GPU_FLAGS[flag].format(n=gpus_per_task)]


def _shards(students: Sequence[str], per_task: int) -> list[list[str]]:
    ordered = sorted(students)
    return [ordered[i:i + per_task] for i in range(0, len(ordered), per_task)]


class SlurmEngine:
    """Shards of the class as a Slurm job array; merged into the course gradebook after."""

    name = "slurm"

    def __init__(self, *, per_task: int = 8, sbatch_args: Sequence[str] = (),
                 fresh: bool = False, poll_s: float = 2.0, task_workers: int | None = None
                 ) -> None:
        if per_task < 1:
            raise ValueError(f"students per task must be at least 1, got {per_task}")
        self.per_task = per_task
        self.sbatch_args = list(sbatch_args)
        self.fresh = fresh
        self.poll_s = poll_s
        self.task_workers = task_workers
        self.with_feedback: set[str] = set()  # feedback comes after the merge, for the class

    # -- the plan: which student is in which shard, kept until every shard is merged ---------

    def _plan(self, root: Path, students: Sequence[str]) -> tuple[Path, dict]:
        run = root / SLURM_DIR
        plan_path = run / "plan.json"
        if plan_path.exists() and not self.fresh:
            plan = json.loads(plan_path.read_text())
            if not plan.get("complete"):
                planned = sorted(s for shard in plan["shards"] for s in shard)
                if planned != sorted(students):
                    added = sorted(set(students) - set(planned))
                    gone = sorted(set(planned) - set(students))
                    raise GradingError(
                        f"{plan_path} is an unfinished run for other students (new: "
                        f"{', '.join(added) or 'none'}; gone: {', '.join(gone) or 'none'}). "
                        "Run again with --fresh to start over.")
                return run, plan
        if run.exists():
            if plan_path.exists():
                old = json.loads(plan_path.read_text())
                if old.get("job") and not old.get("complete") and _job_alive(old["job"]):
                    raise GradingError(f"Slurm job {old['job']} of the last run is still "
                                       f"running; wait for it or `scancel {old['job']}` first")
            shutil.rmtree(run)
        (run / "logs").mkdir(parents=True)
        shutil.copy2(root / "gradebook.db", run / "base.db")
        plan = {"root": str(root), "shards": _shards(students, self.per_task), "job": None,
                "merged": [], "complete": False, "task_workers": self.task_workers}
        plan_path.write_text(json.dumps(plan, indent=1))
        return run, plan

    @staticmethod
    def _save(run: Path, plan: dict) -> None:
        tmp = run / "plan.json.tmp"
        tmp.write_text(json.dumps(plan, indent=1))
        tmp.replace(run / "plan.json")

    # -- submit, wait, merge ---------------------------------------------------------------

    def _submit(self, run: Path, indices: list[int]) -> str:
        script = run / "task.sh"
        script.write_text(
            "#!/bin/bash\n"
            "# One shard of the class: python -m autograder.engines shard RUN INDEX\n"
            f"exec {shlex.quote(sys.executable)} -m autograder.engines shard "
            f"{shlex.quote(str(run))} \"$SLURM_ARRAY_TASK_ID\"\n")
        cmd = ["sbatch", "--parsable", "--job-name=week4-grade",
               f"--array={','.join(map(str, indices))}",
               f"--output={run / 'logs' / 'shard-%a.out'}", f"--chdir={run}",
               *self.sbatch_args, str(script)]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise GradingError(f"sbatch failed ({' '.join(cmd)}): "
                               f"{(proc.stderr or proc.stdout).strip()}")
        return proc.stdout.strip().split(";")[0]

    def grade(self, root: Path, students: Sequence[str], on_done: OnDone) -> None:
        run, plan = self._plan(root, students)
        shards = plan["shards"]
        todo = [i for i in range(len(shards)) if not _done(run, i)]
        seen: set[str] = set()
        for i in range(len(shards)):  # resumed: what finished before counts as finished
            if i not in todo:
                for result in _results(run, i):
                    seen.add(result.student)
                    on_done(result)
        if todo:
            job = plan.get("job") if plan.get("job") and _job_alive(plan["job"]) else None
            if job is None:
                job = self._submit(run, todo)
                plan["job"] = job
                self._save(run, plan)
                print(f"submitted Slurm job array {job}: shard(s) {_ranges(todo)} of "
                      f"{len(shards)}, {self.per_task} student(s) each; logs in {run / 'logs'}",
                      flush=True)
            else:
                print(f"waiting for Slurm job {job} of the last run", flush=True)
            try:
                self._wait(run, job, todo, seen, on_done)
            except KeyboardInterrupt:
                subprocess.run(["scancel", job], capture_output=True)
                raise
        failed = [i for i in todo if not _done(run, i)]
        for i in range(len(shards)):
            if i in plan["merged"] or i in failed:
                continue
            self._merge(root, run, i, shards[i])
            plan["merged"].append(i)
            self._save(run, plan)
        if failed:
            names = [s for i in failed for s in shards[i]]
            logs = ", ".join(str(run / "logs" / f"shard-{i}.out") for i in failed)
            raise GradingError(
                f"{len(failed)} shard(s) failed ({', '.join(names)}); the other "
                f"{len(shards) - len(failed)} are merged into the gradebook. Logs: {logs}. "
                "Run the same command again to grade only the failed shards.")
        plan["complete"] = True
        self._save(run, plan)
        shutil.rmtree(run / "shards", ignore_errors=True)

    def _wait(self, run: Path, job: str, todo: list[int], seen: set[str],
              on_done: OnDone) -> None:
        misses = 0
        while True:
            for i in todo:
                for result in _results(run, i):
                    if result.student not in seen:
                        seen.add(result.student)
                        on_done(result)
            proc = subprocess.run(["squeue", "--noheader", "--jobs", job, "--format=%i"],
                                  capture_output=True, text=True)
            if proc.returncode == 0 and not proc.stdout.strip():
                break
            if proc.returncode != 0:
                # squeue forgets a finished job after a while and then says "Invalid job id".
                if "Invalid job id" in proc.stderr:
                    break
                misses += 1
                if misses > 12:
                    raise GradingError(f"squeue keeps failing: {proc.stderr.strip()}; the job "
                                       f"{job} may still run — run the command again later")
            time.sleep(self.poll_s)
        for i in todo:  # the last lines of tasks that ended between two polls
            for result in _results(run, i):
                if result.student not in seen:
                    seen.add(result.student)
                    on_done(result)

    @staticmethod
    def _merge(root: Path, run: Path, index: int, students: list[str]) -> None:
        course = run / "shards" / str(index) / "course"
        merge_gradebook(course / "gradebook.db", root / "gradebook.db", students)
        for student in students:
            source = course / "autograded" / student
            target = root / "autograded" / student
            shutil.rmtree(target, ignore_errors=True)
            if source.exists():
                shutil.copytree(source, target)
        log = course / ".nbgrader.log"
        if log.exists():
            with open(root / ".nbgrader.log", "a") as fh:
                fh.write(f"# slurm shard {index}\n{log.read_text()}")


def _done(run: Path, index: int) -> bool:
    return (run / "shards" / str(index) / "done.json").exists()


def _results(run: Path, index: int) -> list[StudentResult]:
    path = run / "shards" / str(index) / "results.jsonl"
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(StudentResult.from_json(json.loads(line)))
        except (ValueError, TypeError):
            continue  # a line being written right now
    return out


def _job_alive(job: str) -> bool:
    proc = subprocess.run(["squeue", "--noheader", "--jobs", str(job), "--format=%i"],
                          capture_output=True, text=True)
    return proc.returncode == 0 and bool(proc.stdout.strip())


def _ranges(indices: list[int]) -> str:
    return ",".join(map(str, indices)) if len(indices) < 8 else f"{len(indices)} shards"


#: What ``nbgrader autograde`` reads from the course directory, so what a shard's copy holds
#: (besides the gradebook snapshot and the shard's submissions). The release is among them:
#: :class:`autograder.grading.restore.RestoreCells` puts deleted test cells back from it, and
#: without it a shard would grade such a student differently from the local engine.
COURSE_FILES = ("nbgrader_config.py", "source", f"release/{ASSIGNMENT}")
#: The translated releases, copied too where the course has them (a course may be English only):
#: a Korean notebook is restored from release-ko/week4.
TRANSLATED_RELEASES = tuple(f"release-{language}/{ASSIGNMENT}" for language in LANGUAGES)


def prepare_shard(run: Path, plan: dict, index: int) -> tuple[Path, list[str]]:
    """Build shard ``index`` of ``plan`` (``run``'s plan.json) in a fresh course copy; return
    the copy and the shard's students."""
    root = Path(plan["root"])
    students = plan["shards"][index]
    missing = [name for name in COURSE_FILES if not (root / name).exists()]
    if missing:
        raise GradingError(f"{root} has no {', '.join(missing)}: autograde needs them (build "
                           "the release with `python -m autograder release` first)")
    shard = run / "shards" / str(index)
    shutil.rmtree(shard, ignore_errors=True)  # a retried shard starts clean
    course = shard / "course"
    course.mkdir(parents=True)
    for name in (*COURSE_FILES, *(r for r in TRANSLATED_RELEASES if (root / r).is_dir())):
        if (root / name).is_dir():
            shutil.copytree(root / name, course / name)
        else:
            shutil.copy2(root / name, course / name)
    shutil.copy2(run / "base.db", course / "gradebook.db")
    for student in students:
        shutil.copytree(root / "submitted" / student, course / "submitted" / student)
    return course, students


def run_shard(run: Path, index: int) -> int:
    """Array task side: grade shard ``index`` of the plan in ``run`` in its own course copy."""
    plan = json.loads((run / "plan.json").read_text())
    root = Path(plan["root"])
    course, students = prepare_shard(run, plan, index)
    shard = course.parent
    # Student code must not see the instructor's course directory either, only its copy.
    hide = [p for p in os.environ.get("COURSE_SANDBOX_HIDE", "").split(os.pathsep) if p]
    os.environ["COURSE_SANDBOX_HIDE"] = os.pathsep.join([*hide, str(root), str(run)])
    results = shard / "results.jsonl"

    def on_done(result: StudentResult) -> None:
        print(result.line(), flush=True)
        with open(results, "a") as fh:
            fh.write(json.dumps(result.to_json()) + "\n")

    started = time.monotonic()
    LocalEngine(plan.get("task_workers") or workers()).grade(course, students, on_done)
    (shard / "done.json").write_text(json.dumps(
        {"students": students, "seconds": round(time.monotonic() - started, 1)}))
    return 0
