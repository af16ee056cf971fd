"""Tests for course.perf.sweep and course.perf.widgets, and for the graded cells of notebook 6.

On the simulator the sweep is model only: every row says "needs a GPU", and its occupancy is
exactly course.gemm.occupancy's for the target GPU with the assumed registers and the tile's shared
memory. The panel must build with its CSS classes, run a sweep to 100 %, and, under nbgrader
autograde, return a static summary without building anything that waits for a click. Each
graded cell of notebook 6 is run here with wrong answers to prove it fails.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from course.checks.occupancy import (
    OccupancyPredictionError,
    check_blocks_per_sm_prediction,
    check_occupancy_prediction,
)
from course.gemm.occupancy import ARCH_LIMITS, theoretical_occupancy
from course.gemm.reads import tiled_reads
from course.notebooks.tracks import load_week_kernels
from course.perf.kernel_models import ASSUMED_REGS, resolve_target
from course.perf.sweep import NEEDS_GPU, SweepRow, run_sweep
from course.perf.sweep_table import plot_sweep, rows_to_table
from course.runtime import backend

ROOT = Path(__file__).resolve().parents[1]
WEEK = ROOT / "source" / "week4"
NB06 = WEEK / "06_tile_sweep.ipynb"
MARKERS = re.compile(r"^[ \t]*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)[ \t]*\n?", re.M)
on_simulator = pytest.mark.skipif(backend.detect().kind == "gpu",
                                  reason="checks the model-only behaviour of a GPU-less machine")


def _cells(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text())["cells"]


def _source(cell: dict[str, Any]) -> str:
    return MARKERS.sub("", "".join(cell["source"]))


def _grade_id(cell: dict[str, Any]) -> str:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")


def solution(path: Path, *names: str) -> dict[str, Any]:
    """Definitions from a source notebook's code cells, rebuilt as the grader rebuilds them."""
    from course.trust.kernel_source import bundle_from_cells

    cells = [_source(c) for c in _cells(path) if c["cell_type"] == "code"]
    ns = bundle_from_cells(cells, set(names)).load()
    return {n: ns[n] for n in names}


@pytest.fixture(scope="module")
def week_kernels() -> dict[str, Any]:
    kernels = {}
    kernels.update(solution(WEEK / "02_naive_gemm.ipynb", "gemm_naive"))
    kernels.update(solution(WEEK / "03_tiled_gemm.ipynb", "make_gemm_tiled"))
    return kernels


# ---------------------------------------------------------------------------------------------
# run_sweep on the simulator: the model, and nothing made up.


@on_simulator
def test_model_only_rows_match_the_occupancy_model(week_kernels: dict[str, Any]) -> None:
    rows = run_sweep({"tiled": week_kernels["make_gemm_tiled"],
                      "naive": week_kernels["gemm_naive"]}, size=96, profile="T4",
                     progress=False)
    assert [(r.kernel, r.tile) for r in rows] == [
        (k, t) for k in ("tiled", "naive") for t in (4, 8, 16, 32)]
    for r in rows:
        assert r.measured_ms is None and r.gflops is None
        assert NEEDS_GPU in r.note and "assumed" in r.note
        assert r.regs_per_thread is None and r.regs_in_model == ASSUMED_REGS
        threads = r.tile * r.tile if r.kernel == "tiled" else 256
        smem = 2 * r.tile * r.tile * 4 if r.kernel == "tiled" else 0
        occ = theoretical_occupancy((7, 5), threads, ASSUMED_REGS, smem)
        assert (r.threads_per_block, r.smem_per_block) == (threads, smem)
        assert (r.blocks_per_sm, r.warps_per_sm, r.limited_by) == (
            occ.blocks_per_sm, occ.warps_per_sm, occ.limited_by)
        assert r.occupancy == pytest.approx(occ.occupancy)
        if r.kernel == "tiled":
            ai = 2 * 96**3 / ((tiled_reads(96, 96, 96, r.tile) + 96 * 96) * 4)
            assert r.modelled_ai == pytest.approx(ai)
        else:
            assert r.modelled_ai == pytest.approx(2 * 96**3 / ((2 * 96**3 + 96 * 96) * 4))


@on_simulator
def test_profiles_assumed_registers_and_waves(week_kernels: dict[str, Any]) -> None:
    factory = week_kernels["make_gemm_tiled"]
    assert resolve_target(None).cc == (7, 5)  # no GPU: Colab's T4
    assert [resolve_target(p).cc for p in ("t4", "A100", "H100", "H200")] == [
        (7, 5), (8, 0), (9, 0), (9, 0)]
    with pytest.raises(ValueError, match="unknown GPU profile"):
        resolve_target("GTX 480")
    r32, r40 = (run_sweep({"tiled": factory}, tiles=(32,), size=1024, profile="H200",
                          progress=False, assumed_regs=regs)[0] for regs in (32, 40))
    assert (r32.occupancy, r32.limited_by) == (1.0, "warps")
    assert (r40.occupancy, r40.limited_by) == (0.5, "registers")
    # 1024 blocks of 32×32 on 132 SMs × 2 blocks per SM
    assert r32.grid_blocks == 1024 and r32.waves == pytest.approx(1024 / (2 * 132))
    # a 1024-thread block with 72 registers per thread does not fit a T4 at all
    t4 = run_sweep({"tiled": factory}, tiles=(32,), profile="T4", progress=False,
                   assumed_regs=72)[0]
    assert t4.blocks_per_sm == 0 and t4.limited_by == "does not fit"


@on_simulator
def test_measuring_without_a_gpu_is_refused_and_bad_input_rejected(week_kernels) -> None:
    factory = week_kernels["make_gemm_tiled"]
    with pytest.raises(backend.NoGPUError):
        run_sweep({"tiled": factory}, measure=True, progress=False)
    with pytest.raises(ValueError, match="tiles"):
        run_sweep({"tiled": factory}, tiles=(5,), progress=False)
    with pytest.raises(ValueError, match="size"):
        run_sweep({"tiled": factory}, size=0, progress=False)
    with pytest.raises(TypeError, match="expected gemm_naive"):
        run_sweep({"x": 42}, progress=False)


def test_progress_and_callbacks_never_block(week_kernels: dict[str, Any], capsys) -> None:
    seen: list[tuple[int, int]] = []
    started = time.monotonic()
    rows = run_sweep({"tiled": week_kernels["make_gemm_tiled"]}, size=64, profile="T4",
                     progress=True, measure=False,
                     on_step=lambda done, total, row: seen.append((done, total)))
    assert time.monotonic() - started < 10
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)] and len(rows) == 4


def _fake_rows(measured: bool) -> list[SweepRow]:
    rows = []
    for tile, gf in ((4, 1000.0), (8, 4000.0), (16, 5800.0), (32, 6100.0)):
        occ = theoretical_occupancy((9, 0), tile * tile, 32, 2 * tile * tile * 4)
        rows.append(SweepRow("tiled", tile, 1024, 1.0 if measured else None,
                             gf if measured else None, 32 if measured else None, 32,
                             2 * tile * tile * 4, tile * tile, occ.blocks_per_sm,
                             occ.warps_per_sm, occ.occupancy, occ.limited_by, tile / 4, 100,
                             1.0, "H200, sm_90", "" if measured else NEEDS_GPU))
    return rows


def test_plot_and_table() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for measured in (False, True):
        rows = _fake_rows(measured)
        ax = plot_sweep(rows)
        assert ax.right_axis.get_ylabel().startswith("theoretical occupancy")
        label = "measured GFLOP/s" if measured else "modelled intensity"
        assert ax.get_ylabel().startswith(label)
        assert [t.get_text() for t in ax.get_xticklabels()] == ["4", "8", "16", "32"]
        plt.close(ax.figure)
        table = rows_to_table(rows)
        assert "blocks/SM" in table and "occupancy" in table
        assert ("6,100" in table) == measured
        assert ("needs a GPU" in table) != measured
    with pytest.raises(ValueError):
        plot_sweep([])


def test_missing_kernels_give_a_clear_message(tmp_path: Path, capsys) -> None:
    found = load_week_kernels(str(tmp_path))
    assert found == {"naive": None, "tiled": None, "bonus": None}
    out = capsys.readouterr().out
    assert "02_naive_gemm.ipynb" in out and "was not found" in out


# ---------------------------------------------------------------------------------------------
# The panel.


def _classes(widget: Any) -> set[str]:
    found = set(getattr(widget, "_dom_classes", ()))
    for child in getattr(widget, "children", ()):
        found |= _classes(child)
    return found


@on_simulator
def test_panel_builds_with_classes_and_runs(week_kernels: dict[str, Any], monkeypatch) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from course.perf.widgets import sweep_panel

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    panel = sweep_panel({"naive": week_kernels["gemm_naive"],
                         "tiled": week_kernels["make_gemm_tiled"], "bonus": None}, size=256)
    assert {f"week4-{c}" for c in ("panel", "kernel", "tile", "size", "profile", "regs", "run",
                                   "progress", "model", "output", "status")} <= _classes(panel)
    assert list(panel.tile.options) == [4, 8, 16, 32]
    # None is left out; "all" is shown in the student's language
    assert [value for _label, value in panel.kernel.options] == ["naive", "tiled", "all"]
    assert "T4" in panel.profile.options and "H200" in panel.profile.options
    assert "tile 16" in panel.model.value and "occupancy" in panel.model.value
    panel.tile.value = 32
    assert "tile 32" in panel.model.value and "1024 (32 warps)" in panel.model.value
    panel.profile.value = "H200"
    panel.regs.value = 40
    assert "50%" in panel.model.value and "registers" in panel.model.value
    panel.kernel.value = "all"
    panel._run()
    assert panel.progress.value == panel.progress.max == 8
    assert panel.progress.bar_style == "success" and "done" in panel.status.value


def test_panel_under_autograde_returns_a_static_summary(week_kernels, monkeypatch) -> None:
    from course.perf.widgets import StaticSummary, sweep_panel

    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    started = time.monotonic()
    summary = sweep_panel({"tiled": week_kernels["make_gemm_tiled"]})
    assert time.monotonic() - started < 10
    assert isinstance(summary, StaticSummary)
    assert "not built while grading" in repr(summary) and len(summary.rows) == 4


# ---------------------------------------------------------------------------------------------
# Notebook 6's exercise and its graded cells.


def test_notebook_limits_agree_with_course_occupancy() -> None:
    sm_limits = solution(NB06, "sm_limits")["sm_limits"]
    for cc in ((7, 5), (8, 0), (9, 0)):
        lim = ARCH_LIMITS[cc]
        assert sm_limits(cc) == (lim.max_warps_per_sm, lim.max_blocks_per_sm, lim.regs_per_sm,
                                 lim.reg_alloc_unit, lim.smem_per_sm,
                                 lim.smem_reserved_per_block, lim.smem_alloc_unit)
        assert lim.reg_sub_partitions == 4


def _test_cells(path: Path) -> dict[str, str]:
    return {_grade_id(c): _source(c) for c in _cells(path)
            if c["cell_type"] == "code" and c["metadata"]["nbgrader"].get("grade")}


def _run_cell(code: str, namespace: dict[str, Any]) -> None:
    exec(compile(code, "<test cell>", "exec"), dict(namespace))  # noqa: S102 - our own cells


def _wrong(rule: str):
    """predict_blocks_per_sm with one rule of the occupancy model left out."""
    from course.checks.occupancy import _blocks_variant

    def predict_blocks_per_sm(cc, threads, regs, smem):
        return _blocks_variant(tuple(cc), threads, regs, smem, **{rule: False})

    return predict_blocks_per_sm


def test_the_notebook_solution_passes_every_graded_cell() -> None:
    ns = solution(NB06, "predict_blocks_per_sm", "predict_occupancy")
    for code in _test_cells(NB06).values():
        _run_cell(code, ns)


@pytest.mark.parametrize("rule,cells", [
    ("quarters", ("blocks_per_sm_hopper",)),
    ("reserved", ("blocks_per_sm_hopper",)),
    ("smem_rounding", ("blocks_per_sm_t4",)),
    ("block_cap", ("blocks_per_sm_t4",)),
    ("reg_rounding", ("blocks_per_sm_t4",)),
])
def test_graded_blocks_cells_fail_on_a_wrong_rule(rule: str, cells: tuple[str, ...]) -> None:
    tests = _test_cells(NB06)
    for gid in cells:
        with pytest.raises(OccupancyPredictionError):
            _run_cell(tests[gid], {"predict_blocks_per_sm": _wrong(rule)})


def test_blocks_checker_names_the_missed_rule() -> None:
    with pytest.raises(OccupancyPredictionError, match="1 KiB the driver reserves"):
        check_blocks_per_sm_prediction(_wrong("reserved"), [((9, 0), 256, 32, 57 * 1024)])
    with pytest.raises(OccupancyPredictionError, match="4 quarters"):
        check_blocks_per_sm_prediction(_wrong("quarters"), [((9, 0), 96, 40, 0)])
    with pytest.raises(OccupancyPredictionError, match="whole number"):
        check_blocks_per_sm_prediction(lambda *a: 2.5, [((7, 5), 256, 32, 0)])

    def stub(*args):
        raise NotImplementedError()

    with pytest.raises(OccupancyPredictionError, match="not written yet"):
        check_blocks_per_sm_prediction(stub, [((7, 5), 256, 32, 0)])


def test_occupancy_cell_fails_on_wrong_answers() -> None:
    ns = solution(NB06, "predict_blocks_per_sm", "sm_limits")
    blocks, limits = ns["predict_blocks_per_sm"], ns["sm_limits"]
    code = _test_cells(NB06)["occupancy_fraction"]

    def percent(cc, t, r, s):
        return 100 * blocks(cc, t, r, s) * ((t + 31) // 32) / limits(cc)[0]

    def threads(cc, t, r, s):
        return blocks(cc, t, r, s) * t / (limits(cc)[0] * 32)

    def by_blocks(cc, t, r, s):
        return blocks(cc, t, r, s) / limits(cc)[1]

    for wrong, hint in ((percent, "percentage"), (threads, "whole warps"),
                        (by_blocks, "counts warps")):
        with pytest.raises(OccupancyPredictionError, match=hint):
            _run_cell(code, {"predict_occupancy": wrong})
    with pytest.raises(OccupancyPredictionError):
        check_occupancy_prediction(lambda *a: "half", [((7, 5), 16, 32, 128)])


def test_notebook6_has_the_manual_answer_cell() -> None:
    cells = {_grade_id(c): c for c in _cells(NB06)}
    meta = cells["why_not_tile_32"]["metadata"]["nbgrader"]
    assert cells["why_not_tile_32"]["cell_type"] == "markdown"
    assert (meta["grade"], meta["solution"], meta["task"], meta["points"]) == (True, True,
                                                                              False, 2)
    points = {g: c["metadata"]["nbgrader"].get("points") for g, c in cells.items()
              if c["metadata"]["nbgrader"].get("grade")}
    assert points == {"blocks_per_sm_t4": 2, "blocks_per_sm_hopper": 2,
                      "occupancy_fraction": 1, "why_not_tile_32": 2}


# ---------------------------------------------------------------------------------------------
# On a real GPU: measured rows with the compiler's registers.


@pytest.mark.gpu
def test_sweep_measures_on_a_gpu(week_kernels: dict[str, Any]) -> None:
    rows = run_sweep({"tiled": week_kernels["make_gemm_tiled"]}, size=512, progress=False,
                     repeats=3)
    target = resolve_target(None)
    assert target.own
    for r in rows:
        assert r.measured_ms and r.measured_ms > 0 and r.gflops and r.gflops > 0
        assert r.regs_per_thread is not None and r.regs_per_thread == r.regs_in_model
        assert NEEDS_GPU not in r.note
        occ = theoretical_occupancy(target.cc, r.threads_per_block, r.regs_in_model,
                                    r.smem_per_block)
        assert r.blocks_per_sm == occ.blocks_per_sm
    other = run_sweep({"tiled": week_kernels["make_gemm_tiled"]}, tiles=(16,), size=256,
                      profile="T4", progress=False, measure=False)[0]
    assert other.target.startswith("T4") and other.measured_ms is None
