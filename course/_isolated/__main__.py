"""``python -m course._isolated JOB.json RESULT.json``: run one task, write its JSON result."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from course._isolated.tasks import TASKS
from course.perf import budget
from course.runtime import backend, gpulock
from course.trust.kernel_source import SourceBundle


def main(job_path: str, result_path: str) -> int:
    """Rebuild the job's source bundles, run its task, and write what it returned (or why not)."""
    sys.setswitchinterval(5e-4)  # the simulator's threads hand over faster: about 2× quicker
    job = json.loads(Path(job_path).read_text())
    # A timing that overruns its budget ends this process with its reason as the result, so
    # a hung kernel frees the GPU (and its lock) for the next student at once.
    budget.exit_on_overrun(result_path)
    if not backend.simulator_requested() and not gpulock.hold_shared_on_launch():
        gpulock.ensure_shared()  # no launch hook in this numba-cuda: hold it throughout
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
    Path(result_path).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:3]))
