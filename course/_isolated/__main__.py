"""``python -m course._isolated JOB.json RESULT.json``: run one task, write its JSON result.

``python -m course._isolated --serve``: the same for one job after another, each named by a line
``JOB.json<TAB>RESULT.json`` on stdin, until stdin ends (the warm simulator process of
:mod:`course.trust.runner`). Each job's kernels are rebuilt from its source bundles in a
namespace of their own, exactly as in a fresh process.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from course._isolated.tasks import TASKS
from course.perf import budget
from course.runtime import backend, gpulock, gpusync
from course.trust import runner
from course.trust.kernel_source import SourceBundle


def run(job_path: str, result_path: str) -> None:
    """Rebuild the job's source bundles, run its task, and write what it returned (or why not)."""
    job = json.loads(Path(job_path).read_text())
    os.environ.update(job.pop("env", None) or {})  # the student's language
    # A timing that overruns its budget, or a launch that outlives the GPU lock's limit, ends
    # this process with its reason as the result: a hung kernel frees the GPU (and its lock)
    # for the next student at once.
    budget.exit_on_overrun(result_path)
    bundles = {k: SourceBundle.from_json(v) for k, v in job.pop("bundles").items()}
    name = job.pop("task")
    task = TASKS.get(name)
    try:
        if task is None:
            raise KeyError(f"no task named {name!r} (known: {', '.join(sorted(TASKS))})")
        result = task(**bundles, **job)
    except NotImplementedError:
        result = {"error": "the kernel is not written yet (it still raises NotImplementedError)"}
    except gpulock.GpuLockTimeout as exc:
        result = {"not_measured": str(exc)}
    except Exception as exc:  # the child reports; the parent decides what it means
        result = {"error": f"{type(exc).__name__}: {exc}"}
    runner.write_result(result_path, result)


def serve() -> int:
    """Run the jobs named on stdin, one per line (``JOB.json<TAB>RESULT.json``)."""
    for line in runner.request_lines():
        job_path, result_path = line.split("\t")
        try:
            run(job_path, result_path)
        except (OSError, ValueError):  # its asker gave up and removed the folder: next
            continue
    return 0


def main(args: list[str]) -> int:
    # Before any context exists: waits for the GPU (timings, checks) sleep instead of spinning.
    gpusync.block_while_waiting()
    if not backend.simulator_requested() and not gpulock.hold_shared_on_launch():
        gpulock.ensure_shared()  # no launch hook in this numba-cuda: hold it throughout
    if args[:1] == [runner.SERVE_FLAG]:
        return serve()
    run(*args[:2])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
