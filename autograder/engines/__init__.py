"""Where students are autograded: on this machine (``local``) or as a Slurm job array (``slurm``).

An engine takes the course directory and the students in ``submitted/``, autogrades each of
them into the course's gradebook and ``autograded/`` folder, and reports every student as
they finish (:class:`autograder.engines.progress.StudentResult`). Feedback, export and the
grade table come after, the same for every engine (:mod:`autograder.cli.harness`). A Kubernetes
or Ray engine would implement the same :class:`~autograder.engines.local.Engine` protocol.

* :mod:`~autograder.engines.local` — grading slots on this machine, and what engines share;
* :mod:`~autograder.engines.slurm` — shards of the class as a Slurm job array;
* :mod:`~autograder.engines.progress` — the progress bar, each student's line, the summary.
"""

from __future__ import annotations

import os
import shlex
import shutil

from autograder.engines.local import Engine, GradingError, LocalEngine
from autograder.engines.slurm import SlurmEngine, gpu_request


def make_engine(name: str, *, workers: int, per_task: int = 8, sbatch_args: str = "",
                fresh: bool = False, gpus_per_task: int = 0, why: str = "") -> Engine:
    """The engine called ``name`` ("local" or "slurm"); ``why`` says where ``workers`` came
    from (the local engine's progress line)."""
    if name == "local":
        return LocalEngine(workers, why=why)
    if name == "slurm":
        if shutil.which("sbatch") is None:
            raise GradingError("--engine slurm needs Slurm's sbatch and squeue on PATH")
        extra = shlex.split(sbatch_args or os.environ.get("COURSE_SLURM_ARGS", ""))
        extra += gpu_request(gpus_per_task, extra,
                             os.environ.get("COURSE_SLURM_GPU_FLAG", "gres"))
        return SlurmEngine(per_task=per_task, sbatch_args=extra, fresh=fresh)
    raise ValueError(f"unknown engine {name!r}: choose local or slurm")
