"""An instrumented simulator run of a student's GEMM kernel, rebuilt from its source.

Counting reads of A and B and watching barriers needs Numba's simulator, even on a GPU
machine, and the simulator and a real GPU cannot share a process. So on a GPU the run happens
in a fresh simulator process (:func:`course.trust.runner.run_job`, task ``"inspect"``); on the
simulator it happens here, in-process. Either way the kernel is rebuilt from validated source.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from course.gemm.access import describe_access
from course.gemm.diagnosis import diagnose
from course.gemm.instrument import RunReport, instrumented_run
from course.gemm.launch import NAIVE_BLOCK, naive, tiled
from course.gemm.operands import random_operands
from course.runtime import backend
from course.runtime.errors import not_written_yet
from course.runtime.i18n import _
from course.trust import runner
from course.trust.kernel_source import SourceBundle, bundle_from_objects


def inspect_task(bundle: SourceBundle, kind: str, tile: int | None, shape: list[int],
                 seed: int) -> dict[str, Any]:
    """Run the kernel in ``bundle`` once, instrumented: reads, races, and what is wrong."""
    namespace = bundle.load()
    gk = naive(namespace["gemm_naive"]) if kind == "naive" else \
        tiled(namespace["make_gemm_tiled"], int(tile or 0))
    M, N, K = shape
    A, B = random_operands(M, N, K, np.random.default_rng(seed))
    result: dict[str, Any] = {"shape": [M, N, K], "tile": tile, "error": None}
    report = RunReport()
    try:
        C, report = instrumented_run(gk, A, B, report)
    except NotImplementedError:
        raise
    except (IndexError, RuntimeError) as exc:
        if not_written_yet(exc):
            raise NotImplementedError from None
        if report.out_of_range:
            block = gk.launch_for(M, N).block
            error = describe_access(report.out_of_range[0], (M, N, K), (block[0], block[1]),
                                    tile or NAIVE_BLOCK, kind == "naive")
        else:
            error = _("index out of range for M={M}, N={N}, K={K}: {error}").format(
                M=M, N=N, K=K, error=exc)
        result.update(reads_a=0, reads_b=0, races=[], uninitialised=[], error=error,
                      missing_barriers=sorted(report.missing_barriers))
        return result
    result.update(reads_a=report.reads_a, reads_b=report.reads_b, races=report.races,
                  uninitialised=report.uninitialised,
                  missing_barriers=sorted(report.missing_barriers),
                  problem=diagnose(C, A, B, tile or NAIVE_BLOCK, k_step=tile,
                                   naive=kind == "naive"))
    return result


def inspect_tiled(factory: Callable[[int], Any], tile: int, shape: tuple[int, int, int],
                  seed: int) -> dict[str, Any]:
    """Instrumented simulator run of ``factory(tile)``: reads, races, diagnosis."""
    bundle = bundle_from_objects({"make_gemm_tiled": factory})
    return _inspect_bundle(bundle, "tiled", tile, shape, seed)


def inspect_naive(kernel: Any, shape: tuple[int, int, int], seed: int) -> dict[str, Any]:
    """Instrumented simulator run of ``gemm_naive``."""
    bundle = bundle_from_objects({"gemm_naive": kernel})
    return _inspect_bundle(bundle, "naive", None, shape, seed)


def _inspect_bundle(bundle: SourceBundle, kind: str, tile: int | None,
                    shape: tuple[int, int, int], seed: int) -> dict[str, Any]:
    if backend.detect().kind == "simulator":
        return inspect_task(bundle, kind, tile, list(shape), seed)
    job = {"task": "inspect", "bundles": {"bundle": bundle.to_json()}, "kind": kind,
           "tile": tile, "shape": list(shape), "seed": seed}
    return runner.run_job(job, simulator=True)
