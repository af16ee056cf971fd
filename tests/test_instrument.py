"""Tests for course.gemm.instrument (read counts, race detection) and course.checks.traffic.

The read counts are exact properties of the kernels in tests/kernels_for_tests.py:
the naive kernel reads K elements of A and K of B per element of C; the correct tiled kernel
loads each in-range tile element once per block (skipping the zero padding), so it reads at
most the whole-tile model count.
"""

from __future__ import annotations

import math
import time

import kernels_for_tests as kft
import numpy as np
import pytest

from course.checks.traffic import TRAFFIC_SLACK, TrafficCheckError, TrafficReport, check_traffic
from course.gemm import inspection, instrument
from course.gemm.instrument import MAX_REPORTED, RunReport, instrumented_run
from course.gemm.launch import naive, tiled
from course.gemm.operands import random_operands
from course.gemm.reads import naive_reads, tiled_reads
from course.runtime import backend
from course.trust import runner as isolated
from course.trust.kernel_source import bundle_from_objects

pytestmark = pytest.mark.skipif(backend.detect().kind != "simulator",
                                reason="instrumented runs need the CUDA simulator in-process")

PROBE = (7, 5, 11)  # tile 4: 2×2 blocks, K spans two whole tiles and a partial third


def run(gk, shape, seed=0):
    A, B = random_operands(*shape, np.random.default_rng(seed))
    C, report = instrumented_run(gk, A, B)
    return A, B, C, report


# --------------------------------------------------------------------------- the model


def test_naive_reads_formula():
    assert naive_reads(5, 3, 4) == 120
    assert naive_reads(1, 1, 1) == 2


def test_tiled_reads_formula():
    # 2×2 blocks, 3 steps along K, one 4×4 tile of A and one of B per step
    assert tiled_reads(7, 5, 11, 4) == 2 * 2 * 3 * 2 * 16 == 384
    assert tiled_reads(1, 1, 1, 32) == 2 * 32 * 32


@pytest.mark.parametrize("tile", [4, 8, 16, 32])
def test_tiling_divides_traffic_by_the_tile_on_multiples(tile):
    n = 2 * tile
    assert tiled_reads(n, n, n, tile) * tile == naive_reads(n, n, n)


# --------------------------------------------------------------------------- read counts


@pytest.mark.parametrize("shape", [(5, 3, 4), (17, 5, 3)])
def test_naive_reads_exactly_2mnk(shape):
    M, N, K = shape
    A, B, C, report = run(naive(kft.gemm_naive), shape)
    assert report.reads_a == M * N * K
    assert report.reads_b == M * N * K
    assert report.reads == naive_reads(M, N, K)
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-6)
    assert report.races == [] and report.uninitialised == []


@pytest.mark.parametrize(("tile", "shape"), [(4, PROBE), (4, (8, 8, 8)), (8, (12, 10, 20))])
def test_correct_tiled_reads_about_the_tile_model(tile, shape):
    A, B, C, report = run(tiled(kft.make_gemm_tiled, tile), shape)
    model = tiled_reads(*shape, tile)
    assert 0.5 * model <= report.reads <= model
    # exactly: each block reads the in-range part of its row of A tiles and column of B tiles
    M, N, K = shape
    assert report.reads_a == math.ceil(N / tile) * M * K
    assert report.reads_b == math.ceil(M / tile) * K * N
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-6)


def test_whole_tiles_read_exactly_the_model():
    _, _, _, report = run(tiled(kft.make_gemm_tiled, 4), (8, 8, 8))
    assert report.reads == tiled_reads(8, 8, 8, 4) == naive_reads(8, 8, 8) // 4


def test_global_inner_loop_reads_like_the_naive_kernel():
    A, B, C, report = run(tiled(kft.make_gemm_tiled_global_inner, 4), PROBE)
    naive_count = naive_reads(*PROBE)
    model = tiled_reads(*PROBE, 4)
    # the multiply loop's reads (= naive) plus the (unused) tile loads
    assert naive_count <= report.reads <= naive_count + model
    assert report.reads > TRAFFIC_SLACK * model
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-6)  # values are right


def test_c_starts_as_nan():
    _, _, C, _ = run(naive(kft.gemm_naive_never_writes), (3, 2, 2))
    assert np.isnan(C).all()


# --------------------------------------------------------------------------- races


def test_correct_tiled_has_no_races():
    _, _, _, report = run(tiled(kft.make_gemm_tiled, 4), PROBE)
    assert report.races == []
    assert report.uninitialised == []


@pytest.mark.parametrize("variant", ["no_first_barrier", "no_second_barrier"])
def test_missing_barrier_is_a_race(variant):
    _, _, _, report = run(tiled(kft.BUGGY_TILED[variant], 4), PROBE)
    assert report.races, report
    first = report.races[0]
    assert "no cuda.syncthreads() in between" in first
    assert "block (" in first and "thread (" in first
    missing = {"no_first_barrier": "the barrier after loading the tiles is missing",
               "no_second_barrier": "the barrier after the multiply loop is missing"}
    assert missing[variant] in first, first
    assert report.missing_barriers == {"no_first_barrier": {"after_load"},
                                       "no_second_barrier": {"after_multiply"}}[variant]


@pytest.mark.parametrize("seed", [1, 2])
def test_race_verdict_does_not_depend_on_the_schedule(seed):
    for variant in ("no_first_barrier", "no_second_barrier"):
        _, _, _, report = run(tiled(kft.BUGGY_TILED[variant], 4), PROBE, seed)
        assert report.races
    _, _, _, report = run(tiled(kft.make_gemm_tiled, 4), PROBE, seed)
    assert not report.races


def test_missing_zero_padding_is_an_uninitialised_read():
    _, _, _, report = run(tiled(kft.make_gemm_tiled_no_padding, 4), PROBE)
    assert report.uninitialised
    assert "before any thread of its block" in report.uninitialised[0]
    assert "zero-pad" in report.uninitialised[0]


def test_shared_allocation_survives_a_thread_switch(monkeypatch):
    # Regression: two threads could get two different arrays for one cuda.shared.array line
    # when a thread switch fell inside the allocation; a correct kernel then read
    # "uninitialised" elements and failed check_tiled_gemm.
    full = np.full

    def full_with_a_thread_switch(*args, **kwargs):
        time.sleep(0.001)  # any GIL hand-over inside the allocation
        return full(*args, **kwargs)

    monkeypatch.setattr(np, "full", full_with_a_thread_switch)
    A, B, C, report = run(tiled(kft.make_gemm_tiled, 4), PROBE)
    assert report.uninitialised == []
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-6)


class _SwitchingTuple(tuple):
    """A block index whose comparison hands the GIL over, as any Python-level step may."""

    __hash__ = tuple.__hash__

    def __eq__(self, other):
        time.sleep(1e-4)
        return tuple.__eq__(self, other)

    def __ne__(self, other):
        return not self.__eq__(other)


def test_race_tracking_survives_a_thread_switch(monkeypatch):
    # Regression: _TrackedShared.__setitem__ iterated a reader dict that other threads were
    # adding to ("dictionary changed size during iteration", reported as an index error).
    identity = instrument._thread_identity

    def switching_identity():
        block, thread, epoch = identity()
        return _SwitchingTuple(block), thread, epoch

    monkeypatch.setattr(instrument, "_thread_identity", switching_identity)
    A, B = random_operands(*PROBE, np.random.default_rng(0))
    _, report = instrumented_run(tiled(kft.make_gemm_tiled_no_second_barrier, 4), A, B)
    assert report.races


def test_reports_are_capped():
    _, _, _, report = run(tiled(kft.make_gemm_tiled_no_second_barrier, 4), PROBE)
    assert len(report.races) <= MAX_REPORTED + 1
    if len(report.races) == MAX_REPORTED + 1:
        assert report.races[-1] == "…"


def test_shared_arrays_are_named_after_the_source_line():
    _, _, _, report = run(tiled(kft.make_gemm_tiled_no_first_barrier, 4), PROBE)
    assert any("As(" in r or "Bs(" in r for r in report.races)


def test_simulator_is_restored_after_a_run_and_after_an_error():
    from numba.cuda.simulator import kernelapi

    from course.runtime.simulator import thread_class

    array, sync = kernelapi.FakeCUDAShared.array, thread_class().syncthreads
    run(tiled(kft.make_gemm_tiled, 4), (5, 3, 6))
    with pytest.raises(IndexError):
        run(tiled(kft.make_gemm_tiled_multiples_only, 4), (5, 3, 6))
    assert kernelapi.FakeCUDAShared.array is array
    assert thread_class().syncthreads is sync


def test_run_report_total():
    assert RunReport(reads_a=3, reads_b=4).reads == 7


# --------------------------------------------------------------------------- isolated


def test_inspect_tiled_rebuilds_from_source():
    seen = inspection.inspect_tiled(kft.make_gemm_tiled, 4, PROBE, seed=3)
    assert seen["error"] is None and seen["problem"] is None
    assert seen["reads_a"] + seen["reads_b"] == 264
    assert seen["races"] == [] and seen["uninitialised"] == []
    bad = inspection.inspect_tiled(kft.make_gemm_tiled_no_second_barrier, 4, PROBE, seed=3)
    assert bad["races"]


def test_inspect_naive_counts_and_diagnoses():
    seen = inspection.inspect_naive(kft.gemm_naive, (5, 3, 4), seed=3)
    assert seen["reads_a"] + seen["reads_b"] == 120 and seen["problem"] is None
    bad = inspection.inspect_naive(kft.gemm_naive_off_by_one, (5, 3, 4), seed=3)
    assert "wrong values" in bad["problem"]
    unwritten = inspection.inspect_naive(kft.gemm_naive_never_writes, (5, 3, 4), seed=3)
    assert unwritten["problem"] is not None


def test_inspect_recognises_an_unwritten_c():
    unwritten = inspection.inspect_naive(kft.gemm_naive_never_writes, (5, 3, 4), seed=3)
    assert "holds only the NaN it starts as" in unwritten["problem"]


def test_inspect_reports_an_index_error():
    seen = inspection.inspect_tiled(kft.make_gemm_tiled_multiples_only, 4, PROBE, seed=3)
    assert seen["error"].startswith("index out of range for M=7, N=5, K=11")


def test_inspect_in_a_fresh_simulator_process():
    # The path a GPU notebook takes: a child process that only receives validated source.
    bundle = bundle_from_objects({"make_gemm_tiled": kft.make_gemm_tiled_no_first_barrier})
    job = {"task": "inspect", "bundles": {"bundle": bundle.to_json()}, "kind": "tiled",
           "tile": 4, "shape": list(PROBE), "seed": 5}
    seen = isolated.run_job(job, simulator=True, timeout_s=120)
    assert seen["error"] is None
    assert seen["reads_a"] + seen["reads_b"] == 264
    assert seen["races"]


def test_simulator_jobs_share_one_warm_process_and_a_hung_one_is_replaced():
    """The simulator jobs of one process go to one warm simulator process (imports paid once),
    which rebuilds each job's kernels from source; a job that hangs costs that process, and
    the next job gets a new one."""
    bundle = bundle_from_objects({"make_gemm_tiled": kft.make_gemm_tiled})
    job = {"task": "inspect", "bundles": {"bundle": bundle.to_json()}, "kind": "tiled",
           "tile": 4, "shape": list(PROBE), "seed": 5}
    first = isolated.run_job(job, simulator=True, timeout_s=120)
    pid = isolated._SERVER[0].proc.pid
    second = isolated.run_job(dict(job, seed=6), simulator=True, timeout_s=120)
    assert isolated._SERVER[0].proc.pid == pid, "a second job started a second process"
    assert first["problem"] is None and second["problem"] is None
    assert first["reads_a"] == second["reads_a"] > 0
    spins = bundle_from_objects({"make_gemm_tiled": kft.make_gemm_tiled_spins_at_large_k})
    hung = dict(job, bundles={"bundle": spins.to_json()}, shape=[1, 1, 1000])
    with pytest.raises(isolated.IsolatedRunError, match="did not finish within 2 s"):
        isolated.run_job(hung, simulator=True, timeout_s=2)
    third = isolated.run_job(job, simulator=True, timeout_s=120)
    assert third["reads_a"] == first["reads_a"]
    assert isolated._SERVER[0].proc.pid != pid, "the hung job's process served again"


def test_an_interrupted_simulator_job_takes_its_process_along(monkeypatch):
    """A student who interrupts a check (Colab's stop button) must not find the next check
    queued behind the old job in the warm process: that process is stopped with it."""
    bundle = bundle_from_objects({"make_gemm_tiled": kft.make_gemm_tiled})
    job = {"task": "inspect", "bundles": {"bundle": bundle.to_json()}, "kind": "tiled",
           "tile": 4, "shape": list(PROBE), "seed": 5}
    isolated.run_job(job, simulator=True, timeout_s=120)
    server = isolated._SERVER[0]
    real_wait = isolated._wait

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(isolated, "_wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        isolated.run_job(job, simulator=True, timeout_s=120)
    assert not server.alive and not isolated._SERVER
    monkeypatch.setattr(isolated, "_wait", real_wait)
    assert isolated.run_job(job, simulator=True, timeout_s=120)["reads_a"] > 0


# --------------------------------------------------------------------------- check_traffic


def test_check_traffic_passes_the_correct_kernel(capsys):
    report = check_traffic(kft.make_gemm_tiled, tile=4)
    assert isinstance(report, TrafficReport)
    assert report.shape == PROBE and report.tile == 4
    assert report.reads == 264 and report.model == 384 and report.naive == 770
    out = capsys.readouterr().out
    assert out.startswith("✓ tile 4, 7×5×11: your kernel read 264 elements")
    assert "(2.9× more)" in out


def test_check_traffic_default_shape_follows_the_tile():
    report = check_traffic(kft.make_gemm_tiled, tile=8, quiet=True)
    assert report.shape == (11, 9, 19)


def test_check_traffic_fails_the_global_inner_loop_with_both_counts():
    _, _, _, seen = run(tiled(kft.make_gemm_tiled_global_inner, 8), (11, 9, 19))
    with pytest.raises(TrafficCheckError) as info:
        check_traffic(kft.make_gemm_tiled_global_inner, tile=8)
    msg = str(info.value)
    model = tiled_reads(11, 9, 19, 8)
    assert f"read {seen.reads:,} elements of A and B" in msg
    assert f"loads about {model:,}" in msg
    assert f"naive kernel reads {naive_reads(11, 9, 19):,}" in msg
    assert "multiply loop must read only the shared tiles" in msg


def test_check_traffic_fails_a_kernel_that_reads_nothing():
    with pytest.raises(TrafficCheckError, match="read nothing from A or B"):
        check_traffic(kft.make_gemm_tiled_reads_nothing, tile=4)


def test_check_traffic_reports_a_kernel_it_could_not_count():
    with pytest.raises(TrafficCheckError, match="could not be counted: index out of range"):
        check_traffic(kft.make_gemm_tiled_multiples_only, tile=4)


def test_check_traffic_also_runs_in_the_students_kernel_during_autograde(monkeypatch):
    monkeypatch.setenv(backend.AUTOGRADE_ENV, "autograde")
    monkeypatch.delenv(backend.TRUSTED_ENV, raising=False)
    check_traffic(kft.make_gemm_tiled, tile=4, quiet=True)


def test_plain_simulator_shared_arrays_are_shared_even_with_a_slow_allocation(monkeypatch):
    """Numba's simulator creates a shared array without a lock; course makes it atomic.

    A slow np.empty widens the window in which, unpatched, a second thread of the block would
    create its own array and the correct kernel would compute garbage.
    """
    import time

    import numpy as np

    from course.gemm.launch import matmul, tiled
    from course.gemm.operands import random_operands

    real_empty = np.empty

    def slow_empty(*args, **kwargs):
        time.sleep(0.01)  # every other thread gets to run meanwhile
        return real_empty(*args, **kwargs)

    monkeypatch.setattr(np, "empty", slow_empty)
    A, B = random_operands(9, 7, 11, np.random.default_rng(0))
    C = matmul(tiled(kft.make_gemm_tiled, 4), A, B)
    monkeypatch.setattr(np, "empty", real_empty)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)
