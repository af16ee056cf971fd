"""A student does one track of notebooks 2 and 3: the other track never lowers the total."""

from __future__ import annotations

from autograder.results.table import Row, choose_track, render

NOTEBOOKS = ["01_arithmetic_intensity", "02_naive_gemm", "02c_naive_gemm_cuda", "03_tiled_gemm",
             "03c_tiled_gemm_cuda"]


def row(scores: dict[str, tuple[float, float]], missing: list[str]) -> Row:
    r = Row("s", scores=dict(scores), missing=list(missing))
    choose_track(r, NOTEBOOKS)
    return r


def test_the_handed_in_track_counts_and_the_other_is_left_out() -> None:
    r = row({"01_arithmetic_intensity": (11, 11), "02_naive_gemm": (0, 6),
             "03_tiled_gemm": (0, 11), "02c_naive_gemm_cuda": (6, 6),
             "03c_tiled_gemm_cuda": (11, 11)}, missing=["02_naive_gemm", "03_tiled_gemm"])
    assert r.track == "CUDA C"
    assert r.off_track == ["02_naive_gemm", "03_tiled_gemm"]
    table = render(NOTEBOOKS, [r])
    assert "28/28" in table and "track: CUDA C" in table
    # without the track rule the same row would read 28/45
    assert "28/45" not in table


def test_both_tracks_handed_in_keeps_the_better_one() -> None:
    r = row({"02_naive_gemm": (6, 6), "03_tiled_gemm": (3, 11),
             "02c_naive_gemm_cuda": (6, 6), "03c_tiled_gemm_cuda": (8, 11)}, missing=[])
    assert r.track == "CUDA C" and set(r.off_track) == {"02_naive_gemm", "03_tiled_gemm"}
    r = row({"02_naive_gemm": (6, 6), "03_tiled_gemm": (11, 11),
             "02c_naive_gemm_cuda": (0, 6), "03c_tiled_gemm_cuda": (0, 11)}, missing=[])
    assert r.track == "Numba"


def test_one_track_only_in_the_assignment_changes_nothing() -> None:
    r = Row("s", scores={"02_naive_gemm": (6, 6)})
    choose_track(r, ["01_arithmetic_intensity", "02_naive_gemm", "03_tiled_gemm"])
    assert r.track == "" and r.off_track == []
