"""Grading on Slurm: a job array on a real Slurm (controller and node on localhost) grades
the same students to the same scores as the local engine, and a failed shard is re-run alone.

Two cheap sample students (notebook 01 only). One of them first hands in a broken notebook,
so its shard fails; the other shard is merged at once. After the student's notebook is fixed,
the same command submits only the failed shard, and the merged table and ``grades.csv``
equal the local run's. Skipped, with the reason, where Slurm cannot be installed or started
(not root, no apt-get).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from localslurm import LocalSlurm, SlurmUnavailable

import sample_class as samples

ROOT = Path(__file__).resolve().parents[1]
STUDENTS = ["dee_edits_tests", "eli_deletes_tests"]
BROKEN = "eli_deletes_tests"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory):
    slurm = LocalSlurm(tmp_path_factory.mktemp("slurm"))
    try:
        slurm.start()
    except SlurmUnavailable as exc:
        slurm.stop()
        pytest.skip(f"no localhost Slurm: {exc}")
    yield slurm
    slurm.stop()


def _start(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    env = dict(env or os.environ, COURSE_SANDBOX_HIDE=str(ROOT), COURSE_CELL_TIMEOUT="90",
               PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "autograder", *args, "--root",
                             str(root)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen) -> subprocess.CompletedProcess:
    out, err = proc.communicate(timeout=900)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def _harness(root: Path, *args: str, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess:
    return _finish(_start(root, *args, env=env))


def _course(path: Path) -> Path:
    path.mkdir()
    shutil.copytree(ROOT / "source", path / "source")
    shutil.copytree(ROOT / "assets", path / "assets")  # the release embeds the figures
    shutil.copy(ROOT / "nbgrader_config.py", path)
    return path


def _grades(root: Path) -> list[tuple[str, str, str, str]]:
    with open(root / "grades.csv") as fh:
        return sorted((r["student_id"], r["assignment"], r["score"], r["max_score"])
                      for r in csv.DictReader(fh))


def test_slurm_grades_like_local_and_reruns_only_a_failed_shard(cluster, tmp_path) -> None:
    local = _course(tmp_path / "local")
    out = _harness(local, "release")
    assert out.returncode == 0, out.stdout + out.stderr
    slurm = tmp_path / "slurm"
    shutil.copytree(local, slurm)  # the same release and gradebook
    for course in (local, slurm):
        samples.build_class(course, course / "submitted", STUDENTS)

    # The local run and the first Slurm run side by side (less waiting on a 2-core machine).
    local_run = _start(local, "grade", "--engine", "local", "--json", str(local / "table.json"))
    broken = slurm / "submitted" / BROKEN / "week4" / "01_arithmetic_intensity.ipynb"
    # a notebook nbgrader cannot read (one that is not even JSON never reaches it: it is set
    # aside before grading, see autograder/handin/tidy.py)
    broken.write_text('{"cells": [], "metadata": {}, "nbformat": 99, "nbformat_minor": 0}')
    first = _harness(slurm, "grade", "--engine", "slurm", "--per-task", "1", "--json",
                     str(slurm / "first.json"), env=cluster.env)
    out = _finish(local_run)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    expected = json.loads((local / "table.json").read_text())
    log = first.stdout + first.stderr
    assert first.returncode == 1, log[-3000:]
    assert f"1 shard(s) failed ({BROKEN})" in first.stderr, log[-3000:]
    assert "Run the same command again" in first.stderr
    partial = json.loads((slurm / "first.json").read_text())
    assert partial["dee_edits_tests"]["scores"] == expected["dee_edits_tests"]["scores"]

    samples.build_class(slurm, slurm / "submitted", [BROKEN])  # the student's real notebook
    second = _harness(slurm, "grade", "--engine", "slurm", "--per-task", "1", "--json",
                      str(slurm / "table.json"), env=cluster.env)
    assert second.returncode == 0, (second.stdout + second.stderr)[-3000:]
    assert "shard(s) 1 of 2" in second.stdout, second.stdout[-2000:]  # only the failed one
    got = json.loads((slurm / "table.json").read_text())
    assert got == expected
    assert _grades(slurm) == _grades(local)
    assert f"{BROKEN}" in second.stdout and "notebook graded" in second.stdout
