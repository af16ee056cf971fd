"""How many students a machine grades at once and in which order (autograder/engines/slots.py):
the default slot count for many machines, slots balanced so that the last round is not nearly
empty, students taken most notebooks first, and the engine starting exactly the planned slots,
each bound to its GPU as before."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from autograder.engines import gpus as gpus_mod
from autograder.engines import local, slots
from autograder.engines.gpus import GradingGpu
from autograder.runner.names import ASSIGNMENT

CORES = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128]


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("gpus", [0, 1, 2, 4, 8])
def test_the_default_uses_the_box(cores: int, gpus: int) -> None:
    n = slots.default_slots(cores, gpus)
    if gpus == 0:  # the simulator: CPU work from start to end, a slot per core, at most 4
        assert n == min(4, cores)
    else:  # a slot keeps about three quarters of a core busy: more slots than cores
        assert n >= cores and n >= gpus
        assert n == max(gpus, int(cores * 1.25))
        assert n > cores or cores < 4  # (1.25 × 1, 2 or 3 cores rounds down to the cores)


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 7, 8, 15, 16, 20, 32])
def test_balanced_slots_keep_the_rounds_and_fill_the_last_one(limit: int) -> None:
    for students in range(0, 260):
        used = slots.balanced(students, limit)
        if students == 0:
            assert used == 0
            continue
        needed = slots.rounds(students, limit)
        assert 1 <= used <= min(limit, students)
        assert slots.rounds(students, used) == needed  # no round more than ``limit`` slots take
        if used > 1:  # and the fewest slots that do it
            assert slots.rounds(students, used - 1) > needed
        idle = needed * used - students  # slots with nothing to do in the last round
        assert 0 <= idle < needed
        assert idle <= limit * needed - students


def test_a_class_of_100_on_16_slots() -> None:
    assert slots.rounds(100, 16) == 7 and 100 - 6 * 16 == 4  # the last round: 4 of 16 busy
    assert slots.balanced(100, 16) == 15
    assert slots.describe(100, 16) == "15 at a time: 7 rounds, the last 10 of 15"
    assert slots.describe(100, 20) == "20 at a time: 5 rounds"
    assert slots.describe(16, 20) == "16 at a time"
    assert slots.describe(3, 2) == "2 at a time: 2 rounds, the last 1 of 2"
    assert slots.describe(0, 4) == "nobody to grade"
    with pytest.raises(ValueError, match="at least 1"):
        slots.rounds(5, 0)


def _hand_in(root: Path, student: str, notebooks: int) -> None:
    folder = root / "submitted" / student / ASSIGNMENT
    folder.mkdir(parents=True)
    for i in range(notebooks):
        (folder / f"{i:02}_nb.ipynb").write_text(json.dumps({"cells": []}))


def test_students_are_taken_most_notebooks_first(tmp_path: Path) -> None:
    handed = {"amy": 1, "bob": 10, "cy": 3, "dee": 10, "eve": 0}
    for student, count in handed.items():
        _hand_in(tmp_path, student, count)
    cost = lambda s: slots.notebooks_handed_in(tmp_path, s)  # noqa: E731
    assert [cost(s) for s in handed] == list(handed.values())
    assert slots.longest_first(list(handed), cost) == ["bob", "dee", "cy", "amy", "eve"]


class _Recorder:
    """Stands in for a slot's ``nbgrader autograde``: records the GPU, the order and how many
    slots were alive at once."""

    lock = threading.Lock()
    started: list[str] = []
    order: list[str] = []
    gpu: dict[str, str] = {}
    places: list[tuple[int, int]] = []

    def __init__(self, root: Path, env: dict[str, str], slot: int, slots: int) -> None:
        self.env, self.alive = env, True
        with self.lock:
            self.started.append(env.get("CUDA_VISIBLE_DEVICES", ""))
            self.places.append((slot, slots))

    def autograde(self, student: str) -> dict:
        with self.lock:
            self.order.append(student)
            self.gpu[student] = self.env.get("CUDA_VISIBLE_DEVICES", "")
        time.sleep(0.002)
        return {"success": True, "log": "", "feedback": True}

    def close(self) -> None:
        self.alive = False


@pytest.mark.parametrize(("students", "limit", "gpu_count"),
                         [(100, 16, 1), (100, 16, 2), (17, 16, 4), (40, 20, 8), (5, 2, 0),
                          (1, 20, 2)])
def test_the_engine_starts_the_planned_slots_bound_to_their_gpus(
        tmp_path: Path, monkeypatch, students: int, limit: int, gpu_count: int) -> None:
    _Recorder.started, _Recorder.order, _Recorder.gpu, _Recorder.places = [], [], {}, []
    monkeypatch.setattr(local, "Worker", _Recorder)
    monkeypatch.setattr(local, "append_log", lambda *a, **k: None)
    monkeypatch.setattr(local, "student_result", lambda root, s, secs, ok: s)
    ids = [f"s{i:03}" for i in range(students)]
    for i, student in enumerate(ids):
        _hand_in(tmp_path, student, 10 if i % 3 == 0 else 2)
    stand_ins = [GradingGpu(device=str(i), key=f"stand-in-{i}") for i in range(gpu_count)]
    engine = local.LocalEngine(limit, gpus=stand_ins)
    threads: list[str] = []

    class Counted(threading.Thread):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            threads.append(self.name)

    monkeypatch.setattr(local.threading, "Thread", Counted)
    done: list[str] = []
    engine.grade(tmp_path, ids, done.append)
    assert sorted(done) == ids
    used = slots.balanced(students, limit)
    assert [t for t in threads if t.startswith("grading-slot-")] == [
        f"grading-slot-{i}" for i in range(used)]
    assert threads.count("grading-progress") == 1  # the progress lines' own thread
    # each slot's worker knows its own place, for its notebooks' staggered order (a slot
    # that finds no student left starts none)
    assert len(set(_Recorder.places)) == len(_Recorder.places) >= 1
    assert all(0 <= slot < used and count == used for slot, count in _Recorder.places)
    bound = engine.slot_gpus[:used]
    if gpu_count:  # the slots still spread evenly over the GPUs
        per_gpu = Counter(g.device for g in bound if g is not None)
        assert max(per_gpu.values()) - min(per_gpu.values()) <= 1
        assert len(per_gpu) == min(gpu_count, used)
        assert set(_Recorder.gpu.values()) <= set(per_gpu)
    else:
        assert bound == [None] * used and set(_Recorder.started) == {""}
    # every full submission is handed out before any short one
    full = [s for i, s in enumerate(ids) if i % 3 == 0]
    assert set(_Recorder.order[:len(full)]) == set(full)
    spread = sorted(set(per_gpu.values())) if gpu_count else []
    assert gpus_mod.describe(bound) == (
        "" if not gpu_count else "on GPU 0" if len(spread) and len(per_gpu) == 1
        else f"on {len(per_gpu)} GPUs ({'-'.join(str(n) for n in spread)} slot(s) each)")


def test_a_slot_takes_its_next_student_while_the_progress_line_is_read(
        tmp_path: Path, monkeypatch) -> None:
    """The progress line reads the class's table; a slot does not wait for it (a class of 100:
    about a second a line on a GPU box, for each of the last round's students at once)."""
    release = threading.Event()
    graded: list[str] = []

    class Instant(_Recorder):
        def autograde(self, student: str) -> dict:
            graded.append(student)
            return {"success": True, "log": "", "feedback": True}

    def slow_line(root: Path, student: str, seconds: float, ok: bool) -> str:
        assert release.wait(timeout=30), "the progress line was never let go"
        return student

    monkeypatch.setattr(local, "Worker", Instant)
    monkeypatch.setattr(local, "append_log", lambda *a, **k: None)
    monkeypatch.setattr(local, "student_result", slow_line)
    ids = ["amy", "bob", "cy", "dee"]
    for student in ids:
        _hand_in(tmp_path, student, 1)
    done: list[str] = []
    engine = local.LocalEngine(1, gpus=[])
    runner = threading.Thread(target=engine.grade, args=(tmp_path, ids, done.append))
    runner.start()
    deadline = time.monotonic() + 30
    while len(graded) < len(ids) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sorted(graded) == ids and done == []  # all graded, not one line read yet
    release.set()
    runner.join(timeout=30)
    assert not runner.is_alive() and done == graded  # every line, in the order graded
