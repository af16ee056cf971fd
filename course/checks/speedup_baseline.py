"""What the tiled kernel is timed against when the student's own naive kernel cannot be timed.

A speedup times three kernels interleaved (:mod:`course.checks.speedup`): the student's tiled
kernel, the student's own naive kernel, and the course's reference naive kernel, which the
grader supplies and which decides the verdict whenever it is there. The student's naive kernel
is timed for the report only, so when *it* is what cannot be timed, the tiled kernel is still
judged, against the reference, and the check says why the student's naive kernel was left out:

* **it prints** (``print`` in Numba, ``printf`` in CUDA C; :mod:`course.gemm.device_print`):
  device printing makes every launch at the timed size crawl, so it is not launched at all;
* **it overran the timing's budget** (:mod:`course.perf.budget`: it hangs, or crawls for
  another reason): the timing process ended there, so the tiled kernel and the reference are
  timed again without it, and the budget's own diagnosis is the note.

Everything else stays a failure: a naive kernel that is wrong (on the check shape, or in the
timed launches) loses the speedup as before, and so does a tiled kernel that is wrong, hangs,
crawls or is slow — with the cause named where it is known (a tiled kernel that prints). Without
the reference (a student's own run) there is nothing else to time against: a printing naive
kernel is then the failure, with its cause. Adding a print to a slow naive kernel gains nothing:
the reference decides the verdict in grading anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from course.runtime.i18n import _
from course.runtime.seeds import fresh_seed
from course.trust import runner

#: the name a timed kernel has in a speedup job (course.checks.speedup.KERNEL_LABELS)
OWN_NAIVE, TILED, REFERENCE = "own naive", "tiled", "reference naive"

Kernel = TypeVar("Kernel")


def timed(kernels: Mapping[str, Kernel], time_own_naive: bool) -> dict[str, Kernel]:
    """The kernels a speedup job times (both tracks' tasks): all of them, or all but the
    student's naive kernel, which then must have the reference to stand in for it."""
    if not time_own_naive and REFERENCE not in kernels:
        raise ValueError("without the reference naive kernel the student's own must be timed")
    return {name: k for name, k in kernels.items() if time_own_naive or name != OWN_NAIVE}

def prints_reason(label: str, call: str, size: int) -> str:
    """Why a kernel that prints is not worth timing, in the student's language."""
    return _("{label} calls {call} on the device: device printing makes every launch slow "
             "(each thread's line is formatted into one buffer on the GPU, which the host then "
             "prints), so its launches at {size}³ would time the printing, not the kernel. "
             "Remove it before timing.").format(label=label, call=call, size=size)


def untimed_note(why: str) -> str:
    """The note a passed or failed speedup shows when the student's naive kernel was left out."""
    return _("Note: {why} Your naive kernel was therefore left out of the timing, and your "
             "tiled kernel was timed against the course's reference naive kernel instead, which "
             "decides the speedup in grading in any case.").format(why=why)


def run_speedup_job(job: dict[str, Any], *, has_reference: bool, naive_prints: bool,
                    tiled_prints: bool, call: str, size: int) -> tuple[dict[str, Any], str, str]:
    """Run a speedup ``job`` in a fresh GPU process and return its result, why the student's
    naive kernel was not timed ("" when it was), and what a too-slow tiled kernel's failure
    adds (:func:`slow_tiled_hint`).

    ``naive_prints``/``tiled_prints``: whether each kernel's source prints on the device
    (``call`` is how its language spells it, ``"printf"``). The result is the child's, with
    the cause added to its error where a printing tiled kernel failed; with
    ``{"error": ...}`` and no launch at all where a printing naive kernel has no reference to
    stand in for it."""
    untimed = ""
    if naive_prints:
        untimed = prints_reason(_("your naive kernel"), call, size)
        if not has_reference:
            return {"error": _("{why} The speedup is measured against your naive kernel, so "
                               "it was not measured.").format(why=untimed)}, "", ""
    out = _run({**job, "time_own_naive": not untimed})
    if has_reference and not untimed and out.get("overran") == OWN_NAIVE:
        untimed = str(out["error"])
        out = _run({**job, "time_own_naive": False, "seed": fresh_seed()})
    hint = slow_tiled_hint(tiled_prints, call, size)
    if out.get("error") and tiled_prints and out.get("overran") == TILED:
        out = {**out, "error": str(out["error"]) + hint}
    return out, untimed, hint


def _run(job: dict[str, Any]) -> dict[str, Any]:
    return runner.run_job(job, simulator=False)


def slow_tiled_hint(tiled_prints: bool, call: str, size: int) -> str:
    """What a too-slow tiled kernel's failure adds when its source prints ("" otherwise)."""
    return " " + prints_reason(_("your tiled kernel"), call, size) if tiled_prints else ""
