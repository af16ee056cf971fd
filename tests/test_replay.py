"""The trusted re-check's outcomes, replayed in the student's kernel (course/trust/replay.py):
the same check on the same source prints, returns and raises what the re-check recorded,
without computing it again; anything else is computed as before."""

from __future__ import annotations

import kernels_for_tests as kft
import pytest

from course.checks import gemm
from course.runtime import backend
from course.trust import replay
from course.trust.kernel_source import SourceBundle, bundle_from_objects

CALLS: list[str] = []


@replay.replayable
def check_stand_in(kernel, shapes=((3, 4, 5),), fail: bool = False):
    """A check that says when it really ran."""
    CALLS.append(kernel.__name__ if hasattr(kernel, "__name__") else "?")
    print(f"✓ ran on {len(shapes)} shape(s)")
    if fail:
        raise AssertionError("wrong at 3×4×5: C[0, 0] is 7, expected 8")
    return {"shapes": len(shapes)}


@pytest.fixture
def grading(monkeypatch, tmp_path):
    """Record as the re-check does, then switch to the kernel's side; returns the switch."""
    CALLS.clear()
    path = tmp_path / "replay.jsonl"
    replay.record_to(path)
    monkeypatch.delenv(backend.TRUSTED_ENV, raising=False)

    def to_kernel() -> None:
        replay.record_to(None)
        replay._LOADED.clear()
        monkeypatch.setenv(replay.REPLAY_ENV, str(path))
        monkeypatch.setenv(backend.AUTOGRADE_ENV, "autograde")

    yield to_kernel
    replay.record_to(None)
    replay._LOADED.clear()


def rebuilt(obj):
    """``obj`` as the trusted re-check holds it: rebuilt from its source in a fresh namespace."""
    return SourceBundle.from_json(bundle_from_objects({"k": obj}).to_json()).load()["k"]


def test_a_kernel_rebuilt_from_its_source_has_the_same_key():
    for obj in (kft.gemm_naive, kft.make_gemm_tiled):
        assert replay.key("check", (rebuilt(obj),), {"tile": 8}) == \
            replay.key("check", (obj,), {"tile": 8})
    assert replay.key("check", (kft.gemm_naive,), {}) != \
        replay.key("check", (kft.gemm_naive_no_bounds,), {})
    assert replay.key("check", (kft.gemm_naive,), {"tile": 8}) != \
        replay.key("check", (kft.gemm_naive,), {"tile": 16})
    assert replay.key("check", (object(),), {}) is None  # not keyable: the check just runs


def test_the_kernel_replays_what_the_recheck_printed_and_returned(grading, capsys):
    assert check_stand_in(rebuilt(kft.gemm_naive)) == {"shapes": 1}  # the re-check
    grading()
    recorded = capsys.readouterr().out
    assert check_stand_in(kft.gemm_naive) == {"shapes": 1}  # the kernel: replayed
    assert capsys.readouterr().out == recorded == "✓ ran on 1 shape(s)\n"
    assert CALLS == ["gemm_naive"]  # computed once, by the re-check


def test_the_kernel_replays_a_failure_with_its_message(grading):
    with pytest.raises(AssertionError):
        check_stand_in(rebuilt(kft.gemm_naive), fail=True)
    grading()
    with pytest.raises(AssertionError, match=r"^wrong at 3×4×5: C\[0, 0\] is 7, expected 8$"):
        check_stand_in(kft.gemm_naive, fail=True)
    assert len(CALLS) == 1


def test_other_source_or_arguments_are_checked_afresh(grading):
    check_stand_in(rebuilt(kft.gemm_naive))
    grading()
    check_stand_in(kft.gemm_naive_no_bounds)
    check_stand_in(kft.gemm_naive, shapes=((1, 1, 1), (2, 2, 2)))
    assert len(CALLS) == 3


def test_nothing_is_replayed_outside_grading(grading, monkeypatch):
    check_stand_in(rebuilt(kft.gemm_naive))
    grading()
    monkeypatch.delenv(backend.AUTOGRADE_ENV)
    check_stand_in(kft.gemm_naive)
    assert len(CALLS) == 2


def test_a_real_check_replays_its_report(grading, capsys, monkeypatch):
    report = gemm.check_naive_gemm(rebuilt(kft.gemm_naive), shapes=((5, 7, 9),), seed=1)
    grading()
    first = capsys.readouterr().out

    def not_again(*args, **kwargs):
        raise AssertionError("the kernel ran the check again instead of replaying it")

    monkeypatch.setattr(gemm, "run_cases", not_again)
    again = gemm.check_naive_gemm(kft.gemm_naive, shapes=((5, 7, 9),), seed=1)
    assert again == report and capsys.readouterr().out == first
    with pytest.raises(AssertionError, match="ran the check again"):  # a different shape runs
        gemm.check_naive_gemm(kft.gemm_naive, shapes=((5, 7, 8),), seed=1)


def fake_kind(monkeypatch, kind: str) -> None:
    """Make ``backend.detect()`` say ``kind`` (the re-check's GPU, the kernel's simulator)."""
    real = backend.detect()
    monkeypatch.setattr(backend, "detect", lambda: type(real)(kind=kind, reason="test"))


def test_shapes_chosen_by_kind_replay_across_backends(grading, capsys, monkeypatch):
    """Grading on a GPU machine: the re-check runs on the GPU, the student's kernel on the
    simulator. A test cell that passes ``backend.by_kind(gpu=..., simulator=...)`` calls the
    check with the same arguments in both, so the kernel replays the GPU's outcome instead of
    simulating the check again; a cell that chose its shapes itself would not have."""
    shapes = backend.by_kind(gpu=[(5, 7, 9), (3, 2, 1)], simulator=[(4, 4, 4)])
    assert replay.key("c", (), {"shapes": shapes}) == \
        replay.key("c", (), {"shapes": backend.by_kind(gpu=[(5, 7, 9), (3, 2, 1)],
                                                        simulator=[(4, 4, 4)])})
    assert replay.key("c", (), {"shapes": shapes}) != replay.key("c", (), {"shapes": [(4, 4, 4)]})
    ran: list[tuple] = []
    real_run_cases = gemm.run_cases

    def counting(gk, shapes, *args, **kwargs):
        ran.append(tuple(shapes))
        return real_run_cases(gk, shapes, *args, **kwargs)

    monkeypatch.setattr(gemm, "run_cases", counting)
    with monkeypatch.context() as on_gpu:  # the re-check: a GPU (simulated here), GPU shapes
        fake_kind(on_gpu, "gpu")
        report = gemm.check_naive_gemm(rebuilt(kft.gemm_naive), shapes=shapes, seed=1)
    assert ran == [((5, 7, 9), (3, 2, 1))] and report.shapes == ((5, 7, 9), (3, 2, 1))
    grading()
    first = capsys.readouterr().out
    fake_kind(monkeypatch, "simulator")  # the kernel: the simulator, the same call
    assert backend.resolve(shapes) == [(4, 4, 4)]
    again = gemm.check_naive_gemm(kft.gemm_naive, shapes=shapes, seed=1)
    assert again == report and capsys.readouterr().out == first
    assert len(ran) == 1  # replayed, not simulated again


class NeedsTwo(AssertionError):
    def __init__(self, shape, why):
        super().__init__(f"{shape}: {why}")


@replay.replayable
def check_odd_error(kernel):
    CALLS.append("odd")
    raise NeedsTwo((3, 4, 5), "wrong")


def test_an_outcome_that_would_not_load_the_same_is_computed_again(grading):
    """An exception whose __init__ wants other arguments does not unpickle as itself: it is
    not recorded, and the kernel runs the check (same verdict) instead of crashing."""
    with pytest.raises(NeedsTwo):
        check_odd_error(rebuilt(kft.gemm_naive))
    grading()
    with pytest.raises(NeedsTwo, match=r"^\(3, 4, 5\): wrong$"):
        check_odd_error(kft.gemm_naive)
    assert CALLS == ["odd", "odd"]


def test_a_damaged_record_is_computed_again(grading, tmp_path):
    check_stand_in(rebuilt(kft.gemm_naive))
    path = tmp_path / "replay.jsonl"
    entry = path.read_text().replace('"value": "', '"value": "xx')
    path.write_text(entry)
    grading()
    assert check_stand_in(kft.gemm_naive) == {"shapes": 1}
    assert len(CALLS) == 2


def test_the_grader_and_the_kernel_name_the_same_variable():
    from autograder.sandbox import bwrap as sandbox

    assert sandbox.REPLAY_ENV == replay.REPLAY_ENV


def test_no_test_cell_chooses_its_arguments_by_backend_itself():
    """Every test cell that needs other arguments on a GPU passes ``backend.by_kind`` (see the
    test above): a cell that branches on ``backend.detect()`` makes the check's call differ
    between the GPU re-check and the simulator kernel, which then simulates it again."""
    import json
    from pathlib import Path

    branching = []
    for path in sorted(Path(__file__).parents[1].glob("source/week4/*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if meta.get("grade") and "backend.detect()" in "".join(cell["source"]):
                branching.append(f"{path.name}: {meta.get('grade_id')}")
    assert not branching, branching
