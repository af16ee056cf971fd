"""The trusted re-check's process: starting it in its sandbox, feeding it, watching it.

:mod:`autograder.grading.trusted` (the preprocessors) hands one notebook's jobs to :func:`run_jobs`,
which runs them in a sandboxed ``python -m autograder.grading.trusted_child``
(:mod:`autograder.grading.trusted_child` is that process's side) within the notebook's limits and
time, and never loses a verdict: a job that hangs, breaks a limit or kills the process fails
saying why, and the jobs after it run in a new process.

One process serves all the notebooks of one student (:class:`WarmChecker`, the ``session``):
it pays its imports (NumPy, Numba, the course: about 0.45 CPU-s here, more on a GPU machine)
once rather than once per notebook, and each test cell still gets a namespace of its own
holding only its rebuilt definitions. A process never serves two students and never outlives
its student's grading: it is stopped when the next student comes, when grading ends, and
whenever a check hangs, breaks a limit or kills it (the next notebook then gets a new one).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.grading.trusted_child import (
    HUNG_LAUNCH,
    READY_FILE,
    REPLAY_FILE,
    REQUEST_FILE,
    RESULTS_FILE,
)
from autograder.sandbox import bwrap as sandbox
from autograder.sandbox import gpulock as gpulock_setup
from autograder.sandbox import limits as limits_mod
from autograder.sandbox.warm import WarmOne
from course.runtime import i18n

#: Seconds a check process may take to start (imports), on top of any check's timeout.
STARTUP_S = 300.0
#: a re-check's recorded outcomes larger than this are not replayed (the kernel recomputes).
MAX_REPLAY_BYTES = 32 << 20


@dataclass
class WarmChecker:
    """One sandboxed ``python -m autograder.grading.trusted_child`` and the cgroups it runs in.

    It serves one student: :func:`run_jobs` keeps it between that student's notebooks (the
    ``session``), and stops it when the next student comes, when a check hangs or breaks a
    limit, or when the grader exits.
    """

    key: tuple
    proc: subprocess.Popen
    box: limits_mod.Box
    folder: tempfile.TemporaryDirectory
    requests: int = 0
    stderr: Any = field(default=None, repr=False)

    @classmethod
    def start(cls, key: tuple, *, env: dict[str, str], course_root: Path,
              extra_ro: tuple[Path, ...], lock_dir: Path,
              limits: limits_mod.Limits) -> WarmChecker:
        import autograder

        folder = tempfile.TemporaryDirectory(prefix="trusted-")
        box = limits_mod.Box.create(limits)
        try:
            command = sandbox.wrap(
                [sys.executable, "-m", "autograder.grading.trusted_child"],
                course_root=course_root, workdir=Path(folder.name), gpu=True, env=env, box=box,
                extra_ro=(Path(autograder.__file__).parent, *extra_ro), extra_rw=(lock_dir,))
            err = open(Path(folder.name, "stderr.txt"), "w")  # noqa: SIM115 - closed in close()
            proc = subprocess.Popen(command.launcher_argv(), env=command.env, cwd=folder.name,
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=err, text=True)
        except BaseException:
            box.remove()
            folder.cleanup()
            raise
        return cls(key, proc, box, folder, stderr=err)

    def ask(self, jobs: list[dict[str, Any]], env: dict[str, str]) -> Path:
        """Send one notebook's jobs; return the folder its verdicts will appear in."""
        self.requests += 1
        request = Path(self.folder.name, f"request-{self.requests}")
        request.mkdir()
        (request / REQUEST_FILE).write_text(json.dumps({"jobs": jobs, "env": env}))
        (request / RESULTS_FILE).touch()
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(f"{request}\n")
            self.proc.stdin.flush()
        except OSError:
            pass  # it died: the watch sees it and says so
        return request

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Let it finish (end of stdin), stop whatever is left, and remove its folder."""
        with contextlib.suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.box.kill()
            self.proc.kill()
            self.proc.wait()
        self.box.remove()
        if self.stderr is not None:
            self.stderr.close()
        self.folder.cleanup()


#: the warm checker of the student being graded in this process (at most one).
_WARM: WarmOne[WarmChecker] = WarmOne()
#: stop the warm checker, if any (the next student, the end of grading)
close_warm_checker = _WARM.close


def run_jobs(jobs: list[dict[str, Any]], *, course_root: Path, timeout_s: float,
             extra_env: dict[str, str] | None = None, extra_ro: tuple[Path, ...] = (),
             limits: limits_mod.Limits | None = None, notes: list[str] | None = None,
             language: str = i18n.DEFAULT, replay: list[str] | None = None,
             session: str | None = None) -> list[dict[str, Any]]:
    """Run jobs in a sandboxed child, within the notebook's limits; never lose a verdict.

    A job that exceeds ``timeout_s`` fails and the rest go on, sharing ``after_timeout``
    seconds from then on; jobs past that budget fail as "not run". A child that breaks a
    memory or process limit is stopped, and its job fails saying so. ``notes`` collects what
    the grade table should say, and the failures say why, in ``language`` (the notebook's);
    ``replay``, the checks' recorded outcomes (JSON lines, see :mod:`course.trust.replay`).
    With a ``session`` (one student's notebooks), the child stays for the session's next call
    (:class:`WarmChecker`); without one it is stopped when the jobs are done.
    """
    def _(message: str) -> str:
        return i18n.in_language(language, message)

    import autograder
    from course.runtime import gpulock

    limits = limits or limits_mod.Limits.from_env()
    notes = [] if notes is None else notes
    results: list[dict[str, Any]] = []
    extra_env = dict(extra_env or {})
    env = dict(os.environ, **extra_env)
    # The GPU lock: reachable in the checks' sandbox, never from the notebook kernel.
    lock_dir = gpulock_setup.lock_dir_for_children(course_root)
    env[gpulock.LOCK_ENV] = str(lock_dir)
    env["NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(
        [str(Path(autograder.__file__).parents[1]), *filter(None, [env.get("PYTHONPATH")])])
    # What a checker is started with; the language alone may change from notebook to notebook.
    key = (session, str(course_root), extra_ro, limits,
           tuple(sorted((k, v) for k, v in extra_env.items() if k != i18n.ENV)))

    def start() -> WarmChecker:
        return WarmChecker.start(key, env=env, course_root=course_root, extra_ro=extra_ro,
                                 lock_dir=lock_dir, limits=limits)

    budget: float | None = None  # seconds of checking left, once one check timed out
    while len(results) < len(jobs):
        todo = jobs[len(results):]
        if budget is not None and budget <= 0:
            notes.append(_("{count} check(s) not run: the notebook's time after a timeout "
                           "({seconds} s) was spent").format(
                count=len(todo), seconds=f"{limits.after_timeout:g}"))
            results += [{"grade_id": j["grade_id"], "status": "fail", "ename": "NotRun",
                         "evalue": _("not run: an earlier check timed out and the notebook's "
                                     "remaining time was spent"), "stdout": ""} for j in todo]
            break
        checker = _WARM.get(key, start) if session else start()
        lines: list[str] = []
        try:
            beat = Path(checker.folder.name, f"gpu-queue-{checker.requests + 1}.heartbeat")
            folder = checker.ask(todo, {**extra_env, gpulock.HEARTBEAT_ENV: str(beat)})
            lines, stopped, ran, used = _watch(checker.proc, checker.box,
                                               folder / RESULTS_FILE, len(todo), timeout_s,
                                               budget, beat)
            if budget is not None:
                budget -= used
            recorded = folder / REPLAY_FILE
            if replay is not None and recorded.exists() \
                    and recorded.stat().st_size <= MAX_REPLAY_BYTES:
                replay += recorded.read_text().splitlines()
            returncode = checker.proc.poll()
        finally:
            if not session or not checker.alive or len(lines) < len(todo):
                _WARM.stop(checker)
        got = [json.loads(line) for line in lines]
        results.extend(got)
        # A launch that outlived the GPU lock's limit: that check says so and its process
        # ended; the notebook's other checks go on in a new one (the loop), sharing a budget.
        hung = [r for r in got if r.get("ename") == HUNG_LAUNCH]
        if hung and budget is None:
            budget = limits.after_timeout
            notes.append(_("check {cell} was stopped: {reason}").format(
                cell=hung[0]["grade_id"], reason=hung[0]["evalue"]))
        if len(got) < len(todo) and not hung:  # the job in progress hung or killed the process
            stuck = todo[len(got)]
            if stopped == "timeout":
                if budget is None:
                    budget = limits.after_timeout
                    notes.append(_("check {cell} timed out after {seconds} s; the other "
                                   "checks of the notebook had {after} s").format(
                        cell=stuck["grade_id"], seconds=f"{timeout_s:.0f}",
                        after=f"{limits.after_timeout:g}"))
                ename, why = "Timeout", _(
                    "the check did not finish within {seconds} s (or the notebook's "
                    "remaining time): an endless loop, or a barrier that some threads "
                    "never reach?").format(seconds=f"{timeout_s:.0f}")
            elif stopped == "startup":
                ename, why = "Timeout", _(
                    "the check process did not start within {seconds} s (the grading "
                    "machine is overloaded?); grade this notebook again").format(
                        seconds=f"{STARTUP_S:.0f}")
                notes.append(why)
            elif stopped:
                ename = "LimitExceeded"
                why = _("the check was stopped: {reason}").format(reason=stopped)
                notes.append(_("check {cell} was stopped: {reason}").format(
                    cell=stuck["grade_id"], reason=stopped))
            else:
                ename = "ProcessDied"
                why = _("the check process died (exit code {code})").format(code=returncode)
            results.append({"grade_id": stuck["grade_id"], "status": "fail",
                            "ename": ename, "evalue": why, "stdout": "",
                            "seconds": round(ran, 2)})
    return results


def _watch(proc: subprocess.Popen, box: limits_mod.Box, results_path: Path, count: int,
           timeout_s: float, budget: float | None, beat: Path | None = None
           ) -> tuple[list[str], str | None, float, float]:
    """Wait for the child's verdicts on one request; return its result lines, why it was
    stopped (or None), how long the job in progress had run, and how long the child spent on
    jobs.

    The clocks start when the child starts the request (a new child: once its imports are
    done): a busy machine's slow start is not the student's time. Starting may take
    ``STARTUP_S`` (stopped: "startup"). Time spent queueing for the GPU (the child keeps
    ``beat`` fresh meanwhile) is not the student's either. A child that is stopped or dies
    is waited for; one that answered every job is left running for the next request.
    """
    from course.runtime import gpulock

    ready_file = results_path.with_name(READY_FILE)
    started = time.monotonic()
    done, last, ready, stopped = 0, started, None, None
    while True:
        lines = results_path.read_text().splitlines()
        now = time.monotonic()
        if ready is None and ready_file.exists():
            ready = last = now
        if len(lines) > done:
            done, last = len(lines), now
        if beat is not None and ready is not None and gpulock.heartbeat_fresh(beat):
            last = max(last, now - 0.2)  # queueing for the GPU is not hanging
        if proc.poll() is not None or done >= count:
            break
        if ready is None:
            late = "startup" if now > started + max(timeout_s, STARTUP_S) else None
        else:
            deadline = last + timeout_s
            if budget is not None:
                deadline = min(deadline, ready + budget)
            late = "timeout" if now > deadline else None
        stopped = box.breach() or late
        if stopped:
            box.kill()
            proc.kill()
            break
        time.sleep(0.1)
    end = time.monotonic()
    if stopped or proc.poll() is not None:
        proc.wait()
        if stopped is None and proc.returncode not in (0, None):
            stopped = box.breach()
    lines = results_path.read_text().splitlines()[:count]
    return lines, stopped, end - last, (end - ready) if ready is not None else 0.0
