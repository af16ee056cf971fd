"""Tests for course.perf.experiment: the write-up's inputs, the correctness run, table and chart.

The correctness path runs on the simulator (small sizes); the timed path needs a GPU and is
checked here only for refusing to run without one, plus one GPU-marked test.
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from kernels_for_tests import (  # noqa: E402
    does_nothing,
    gemm_naive,
    make_gemm_tiled,
    make_gemm_tiled_floor,
)

import course  # noqa: E402, F401  (before numba: picks GPU or simulator)
from course.perf.experiment import (
    CUBLAS,
    NAIVE,
    NUMPY,
    WRITEUP_RESULTS,
    ExperimentResult,
    Row,
    check_writeup_correctness,
    exact_product,
    run_writeup_experiment,
    smoke_test,
    tiled_name,
    writeup_inputs,
)
from course.perf.experiment_report import format_table, plot_experiment
from course.runtime import backend  # noqa: E402

ON_GPU = backend.detect().kind == "gpu"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


# ----------------------------------------------------------------------------- write-up inputs


def test_writeup_inputs_follow_the_flat_index_patterns():
    A, B = writeup_inputs(3, 5, 7)
    assert A.shape == (3, 7) and B.shape == (7, 5)
    assert A.dtype == np.float32 and B.dtype == np.float32
    assert A.flags.c_contiguous and B.flags.c_contiguous
    i = np.arange(21)
    np.testing.assert_array_equal(A.ravel(), (i % 13) - 6)
    np.testing.assert_array_equal(B.ravel(), ((np.arange(35) % 7) - 3))
    # the pattern runs on across row ends: A[1, 0] is flat index 7
    assert A[1, 0] == (7 % 13) - 6 == 1
    assert A[0, 0] == -6 and B[0, 0] == -3


def test_writeup_inputs_stay_within_the_writeup_ranges():
    A, B = writeup_inputs(40, 30, 50)
    assert A.min() == -6 and A.max() == 6
    assert B.min() == -3 and B.max() == 3


@pytest.mark.parametrize("bad", [0, -1, 2.5, True, "8"])
def test_writeup_inputs_rejects_bad_sizes(bad):
    with pytest.raises(ValueError, match="K"):
        writeup_inputs(4, 4, bad)


def test_exact_product_matches_integer_arithmetic():
    A, B = writeup_inputs(17, 9, 23)
    ref = exact_product(A, B)
    np.testing.assert_array_equal(ref, A.astype(np.int64) @ B.astype(np.int64))


def test_float32_sums_of_writeup_inputs_are_exact_in_any_order():
    """The reason max|diff| is 0: partial sums are small integers, exact in float32."""
    A, B = writeup_inputs(8, 8, 1024)
    ref = exact_product(A, B)
    rng = np.random.default_rng(0)
    for _ in range(3):
        order = rng.permutation(1024)
        acc = np.zeros((8, 8), np.float32)
        for k in order:
            acc += np.outer(A[:, k], B[k, :]).astype(np.float32)
        np.testing.assert_array_equal(acc, ref)


# ----------------------------------------------------------------------------- write-up numbers


def test_writeup_numbers_are_consistent():
    s = WRITEUP_RESULTS
    assert (s.size, s.iters, s.tile, s.naive_block) == (1024, 50, 32, 16)
    assert s.tiled_ms / s.naive_ms == pytest.approx(s.tiled_over_naive, abs=1e-4)
    assert s.flops == pytest.approx(2.147e9, rel=1e-3)
    assert s.naive_gflops == pytest.approx(730, abs=1)
    assert s.tiled_gflops == pytest.approx(857, abs=1)
    assert s.max_abs_diff == 0


# ------------------------------------------------------------------------------ correctness


def test_correctness_run_gives_exact_results():
    result = check_writeup_correctness(gemm_naive, make_gemm_tiled, size=20, tile=8)
    assert [r.name for r in result.rows] == [NAIVE, tiled_name(8), NUMPY]
    assert all(r.max_abs_diff == 0 for r in result.rows)
    assert result.max_abs_diff_tiled_vs_naive == 0
    assert not result.timed and result.tiled_over_naive is None


def test_correctness_run_can_fail():
    """A tiled kernel that drops the last partial step along K is caught (K = 20, tile 8)."""
    result = check_writeup_correctness(gemm_naive, make_gemm_tiled_floor, size=20, tile=8)
    assert result.row(NAIVE).max_abs_diff == 0
    assert result.row(tiled_name(8)).max_abs_diff > 0
    assert result.max_abs_diff_tiled_vs_naive > 0


def test_correctness_run_rejects_a_tile_outside_the_contract():
    with pytest.raises(ValueError, match="tile"):
        check_writeup_correctness(gemm_naive, make_gemm_tiled, size=8, tile=5)


@pytest.mark.skipif(ON_GPU, reason="checks the simulator's refusal to time")
def test_timing_refuses_to_run_without_a_gpu():
    with pytest.raises(backend.NoGPUError, match="needs a real CUDA GPU"):
        run_writeup_experiment(gemm_naive, make_gemm_tiled, size=16, iters=2, tile=8)


# ------------------------------------------------------------------------------ table, chart


def fake_timed_result(with_cublas: bool = True) -> ExperimentResult:
    rows = [
        Row(NAIVE, "GPU", 1.6612, 1292.7, 0.0),
        Row(tiled_name(32), "GPU", 0.3105, 6916.2, 0.0),
    ]
    if with_cublas:
        rows.append(Row(CUBLAS, "GPU", 0.0839, 25595.0, 0.0))
    rows.append(Row(NUMPY, "CPU", 21.5, 99.9, 0.0))
    return ExperimentResult(1024, 50, 32, "Test GPU", tuple(rows), 0.0,
                            () if with_cublas else ("cuBLAS row skipped: no CuPy",))


def test_format_table_puts_the_writeup_beside_the_kernels():
    text = format_table(fake_timed_result())
    lines = text.splitlines()
    assert "1024×1024×1024" in lines[0] and "Test GPU" in lines[0]
    naive_line = next(ln for ln in lines if ln.startswith(NAIVE))
    assert "1.6612" in naive_line and "2.9437" in naive_line and "730" in naive_line
    tiled_line = next(ln for ln in lines if ln.startswith(tiled_name(32)))
    assert "0.3105" in tiled_line and "2.5054" in tiled_line and "857" in tiled_line
    numpy_line = next(ln for ln in lines if ln.startswith(NUMPY))
    assert "CPU" in numpy_line and numpy_line.rstrip().endswith("—")
    ratio = 0.3105 / 1.6612
    assert f"{ratio:.4f}×" in text and "0.8511×" in text
    # columns line up: every table row is as wide as the header
    table = lines[1:3 + 4]
    assert len({len(ln.rstrip()) for ln in table[:2]}) == 1


def test_format_table_of_a_correctness_run_shows_no_timings():
    result = check_writeup_correctness(gemm_naive, make_gemm_tiled, size=8, tile=4)
    text = format_table(result)
    assert "correctness only" in text
    assert "—" in text and "(write-up:" in text
    assert "the write-up ran at 1024³" in text
    # tile 4 is not the write-up's tile: no write-up numbers on the tiled row
    tiled_line = next(ln for ln in text.splitlines() if ln.startswith(tiled_name(4)))
    assert "2.5054" not in tiled_line


def test_format_table_lists_notes():
    assert "cuBLAS row skipped: no CuPy" in format_table(fake_timed_result(with_cublas=False))


def test_plot_draws_one_bar_per_timed_row_plus_the_writeup():
    ax = plot_experiment(fake_timed_result())
    bars = ax.patches
    assert len(bars) == 4 + 2
    widths = sorted(b.get_width() for b in bars)
    assert widths[0] == pytest.approx(99.9)
    assert any(math.isclose(w, WRITEUP_RESULTS.naive_gflops) for w in widths)
    assert ax.get_xscale() == "log"
    assert sum(1 for b in bars if b.get_hatch()) == 2


def test_plot_refuses_an_untimed_result():
    result = check_writeup_correctness(gemm_naive, make_gemm_tiled, size=4, tile=4)
    with pytest.raises(ValueError, match="timed"):
        plot_experiment(result)


# ------------------------------------------------------------------------------ on a GPU


@pytest.mark.gpu
@pytest.mark.skipif(not ON_GPU, reason="needs a real CUDA GPU (timings)")
def test_timed_run_on_a_gpu():
    result = run_writeup_experiment(gemm_naive, make_gemm_tiled, size=256, iters=5, tile=16,
                                 trials=2, numpy_runs=1)
    names = [r.name for r in result.rows]
    assert names[:2] == [NAIVE, tiled_name(16)] and names[-1] == NUMPY
    for r in result.rows:
        assert r.max_abs_diff == 0, r
        assert r.avg_ms > 0 and r.gflops > 0
    assert result.max_abs_diff_tiled_vs_naive == 0
    assert result.tiled_over_naive > 0


# ------------------------------------------------------------------------------ smoke test


def test_smoke_test_accepts_written_kernels():
    smoke_test(gemm_naive, make_gemm_tiled)


def test_smoke_test_names_the_unwritten_notebook():
    from course.notebooks.reuse import MissingAnswerError

    def unwritten_factory(tile):
        raise NotImplementedError()

    with pytest.raises(MissingAnswerError, match="make_gemm_tiled .notebook 3. is not written"):
        smoke_test(gemm_naive, unwritten_factory)


def test_smoke_test_puts_a_failing_kernel_in_one_line():
    from kernels_for_tests import gemm_naive_no_bounds

    from course.notebooks.reuse import MissingAnswerError

    if ON_GPU:
        pytest.skip("on a GPU an index out of range raises nothing; the simulator stops at it")
    with pytest.raises(MissingAnswerError) as info:
        smoke_test(gemm_naive_no_bounds, make_gemm_tiled)
    msg = str(info.value)
    assert msg.startswith("gemm_naive (notebook 2): an index out of range in thread (")
    assert msg.endswith("Pass that notebook's tests first.") and "\n" not in msg


def test_smoke_test_catches_a_kernel_that_does_nothing():
    from course.notebooks.reuse import MissingAnswerError

    with pytest.raises(MissingAnswerError, match="gemm_naive .notebook 2. computes"):
        smoke_test(does_nothing, make_gemm_tiled)
