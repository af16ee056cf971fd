"""Grading on several GPUs, proved with stand-in GPUs (no GPU needed): which GPUs grading may
use, slots spread evenly over them, each slot's processes bound to its GPU, one lock per GPU,
a hang on one GPU that costs the others nothing, Slurm asking for GPUs, and the table naming
the GPU that timed a student's speedup.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from autograder.engines import gpus as gpus_mod
from autograder.engines import local
from autograder.engines.gpus import GpuChoiceError, GradingGpu, bind_slots, grading_gpus
from autograder.engines.local import GradingError
from autograder.engines.slurm import gpu_request
from autograder.results.table import Row, _summary_notes
from autograder.sandbox import gpulock as placement
from course.runtime import gpulock

ROOT = Path(__file__).resolve().parents[1]


def _stand_ins(count: int) -> list[GradingGpu]:
    return [GradingGpu(device=str(i), key=f"stand-in-{i}") for i in range(count)]


# -- which GPUs ------------------------------------------------------------------------------

def test_the_instructors_list_then_the_schedulers_then_none(monkeypatch) -> None:
    monkeypatch.setattr(gpus_mod, "driver_gpu_count", lambda: (0, "no driver"))
    monkeypatch.setattr(gpus_mod, "_driver_facts", lambda ordinal: ("", ""))
    assert [g.device for g in grading_gpus({"COURSE_GRADING_GPUS": "0, 2"})] == ["0", "2"]
    assert grading_gpus({"COURSE_GRADING_GPUS": "none", "CUDA_VISIBLE_DEVICES": "0"}) == []
    assert [g.device for g in grading_gpus({"CUDA_VISIBLE_DEVICES": "3,GPU-ab12"})] == \
        ["3", "GPU-ab12"]
    assert grading_gpus({}) == []  # no GPU: the simulator grades, no slot is bound
    for bad in ("0,0", ",", "1,,1"):
        with pytest.raises(GpuChoiceError, match="COURSE_GRADING_GPUS"):
            grading_gpus({"COURSE_GRADING_GPUS": bad})


def test_the_drivers_gpus_are_numbered_and_named_by_the_driver(monkeypatch) -> None:
    monkeypatch.setattr(gpus_mod, "driver_gpu_count", lambda: (2, ""))
    facts = {0: ("NVIDIA H200", "GPU-aa"), 1: ("NVIDIA L4", "GPU-bb")}
    monkeypatch.setattr(gpus_mod, "_driver_facts", facts.__getitem__)
    found = grading_gpus({})
    assert [(g.device, g.key, g.label) for g in found] == [
        ("0", "GPU-aa", "GPU 0 (NVIDIA H200)"), ("1", "GPU-bb", "GPU 1 (NVIDIA L4)")]
    # a scheduler's set: the driver numbers it 0…n-1 in its order
    seen: list[int] = []
    monkeypatch.setattr(gpus_mod, "_driver_facts", lambda o: (seen.append(o), ("", ""))[1])
    grading_gpus({"CUDA_VISIBLE_DEVICES": "5,7", "COURSE_GRADING_GPUS": "7"})
    assert seen == [1]
    assert found[0].env() == {"CUDA_VISIBLE_DEVICES": "0", placement.GPU_KEY_ENV: "GPU-aa",
                              placement.GRADING_GPU_ENV: "GPU 0 (NVIDIA H200)"}


@pytest.mark.parametrize("slots", range(1, 18))
@pytest.mark.parametrize("count", [1, 2, 3, 4, 8])
def test_slots_spread_evenly_over_the_gpus(slots: int, count: int) -> None:
    bound = bind_slots(slots, _stand_ins(count))
    per_gpu = Counter(g.device for g in bound if g is not None)
    assert len(bound) == slots and None not in bound
    assert max(per_gpu.values()) - min(per_gpu.values()) <= 1
    assert len(per_gpu) == min(slots, count)  # every GPU used once there are slots for it
    assert bind_slots(slots, []) == [None] * slots


# -- each slot bound to its GPU ---------------------------------------------------------------

class _FakeWorker:
    """Stands in for a slot's ``nbgrader autograde``: records the GPU it was started with."""

    seen: dict[str, str] = {}
    lock = threading.Lock()

    def __init__(self, root: Path, env: dict[str, str], slot: int, slots: int) -> None:
        self.env, self.alive = env, True

    def autograde(self, student: str) -> dict:
        time.sleep(0.05)  # long enough for every slot to take a student
        with self.lock:
            self.seen[student] = self.env.get("CUDA_VISIBLE_DEVICES", "")
            assert self.env[placement.GPU_KEY_ENV] == f"stand-in-{self.seen[student]}"
        return {"success": True, "log": "", "feedback": False}

    def close(self) -> None:
        self.alive = False


def test_each_slot_grades_on_its_own_gpu(tmp_path: Path, monkeypatch) -> None:
    _FakeWorker.seen = {}
    monkeypatch.setattr(local, "Worker", _FakeWorker)
    monkeypatch.setattr(local, "append_log", lambda *a, **k: None)
    monkeypatch.setattr(local, "student_result", lambda root, s, secs, ok: s)
    done: list[str] = []
    students = [f"s{i:02}" for i in range(12)]
    engine = local.LocalEngine(4, gpus=_stand_ins(2))
    assert [g.device for g in engine.slot_gpus] == ["0", "1", "0", "1"]
    engine.grade(tmp_path, students, done.append)
    assert sorted(done) == students
    per_gpu = Counter(_FakeWorker.seen.values())
    assert set(per_gpu) == {"0", "1"} and abs(per_gpu["0"] - per_gpu["1"]) <= 4
    assert gpus_mod.describe(engine.slot_gpus) == "on 2 GPUs (2 slot(s) each)"


def test_without_a_gpu_no_slot_is_bound(tmp_path: Path, monkeypatch) -> None:
    _FakeWorker.seen = {}

    class Plain(_FakeWorker):
        def autograde(self, student: str) -> dict:
            assert "CUDA_VISIBLE_DEVICES" not in self.env or \
                self.env["CUDA_VISIBLE_DEVICES"] == os.environ.get("CUDA_VISIBLE_DEVICES")
            assert placement.GPU_KEY_ENV not in self.env
            return {"success": True, "log": "", "feedback": False}

    monkeypatch.setattr(local, "Worker", Plain)
    monkeypatch.setattr(local, "append_log", lambda *a, **k: None)
    monkeypatch.setattr(local, "student_result", lambda root, s, secs, ok: s)
    done: list[str] = []
    local.LocalEngine(2, gpus=[]).grade(tmp_path, ["a", "b", "c"], done.append)
    assert sorted(done) == ["a", "b", "c"]
    assert gpus_mod.describe([None, None]) == ""


# -- one lock per GPU, and a hang that stays on its GPU ---------------------------------------

def test_each_gpu_has_its_own_lock_hidden_from_students(tmp_path: Path, monkeypatch) -> None:
    course = tmp_path / "course"
    course.mkdir()
    monkeypatch.setenv(gpulock.LOCK_ENV, str(tmp_path / "locks"))
    dirs = []
    for key in ("GPU-aa", "GPU-bb"):
        monkeypatch.setenv(placement.GPU_KEY_ENV, key)
        dirs.append(placement.lock_dir_for_children(course))
    assert dirs == [tmp_path / "locks" / "gpu-GPU-aa", tmp_path / "locks" / "gpu-GPU-bb"]
    monkeypatch.delenv(gpulock.LOCK_ENV)
    monkeypatch.setenv(placement.GPU_KEY_ENV, "../../etc")  # never a path out of the base
    assert placement.default_lock_dir().parent.parent == placement.HIDDEN_BASE
    monkeypatch.delenv(placement.GPU_KEY_ENV)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert placement.default_lock_dir().name == "gpus-2_3"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert placement.default_lock_dir().name == "all"


HUNG = textwrap.dedent("""
    import sys, time
    from course.runtime import gpulock
    with gpulock.shared_launch():  # a kernel that never ends, on this GPU
        print("launched", flush=True)
        time.sleep(600)
""")


def test_a_hang_on_one_gpu_costs_only_that_gpu_a_bounded_moment(tmp_path: Path) -> None:
    """A launch that never ends holds GPU 0's lock until the launch limit ends its process
    (1 s here); a timing on GPU 1 gets its GPU at once, a timing on GPU 0 within the limit."""
    locks = {gpu: tmp_path / f"gpu-{gpu}" for gpu in ("0", "1")}
    for folder in locks.values():
        folder.mkdir()
    env = dict(os.environ, PYTHONPATH=str(ROOT), **{gpulock.LOCK_ENV: str(locks["0"]),
                                                    gpulock.LAUNCH_LIMIT_ENV: "1"})
    hung = subprocess.Popen([sys.executable, "-c", HUNG], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert hung.stdout.readline().strip() == "launched", hung.stderr.read()
        waited = {}
        for gpu in ("1", "0"):
            timing = gpulock.GpuLock(locks[gpu], max_wait_s=30)
            asked = time.monotonic()
            timing.acquire("exclusive")
            waited[gpu] = time.monotonic() - asked
            timing.release()
        _out, err = hung.communicate(timeout=30)
    finally:
        hung.kill()
    assert hung.returncode == 70 and "did not finish within 1 s" in err, err
    assert waited["1"] < 0.5, f"a timing on another GPU waited {waited['1']:.2f} s"
    assert 0.2 <= waited["0"] <= 1 + 2.0, f"the hung GPU's timing waited {waited['0']:.1f} s"


# -- Slurm asks for GPUs --------------------------------------------------------------------

def test_slurm_asks_for_gpus_the_way_the_cluster_expects() -> None:
    assert gpu_request(0, []) == []
    assert gpu_request(2, ["--partition=gpu"]) == ["--gres=gpu:2"]
    assert gpu_request(4, [], "gpus-per-task") == ["--gpus-per-task=4"]
    with pytest.raises(GradingError, match="asked for twice"):
        gpu_request(2, ["--gres=gpu:1"])
    with pytest.raises(GradingError, match="gres or gpus-per-task; got 'gpus'"):
        gpu_request(1, [], "gpus")
    with pytest.raises(GradingError, match="0 or more"):
        gpu_request(-1, [])


# -- the table names the GPU that timed the speedup ---------------------------------------------

def test_the_table_names_the_gpu_that_timed_the_speedup() -> None:
    row = Row("ada")
    cells = {"tiled_gemm_correct_visible": {"status": "pass"},
             "tiled_gemm_speedup": {"status": "pass"}}
    _summary_notes(row, "03_tiled_gemm", {"cells": cells, "gpu": "GPU 1 (NVIDIA H200)"})
    assert "03_tiled_gemm: speedup timed on GPU 1 (NVIDIA H200)" in row.notes
    for summary in ({"cells": cells, "gpu": None},  # no slot bound: nothing to say
                    {"cells": {"tiled_gemm_speedup": {"status": "not_measured"}},
                     "gpu": "GPU 0"}):
        row = Row("bea")
        _summary_notes(row, "03_tiled_gemm", summary)
        assert not any("timed on" in note for note in row.notes)
    row = Row("ara")
    _summary_notes(row, "03_tiled_gemm", {"cells": cells, "gpu": "GPU 0", "language": "ko"})
    assert any("GPU 0" in note and "timed on" not in note for note in row.notes)


def test_make_grade_engine_slurm_adds_the_gpu_request(monkeypatch) -> None:
    from autograder import engines

    monkeypatch.setattr(engines.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.delenv("COURSE_SLURM_GPU_FLAG", raising=False)
    engine = engines.make_engine("slurm", workers=4, sbatch_args="--partition=gpu",
                                 gpus_per_task=2)
    assert engine.sbatch_args == ["--partition=gpu", "--gres=gpu:2"]
    monkeypatch.setenv("COURSE_SLURM_GPU_FLAG", "gpus-per-task")
    engine = engines.make_engine("slurm", workers=4, gpus_per_task=8)
    assert engine.sbatch_args == ["--gpus-per-task=8"]
