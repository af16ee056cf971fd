"""Where the grader keeps the GPU lock of :mod:`course.runtime.gpulock`, and who may reach it.

The lock must be shared by every grading process on one GPU (parallel students, several course
copies, a second ``make grade``), reachable by the trusted re-check children inside their
sandbox (bound read-write by :func:`autograder.grading.trusted_process.run_jobs`), and **never**
by a student's notebook kernel: a student who could open it could hold it and stall the class.
The notebook kernel's sandbox has a private ``/tmp`` and hides the course directory, so the lock
lives in one of those:

* ``COURSE_GPU_LOCK`` (a directory) when set — refused unless it is under ``/tmp`` or the
  course directory;
* otherwise ``/tmp/week4-gpu-lock-<uid>``, one per machine and user;

and in either, one lock **per GPU**: a grading slot bound to one GPU
(:mod:`autograder.engines.gpus`) names it by ``COURSE_GRADING_GPU_KEY`` (its UUID), and a job a
scheduler gave its own GPUs by ``CUDA_VISIBLE_DEVICES``; the lock is a folder of that name
inside the base. Timings on different GPUs therefore never wait for each other.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from course.runtime.gpulock import LOCK_ENV

HIDDEN_BASE = Path("/tmp")
#: set for a grading slot bound to one GPU (autograder.engines.gpus): that GPU's UUID (or id),
#: which names its lock, and how the grade table names it ("GPU 1 (NVIDIA H200)").
GPU_KEY_ENV = "COURSE_GRADING_GPU_KEY"
GRADING_GPU_ENV = "COURSE_GRADING_GPU"


class GpuLockPlacementError(ValueError):
    """The configured lock directory could be reached by student code."""


def gpu_folder_name() -> str:
    """The folder of this GPU's lock inside the base: ``gpu-<key>`` for a slot bound to one GPU,
    ``gpus-<ids>`` for the GPU set a scheduler gave this job, ``all`` where neither is set."""
    key = os.environ.get(GPU_KEY_ENV, "")
    if key:
        return "gpu-" + re.sub(r"[^0-9A-Za-z_-]", "_", key)
    devices = re.sub(r"[^0-9A-Za-z,-]", "", os.environ.get("CUDA_VISIBLE_DEVICES", ""))
    return f"gpus-{devices.replace(',', '_')}" if devices else "all"


def default_lock_dir() -> Path:
    """This machine's (and this GPU's) lock directory."""
    return HIDDEN_BASE / f"week4-gpu-lock-{os.getuid()}" / gpu_folder_name()


def check_hidden(path: Path, course_root: Path) -> None:
    """Raise unless the notebook kernel's sandbox cannot see ``path``."""
    path, root = path.resolve(), course_root.resolve()
    if not (path.is_relative_to(HIDDEN_BASE) or path.is_relative_to(root)):
        raise GpuLockPlacementError(
            f"{LOCK_ENV}={path} is visible to student code (only /tmp and the course directory "
            f"{root} are hidden from it); choose a directory under one of them")
    for entry in filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)):
        entry_path = Path(entry).resolve()
        if path.is_relative_to(entry_path) and entry_path != Path("/"):
            raise GpuLockPlacementError(
                f"{LOCK_ENV}={path} lies inside the PYTHONPATH entry {entry_path}, which the "
                "sandbox shows to student code; move the lock or the packages")


def lock_dir_for_children(course_root: Path) -> Path:
    """Create (if needed), check and return the lock directory for trusted children."""
    configured = os.environ.get(LOCK_ENV)
    path = Path(configured) / gpu_folder_name() if configured else default_lock_dir()
    check_hidden(path, course_root)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    for folder in (path.parent, path):
        if folder.is_symlink() or folder.stat().st_uid != os.getuid():
            raise GpuLockPlacementError(f"{folder} is not a directory of this user; remove it "
                                        f"or set {LOCK_ENV} to another directory")
    return path
