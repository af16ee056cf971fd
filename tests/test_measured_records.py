"""The trusted re-check keeps a speedup's numbers beside its verdict (the class report reads
them: autograder/report/), and keeping them never changes the verdict."""

from __future__ import annotations

import pytest

from autograder.grading import trusted_child
from course.checks import speedup


def _job(code: str) -> dict:
    return {"grade_id": "tiled_speedup", "code": code,
            "bundle": {"source": "\n", "names": []}, "setup_error": None}


def _judged(ms: dict[str, float], threshold: float = 2.0) -> str:
    return ("from course.checks.speedup import judge, report_from\n"
            f"judge(report_from({{'ms': {ms!r}, 'device': 'NVIDIA H200'}}, 2048, 32, "
            f"{threshold}, 'H200 class'))\n")


@pytest.fixture(autouse=True)
def _nothing_measured_before() -> None:
    speedup.take_measured()  # nothing from another test


def test_a_passing_speedup_keeps_its_times_gflops_and_gpu() -> None:
    out = trusted_child._run_one(_job(_judged({"tiled": 2.0, "own naive": 10.0,
                                               "reference naive": 12.0})))
    assert out["status"] == "pass", out
    m = out["measured"]
    assert m["device"] == "NVIDIA H200" and m["size"] == 2048 and m["tile"] == 32
    assert m["ms"] == {"tiled": 2.0, "own naive": 10.0, "reference naive": 12.0}
    assert m["speedup"] == pytest.approx(6.0)  # against the course's naive kernel
    assert m["vs_own_naive"] == pytest.approx(5.0)
    assert m["gflops"]["tiled"] == pytest.approx(2 * 2048**3 / 2.0e6, rel=1e-3)


def test_a_failing_speedup_still_fails_and_keeps_its_numbers() -> None:
    out = trusted_child._run_one(_job(_judged({"tiled": 9.0, "own naive": 10.0})))
    assert out["status"] == "fail" and out["ename"] == "SpeedupCheckError", out
    assert out["measured"]["speedup"] == pytest.approx(10 / 9, rel=1e-3)


def test_a_cell_that_measures_nothing_records_nothing_and_no_cell_inherits_another() -> None:
    speedup.judge(speedup.report_from({"ms": {"tiled": 1.0, "own naive": 9.0}}, 2048, 32, 2.0))
    out = trusted_child._run_one(_job("x = 1\n"))
    assert out["status"] == "pass" and "measured" not in out, out
