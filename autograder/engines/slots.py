"""How many students this machine grades at once, and in which order they are taken.

**The default slot count.** Without a GPU the notebooks run on Numba's simulator, CPU work from
start to end: one slot per core, at most 4 (each slot's sandboxes may take up to
``COURSE_MEMORY_LIMIT`` apiece). With a GPU, one slot per core and a quarter more
(:data:`GPU_OVERSUBSCRIPTION`): a slot is not a busy core there. Measured on the 16-core H200
box (issue 39: 16 slots, 16 full submissions in 96 s wall, about 70 CPU-s each), 16 slots kept
about 16 × 70 / 96 = 11.7 of the 16 cores busy, each slot 73 %: the rest of its time it waits
for its kernel to start, for nbgrader's messages and for the GPU lock of its speedup timings.
Half the cores (the default before) left half the box idle.

**Balanced slots.** ``students`` taken ``limit`` at a time need ``rounds = ⌈students / limit⌉``
rounds; the same rounds with ``⌈students / rounds⌉`` slots leave fewer slots idle in the last
round (100 students, 16 slots: 7 rounds, the last 4 of 16 busy; 15 slots: still 7 rounds, the
last 10 of 15), and fewer slots share the cores in every round before it.

**Longest first.** Students are handed to the slots by expected cost, most notebooks handed in
first (the order of the class otherwise): a student with one notebook is a short job that fills
the tail, not a full submission that starts last and runs alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

from autograder.runner.names import ASSIGNMENT

#: slots per core on a GPU machine (see the module's docstring for the measure behind it)
GPU_OVERSUBSCRIPTION = 1.25
#: slots at most on a machine without a GPU
CPU_ONLY_MAX = 4


def default_slots(cores: int, gpus: int) -> int:
    """Students graded at once by default on a machine with ``cores`` cores and ``gpus`` GPUs:
    ``min(4, cores)`` without a GPU; ``cores × 1.25`` with one, and at least one slot per GPU
    (so that every GPU grading may use is used)."""
    cores = max(1, cores)
    if gpus < 1:
        return min(CPU_ONLY_MAX, cores)
    return max(gpus, int(cores * GPU_OVERSUBSCRIPTION))


def rounds(students: int, slots: int) -> int:
    """How many rounds ``students`` take ``slots`` at a time (0 for no student)."""
    if slots < 1:
        raise ValueError(f"slots must be at least 1, got {slots}")
    return math.ceil(max(0, students) / slots)


def balanced(students: int, limit: int) -> int:
    """The fewest slots, at most ``limit``, that grade ``students`` in as few rounds as
    ``limit`` slots do: ``⌈students / ⌈students / limit⌉⌉`` (0 for no student)."""
    needed = rounds(students, limit)
    return math.ceil(students / needed) if needed else 0


def describe(students: int, limit: int) -> str:
    """The plan as the instructor reads it before grading starts:
    ``15 at a time: 7 rounds, the last 10 of 15`` (100 students, at most 16 slots)."""
    slots = balanced(students, limit)
    if slots == 0:
        return "nobody to grade"
    needed = rounds(students, slots)
    last = students - (needed - 1) * slots
    return (f"{slots} at a time" + (f": {needed} rounds" if needed > 1 else "")
            + (f", the last {last} of {slots}" if last != slots else ""))


def notebooks_handed_in(root: Path, student: str) -> int:
    """How many notebooks ``student`` handed in (``submitted/<student>/<assignment>``): the
    grading cost expected of them, a notebook each."""
    return len(list((root / "submitted" / student / ASSIGNMENT).glob("*.ipynb")))


def longest_first(students: Sequence[str], cost: Callable[[str], int]) -> list[str]:
    """``students`` ordered by ``cost``, highest first; equal costs keep the class's order."""
    return sorted(students, key=lambda s: -cost(s))
