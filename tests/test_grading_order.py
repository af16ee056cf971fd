"""The order a grading slot runs a student's notebooks in (autograder/runner/order.py).

Every notebook exactly once, slot 0 in nbgrader's name order, the slots' first notebooks spread
over the submission; and through nbgrader's own ``convert_notebooks`` (which sorts the paths it
is given right before it runs them), the slot's order is the one that runs.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from autograder.runner import order
from autograder.runner.worker import staggered_autograde

NOTEBOOKS = ["00_setup", "01_arithmetic_intensity", "02_naive_gemm", "02c_naive_gemm_cuda",
             "03_tiled_gemm", "03c_tiled_gemm_cuda", "04_writeup_experiment", "05_roofline",
             "06_tile_sweep", "07_bonus_register_tiling"]


def _paths(names: list[str]) -> list[str]:
    return [f"/course/submitted/ada/week4/{name}.ipynb" for name in names]


@pytest.mark.parametrize("slots", [1, 2, 3, 15, 16, 20, 40])
@pytest.mark.parametrize("count", [1, 2, 7, 10])
def test_every_slot_runs_every_notebook_once_and_the_slots_start_spread(
        slots: int, count: int) -> None:
    paths = _paths(NOTEBOOKS[:count])
    shuffled = paths[::-1]
    firsts = Counter()
    for slot in range(slots):
        mine = order.staggered(shuffled, slot, slots)
        assert sorted(mine) == sorted(paths)  # each exactly once
        start = paths.index(mine[0])
        assert mine == paths[start:] + paths[:start]  # name order, wrapped round
        firsts[start] += 1
    assert order.staggered(shuffled, 0, slots) == paths  # slot 0: nbgrader's own order
    assert order.staggered([], slots - 1, slots) == []
    with pytest.raises(ValueError, match="numbered from 0"):
        order.staggered(paths, slots, slots)  # a wiring mistake is said, not hidden
    # as many different first notebooks as there can be, each as often as the others ±1
    assert len(firsts) == min(count, slots)
    assert max(firsts.values()) - min(firsts.values()) <= 1


def test_a_ranked_path_is_its_path_and_sorts_by_its_place() -> None:
    paths = _paths(NOTEBOOKS)
    ranked = order.in_grading_order(paths[::-1], 4, 10)
    assert sorted(ranked) == order.staggered(paths, 4, 10)
    assert sorted(ranked)[0] == paths[4]
    assert ranked == order.staggered(paths, 4, 10)  # equal as text
    assert {os.path.basename(p) for p in ranked} == {f"{n}.ipynb" for n in NOTEBOOKS}
    assert ranked[0] in set(paths) and hash(ranked[0]) == hash(str(ranked[0]))
    assert type(os.path.join(ranked[0], "x")) is str


def _course(root: Path, student: str) -> None:
    folder = root / "submitted" / student / "week4"
    folder.mkdir(parents=True)
    for name in NOTEBOOKS:
        (folder / f"{name}.ipynb").write_text("{}")


def _order_run(root: Path, slot: int, slots: int, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The notebooks nbgrader's own ``convert_notebooks`` loop hands to
    ``convert_single_notebook``, in order, for slot ``slot`` of ``slots`` (nothing graded)."""
    from nbgrader.coursedir import CourseDirectory

    converter_class = staggered_autograde(slot, slots)
    ran: list[str] = []
    monkeypatch.setattr(converter_class, "init_destination", lambda self, a, s: True)
    monkeypatch.setattr(converter_class, "init_assignment", lambda self, a, s: None)
    monkeypatch.setattr(converter_class, "set_permissions", lambda self, a, s: None)
    monkeypatch.setattr(converter_class, "convert_single_notebook",
                        lambda self, path: ran.append(Path(path).stem))
    coursedir = CourseDirectory(root=str(root))
    coursedir.assignment_id, coursedir.student_id = "week4", "ada"
    converter = converter_class(coursedir=coursedir)
    converter.init_notebooks()
    converter.convert_notebooks()
    return ran


def test_nbgrader_runs_the_notebooks_in_the_slots_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _course(tmp_path, "ada")
    assert _order_run(tmp_path, 0, 20, monkeypatch) == NOTEBOOKS
    assert _order_run(tmp_path, 13, 20, monkeypatch) == NOTEBOOKS[6:] + NOTEBOOKS[:6]
    monkeypatch.setenv(order.STAGGER_ENV, "0")  # measuring: name order everywhere
    assert _order_run(tmp_path, 13, 20, monkeypatch) == NOTEBOOKS
