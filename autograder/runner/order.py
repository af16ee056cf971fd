"""The order a grading slot runs a student's notebooks in: staggered, so the slots are not in step.

nbgrader runs a student's notebooks in name order (``sorted`` in its ``convert_notebooks``). Every
slot of a class starts at once with a full submission, so every slot ran the same notebook at
the same moment: on the 16-core H100 box (20 slots, 40 full submissions, 2026-12-07,
``session.sh slots``; docs/grading-cost.md) all of them reached the notebooks with GPU timings
within seconds of each other, and for 20 s the GPU was 57-71 % busy while the cores were
19-49 % busy; then all of them ran the CPU-heavy notebooks while the GPU idled. The cores were
busy 60 % of the run, the GPU 24 %.

Slot ``i`` of ``S`` instead starts each of its students at notebook ``⌊i·N/S⌋`` of the ``N``
handed in and goes round from there: the slots are spread over the notebooks, so some run the
GPU's notebooks while others run the cores'. Every notebook is still graded exactly once and
alone in its own kernel, so the order changes no verdict; a student graded outside the slots
(the retry, ``nbgrader autograde --student``) gets nbgrader's own order.

``COURSE_GRADING_STAGGER=0`` turns it off (name order everywhere): for measuring the difference
on one machine (``scripts/gpu/throughput.py --no-stagger``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

#: set to 0 to grade every student's notebooks in name order (measuring only)
STAGGER_ENV = "COURSE_GRADING_STAGGER"


def stagger_on() -> bool:
    """Whether slots stagger their notebooks (on unless ``COURSE_GRADING_STAGGER=0``)."""
    return os.environ.get(STAGGER_ENV, "1").strip() != "0"


def first_notebook(count: int, slot: int, slots: int) -> int:
    """Which of ``count`` notebooks (in name order) slot ``slot`` of ``slots`` starts with."""
    if not 0 <= slot < slots:
        raise ValueError(f"slot {slot} of {slots}: a slot is numbered from 0 to slots - 1")
    return slot * max(count, 0) // slots


def staggered(paths: Sequence[str], slot: int, slots: int) -> list[str]:
    """``paths`` in name order, started at :func:`first_notebook` and wrapped round."""
    ordered = sorted(paths)
    start = first_notebook(len(ordered), slot, slots)
    return ordered[start:] + ordered[:start]


class RankedPath(str):
    """A notebook's path that sorts by its place in the slot's order, not by its name.

    nbgrader sorts the paths it is given right before it runs them; a path of this class keeps
    its text (every use of it as a path is unchanged) and compares by :attr:`rank`.
    """

    rank: int

    def __new__(cls, path: str, rank: int) -> RankedPath:
        ranked = super().__new__(cls, path)
        ranked.rank = rank
        return ranked

    def _order(self, other: object) -> tuple[object, object]:
        if isinstance(other, RankedPath):
            return (self.rank, str(self)), (other.rank, str(other))
        return str(self), other

    def __lt__(self, other: object) -> bool:
        mine, theirs = self._order(other)
        return mine < theirs  # type: ignore[operator]

    def __le__(self, other: object) -> bool:
        mine, theirs = self._order(other)
        return mine <= theirs  # type: ignore[operator]

    def __gt__(self, other: object) -> bool:
        mine, theirs = self._order(other)
        return mine > theirs  # type: ignore[operator]

    def __ge__(self, other: object) -> bool:
        mine, theirs = self._order(other)
        return mine >= theirs  # type: ignore[operator]

    def __hash__(self) -> int:
        return str.__hash__(self)


def in_grading_order(paths: Sequence[str], slot: int, slots: int) -> list[str]:
    """``paths`` as :class:`RankedPath` objects that ``sorted`` puts in :func:`staggered` order."""
    return [RankedPath(path, rank) for rank, path in enumerate(staggered(paths, slot, slots))]
