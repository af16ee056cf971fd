"""course.notebooks.kernel_roofline: one call behind the "time, then plot the roofline" cells."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

from autograder.answers.intensity import naive_model, tiled_model  # noqa: E402
from course.gemm.reads import naive_reads, tiled_reads  # noqa: E402
from course.notebooks import kernel_roofline  # noqa: E402
from course.runtime import backend  # noqa: E402
from tests.kernels_for_tests import gemm_naive, make_gemm_tiled  # noqa: E402


def test_modelled_ai_is_notebook_1s_request_model():
    for M, N, K in [(2048, 2048, 2048), (100, 37, 45)]:
        assert kernel_roofline.modelled_ai(naive_reads(M, N, K), M, N, K) == pytest.approx(
            naive_model(M, N, K))
        for t in (8, 16, 32):
            assert kernel_roofline.modelled_ai(tiled_reads(M, N, K, t), M, N, K) == (
                pytest.approx(tiled_model(M, N, K, t)))
    assert kernel_roofline.modelled_ai(10, 2) == pytest.approx(16 / 56)


def test_week_intensities_are_the_tables_numbers():
    got = kernel_roofline.week_intensities(2048)
    assert list(got) == ["vector add", "naive", "tiled 8", "tiled 16", "tiled 32", "cuBLAS"]
    assert got["vector add"] == pytest.approx(1 / 12)
    assert got["naive"] == pytest.approx(0.25, rel=1e-3)
    assert got["tiled 32"] == pytest.approx(8, rel=1e-2)
    assert got["cuBLAS"] == pytest.approx(2048 / 6)


@pytest.mark.skipif(backend.detect().can_time, reason="checks the path without a GPU")
def test_without_a_gpu_nothing_is_timed_and_the_cell_says_so(capsys):
    assert kernel_roofline.plot_tiled_roofline(gemm_naive, make_gemm_tiled, size=64) == []
    out = capsys.readouterr().out
    assert "tiled 32" in out and "Measured points need a GPU" in out
    assert kernel_roofline.plot_week_roofline({}, None, size=64) == []
    assert "cuBLAS" in capsys.readouterr().out
    assert kernel_roofline.plot_register_tiling(lambda: None) == []
    assert "Timing needs a GPU" in capsys.readouterr().out


def test_while_grading_everything_is_skipped(monkeypatch, capsys):
    monkeypatch.setenv(backend.AUTOGRADE_ENV, "autograde")
    assert kernel_roofline.plot_tiled_roofline(gemm_naive, make_gemm_tiled) == []
    assert kernel_roofline.plot_week_roofline({}, None) == []
    assert kernel_roofline.plot_register_tiling(lambda: None) == []
    assert kernel_roofline.load_kernels_or_explain(skip_while_grading=True) is None
    assert capsys.readouterr().out.count(kernel_roofline.SKIPPED) == 4


def test_missing_notebooks_give_none_and_the_reason(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert kernel_roofline.load_kernels_or_explain("Numba") is None
    assert "02_naive_gemm.ipynb was not found" in capsys.readouterr().out


@pytest.mark.gpu
def test_on_a_gpu_the_kernels_are_timed_and_drawn(capsys):
    points = kernel_roofline.plot_tiled_roofline(gemm_naive, make_gemm_tiled, size=512)
    assert [p.label for p in points] == ["naive", "tiled 8", "tiled 16", "tiled 32"]
    assert all(p.gflops > 0 for p in points)
