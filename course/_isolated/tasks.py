"""The tasks a fresh process may run, by the name a job gives (``job["task"]``).

One table, at the top of the layers: it imports the modules that define the tasks, and nothing
imports it but the child's entry point (:mod:`course._isolated.__main__`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from course.checks.cuda_speedup import speedup_cuda_task
from course.checks.speedup import speedup_task
from course.gemm.inspection import inspect_task
from course.perf.counters import traffic_task

TASKS: dict[str, Callable[..., dict[str, Any]]] = {
    "inspect": inspect_task,
    "speedup": speedup_task,
    "speedup_cuda": speedup_cuda_task,
    "traffic": traffic_task,
}
