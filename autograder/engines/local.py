"""Grading on this machine: several students at once, each slot a long-lived ``nbgrader autograde``.

``workers`` grading slots run side by side, each a long-lived ``nbgrader autograde`` that grades
one student after another (:mod:`autograder.runner.worker`); a student whose grading fails is
retried alone with the ``nbgrader autograde --student`` command. On a GPU machine each slot is
bound to one GPU, the slots spread evenly over the GPUs (:mod:`autograder.engines.gpus`); on
each GPU the students' notebooks and correctness checks run side by side while speedup timings
queue for that GPU one at a time (:mod:`course.runtime.gpulock`).

Also what every engine shares: the :class:`Engine` protocol, :class:`GradingError`, and each
student's progress line read from the gradebook (:func:`student_result`).
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from autograder.engines import slots as slot_plan
from autograder.engines.gpus import GradingGpu, bind_slots, grading_gpus
from autograder.engines.progress import StudentResult
from autograder.results.table import collect, total
from autograder.runner.names import ASSIGNMENT
from autograder.runner.nbgrader_cli import (
    LAST_FAILURE,
    append_log,
    nbgrader,
    record_grading_failure,
)
from autograder.runner.worker import Worker, nbgrader_env

OnDone = Callable[[StudentResult], None]


class GradingError(RuntimeError):
    """Some students could not be graded; the message says who and what to do."""


class Engine(Protocol):
    """Grades students of a course directory; reports each one through ``on_done``."""

    name: str
    #: the students whose feedback the engine wrote as it graded them (the rest get theirs from
    #: one ``generate_feedback`` for the class afterwards)
    with_feedback: set[str]

    def grade(self, root: Path, students: Sequence[str], on_done: OnDone) -> None: ...


def student_result(root: Path, student: str, seconds: float, ok: bool) -> StudentResult:
    """The progress line's numbers for one student: the grade table's total
    (:func:`autograder.results.table.total`: their track, not-measured checks out of the
    maximum as for the class graded so far), read from the gradebook."""
    notebooks = len(list((root / "autograded" / student / ASSIGNMENT).glob("*.ipynb")))
    try:
        names, rows = collect(root)  # the whole class: not-measured checks are the class's
    except Exception:  # noqa: BLE001 - the line must not stop grading; the table says more
        names, rows = [], []
    score, maximum = next((total(row, names) for row in rows if row.student == student),
                          (0.0, 0.0))
    return StudentResult(student, notebooks, score, maximum, round(seconds, 1), ok)


class LocalEngine:
    """Several students at once on this machine: ``workers`` grading slots, each a long-lived
    ``nbgrader autograde`` (:mod:`autograder.runner.worker`) that grades one student after
    another, bound to one of ``gpus`` (by default every GPU grading may use here:
    :func:`autograder.engines.gpus.grading_gpus`). ``workers`` is the most slots: a class
    uses as few as grade it in as many rounds (:func:`autograder.engines.slots.balanced`), and
    its students are taken most notebooks first (:func:`autograder.engines.slots.longest_first`).
    ``why`` says where ``workers`` came from, for the line that says how grading runs."""

    name = "local"

    def __init__(self, workers: int, gpus: Sequence[GradingGpu] | None = None,
                 why: str = "") -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self.why = why
        #: the GPU of each slot (None: no GPU, the simulator grades)
        self.slot_gpus = bind_slots(workers, grading_gpus() if gpus is None else gpus)
        #: students whose feedback a slot wrote right after grading them (in this run)
        self.with_feedback: set[str] = set()

    def grade(self, root: Path, students: Sequence[str], on_done: OnDone) -> None:
        todo: queue.SimpleQueue[str] = queue.SimpleQueue()
        # (student, seconds) of each student graded, for the progress line; None: no more
        finished: queue.SimpleQueue[tuple[str, float] | None] = queue.SimpleQueue()
        for student in slot_plan.longest_first(
                students, lambda s: slot_plan.notebooks_handed_in(root, s)):
            todo.put(student)
        ok: dict[str, bool] = {}

        count = slot_plan.balanced(len(students), self.workers)

        def slot(index: int, gpu: GradingGpu | None) -> None:
            grader: Worker | None = None
            env = dict(nbgrader_env(), **(gpu.env() if gpu else {}))
            try:
                while True:
                    try:
                        student = todo.get_nowait()
                    except queue.Empty:
                        return
                    if grader is None or not grader.alive:  # a dead slot starts afresh
                        grader = Worker(root, env, index, count)
                    started = time.monotonic()
                    result = grader.autograde(student)
                    append_log(root, ("autograde", ASSIGNMENT, "--student", student, "--create",
                                      "--force"), result["log"])
                    ok[student] = bool(result["success"])
                    if result.get("feedback"):
                        self.with_feedback.add(student)
                    if ok[student]:
                        finished.put((student, time.monotonic() - started))
            finally:
                if grader is not None:
                    grader.close()

        def reporter() -> None:
            """The progress lines, one after another, off the slots' threads: a line reads the
            class's table (its total is the class's, :func:`student_result`); a slot that
            waited for it, behind every other slot's line, took its next student that much
            later."""
            while (item := finished.get()) is not None:
                student, seconds = item
                on_done(student_result(root, student, seconds, True))

        slots = [threading.Thread(target=slot, args=(i, self.slot_gpus[i]),
                                  name=f"grading-slot-{i}")
                 for i in range(count)]
        lines = threading.Thread(target=reporter, name="grading-progress")
        lines.start()
        try:
            for thread in slots:
                thread.start()
            for thread in slots:
                thread.join()
        finally:
            finished.put(None)
            lines.join()
        failed = [s for s in students if not ok.get(s)]
        for student in list(failed):  # a locked gradebook, a crash: once more, alone
            print(f"  retrying {student} alone", flush=True)
            started = time.monotonic()
            args = ("autograde", ASSIGNMENT, "--student", student, "--create", "--force")
            gpu = self.slot_gpus[0]  # alone now: any GPU will do, but one, as for the slots
            good = nbgrader(*args, root=root, check=False, quiet=True,
                            env=gpu.env() if gpu else None)
            if good:
                failed.remove(student)
            else:  # never drop a student: the row keeps zeros and says why
                record_grading_failure(root, student, LAST_FAILURE.get(args, "unknown error"))
            on_done(student_result(root, student, time.monotonic() - started, good))
        if failed:
            raise GradingError(f"autograde failed twice for {', '.join(failed)}; see "
                               f"{root / '.nbgrader.log'}")


def workers() -> int:
    """Students graded at once on this machine, at most (``COURSE_GRADING_WORKERS``).

    Default (:func:`autograder.engines.slots.default_slots`): CPU cores, at most 4, without a
    GPU; a quarter more slots than cores with one — the notebooks run on the simulator (CPU
    work), speedup timings queue for the GPU one at a time behind :mod:`course.runtime.gpulock`,
    and a slot there keeps about three quarters of a core busy.
    """
    if os.environ.get("COURSE_GRADING_WORKERS"):
        value = os.environ["COURSE_GRADING_WORKERS"]
        if not value.isdigit() or int(value) < 1:
            raise SystemExit(f"COURSE_GRADING_WORKERS must be a whole number ≥ 1, got {value!r}")
        return int(value)
    return slot_plan.default_slots(*_machine())


def workers_reason() -> str:
    """Where :func:`workers` comes from, as the progress line says it:
    ``COURSE_GRADING_WORKERS``, or ``16 cores, a GPU: 1.25 slots per core``."""
    if os.environ.get("COURSE_GRADING_WORKERS"):
        return "COURSE_GRADING_WORKERS"
    cores, gpus = _machine()
    if gpus:
        return (f"{cores} cores, {gpus} GPU{'s' * (gpus != 1)}: "
                f"{slot_plan.GPU_OVERSUBSCRIPTION:g} slots per core")
    return f"{cores} core{'s' * (cores != 1)}, no GPU: a slot per core, at most " \
           f"{slot_plan.CPU_ONLY_MAX}"


def _machine() -> tuple[int, int]:
    """(CPU cores, GPUs grading may use) of this machine."""
    return os.cpu_count() or 1, len(grading_gpus())
