"""Tests for course.checks: correct kernels pass, each typical bug fails with a telling message.

Every check is also fed wrong answers (tests/kernels_for_tests.py) so a check that always
passed would be caught. Shapes are tiny: on the simulator every CUDA thread is a Python
thread.
"""

from __future__ import annotations

import kernels_for_tests as kft
import numpy as np
import pytest

from course.checks import gemm as checks
from course.checks.gemm import (
    SIM_SHAPES,
    GemmCheckError,
    GemmReport,
    check_naive_gemm,
    check_tiled_gemm,
)
from course.gemm.diagnosis import diagnose
from course.gemm.launch import NotAKernelError, naive, tiled
from course.gemm.operands import (
    C_GUARD,
    C_POISON_BITS,
    INPUT_GUARD_BITS,
    random_operands,
    run_guarded,
)
from course.runtime import backend
from course.runtime.seeds import generator
from course.runtime.sim_arrays import LOCAL_ARRAY_BITS

RAGGED = ((17, 5, 3),)  # one partial block of rows, N smaller than a block
SQUARE = ((6, 6, 3), (17, 17, 4))


def message(check, *args, **kwargs) -> str:
    with pytest.raises(GemmCheckError) as info:
        check(*args, **kwargs)
    return str(info.value)


# --------------------------------------------------------------------------- naive: passes


def test_correct_naive_passes_the_default_shapes_and_prints_a_report(capsys):
    report = check_naive_gemm(kft.gemm_naive, seed=0)
    out = capsys.readouterr().out
    assert out.startswith("✓ gemm_naive is correct on 5 shapes")
    assert "33×20×7" in out and "[simulator;" in out
    assert isinstance(report, GemmReport)
    assert report.shapes == SIM_SHAPES
    assert report.backend == "simulator"
    assert 0 <= report.max_rel_error < 1e-5
    assert str(report) == out.strip()


def test_quiet_check_prints_nothing(capsys):
    check_naive_gemm(kft.gemm_naive, shapes=((3, 2, 2),), seed=1, quiet=True)
    assert capsys.readouterr().out == ""


def test_random_seeds_are_fresh_unless_given():
    a1, _ = random_operands(3, 3, 3, generator(7))
    a2, _ = random_operands(3, 3, 3, generator(7))
    a3, _ = random_operands(3, 3, 3, generator(None))
    np.testing.assert_array_equal(a1, a2)
    assert not np.array_equal(a1, a3)
    assert a1.dtype == np.float32 and a1.flags.c_contiguous
    assert a1.min() >= -1 and a1.max() < 1


# --------------------------------------------------------------------------- naive: fails


def test_naive_without_bounds_test_fails_with_out_of_range():
    msg = message(check_naive_gemm, kft.gemm_naive_no_bounds, shapes=RAGGED, seed=0)
    assert msg.startswith("gemm_naive: index out of range for M=17, N=5, K=3: thread (5, 0) of "
                          "block (0, 0) read B[0, 5], outside B (3×5)"), msg
    assert "past the edge of C (row 0, col 5; C is 17×5)" in msg
    assert "bounds test `row < M and col < N`" in msg


def test_naive_with_x_as_row_leaves_part_of_c_unwritten_on_non_square_shapes():
    msg = message(check_naive_gemm, kft.gemm_naive_xy_swapped, shapes=RAGGED, seed=0)
    assert "C[16:17, 0:5] was never written" in msg
    assert "a kernel that takes x as the row" in msg and "`col, row = cuda.grid(2)`" in msg


def test_naive_with_x_as_row_is_right_on_square_shapes(capsys):
    # Note: on square shapes the swapped mapping computes the right C (only uncoalesced, so
    # slow on a GPU); only non-square ragged shapes expose it, which the defaults include.
    report = check_naive_gemm(kft.gemm_naive_xy_swapped, shapes=SQUARE, seed=0)
    assert report.shapes == SQUARE
    assert any(m != n for m, n, _ in SIM_SHAPES)


def test_naive_that_transposes_is_called_transposed():
    msg = message(check_naive_gemm, kft.gemm_naive_transposed, shapes=SQUARE, seed=0)
    assert "C came out transposed" in msg
    assert "stores into C[row, col]" in msg


def test_naive_that_transposes_fails_on_non_square_shapes_too():
    msg = message(check_naive_gemm, kft.gemm_naive_transposed, shapes=RAGGED, seed=0)
    assert "out of" in msg


def test_naive_that_never_writes():
    msg = message(check_naive_gemm, kft.gemm_naive_never_writes, shapes=RAGGED, seed=0)
    assert msg.startswith("gemm_naive: no thread stored anything into C for M=17, N=5, K=3, "
                          "although the threads read A and B"), msg
    assert "store it, C[row, col] = acc" in msg


def test_naive_with_wrong_arithmetic_reports_wrong_values():
    msg = message(check_naive_gemm, kft.gemm_naive_off_by_one, shapes=((20, 17, 5),), seed=0)
    assert "wrong values for M=20, N=17, K=5" in msg
    assert "expected" in msg and "elements wrong" in msg


def test_default_shapes_catch_every_buggy_naive_kernel():
    for kernel in kft.BUGGY_NAIVE.values():
        with pytest.raises(GemmCheckError):
            check_naive_gemm(kernel, shapes=SIM_SHAPES[1:2], seed=0)  # 33×20×7


def test_unwritten_answer_says_not_written_yet():
    msg = message(check_naive_gemm, kft.gemm_naive_not_implemented, shapes=((2, 2, 2),), seed=0)
    assert "gemm_naive is not written yet" in msg
    assert "NotImplementedError" in msg


def test_device_function_is_refused_before_any_launch():
    with pytest.raises(NotAKernelError, match="device function"):
        check_naive_gemm(kft.gemm_naive_device, shapes=((2, 2, 2),), seed=0)


def test_plain_python_function_is_refused():
    def gemm_naive(A, B, C):
        C[:] = A @ B

    with pytest.raises(NotAKernelError, match="must be a kernel made with @cuda.jit"):
        check_naive_gemm(gemm_naive, shapes=((2, 2, 2),), seed=0)


def test_checks_also_run_in_the_students_kernel_during_autograde(monkeypatch):
    # The grader compares the notebook's own verdict with its trusted one, so checks run.
    monkeypatch.setenv(backend.AUTOGRADE_ENV, "autograde")
    monkeypatch.delenv(backend.TRUSTED_ENV, raising=False)
    assert check_naive_gemm(kft.gemm_naive, shapes=((2, 2, 2),), quiet=True)
    assert check_tiled_gemm(kft.make_gemm_tiled, tiles=(4,), shapes=((2, 2, 2),), quiet=True)


def test_checks_refuse_to_run_without_any_backend(monkeypatch):
    monkeypatch.setattr(backend, "detect",
                        lambda: backend.Backend("none", reason="Numba is not installed"))
    with pytest.raises(backend.NoGPUError, match="kernels cannot run here: Numba is not"):
        check_naive_gemm(kft.gemm_naive, shapes=((2, 2, 2),))


# --------------------------------------------------------------------------- run_guarded


def test_run_guarded_returns_c_and_no_outside_write():
    A, B = random_operands(5, 3, 4, np.random.default_rng(0))
    C, outside = run_guarded(naive(kft.gemm_naive), A, B)
    assert outside is False
    np.testing.assert_allclose(C, A @ B, rtol=1e-5, atol=1e-6)


def test_run_guarded_leaves_unwritten_elements_poisoned():
    A, B = random_operands(5, 3, 4, np.random.default_rng(0))
    C, outside = run_guarded(naive(kft.gemm_naive_never_writes), A, B)
    assert outside is False
    assert (C.view(np.uint32) == C_POISON_BITS).all()


def test_guard_constants_are_distinct_nans():
    assert np.isnan(np.array([C_POISON_BITS], np.uint32).view(np.float32)[0])
    assert np.isnan(np.array([INPUT_GUARD_BITS], np.uint32).view(np.float32)[0])
    assert C_POISON_BITS != INPUT_GUARD_BITS
    assert np.isfinite(C_GUARD)


# --------------------------------------------------------------------------- tiled: passes


def test_correct_tiled_passes_tiles_4_and_8(capsys):
    report = check_tiled_gemm(kft.make_gemm_tiled, tiles=(4, 8), seed=0)
    out = capsys.readouterr().out
    assert out.startswith("✓ make_gemm_tiled (tiles 4, 8) is correct on 5 shapes")
    assert report.shapes == SIM_SHAPES and report.max_rel_error < 1e-5


def test_tile_32_runs_the_first_shape_only_on_the_simulator(monkeypatch, capsys):
    # Each tile-32 block is 1,024 simulated threads; the smaller tiles cover every shape.
    calls = []
    real = checks.run_cases

    def spy(gk, shapes, rng, block, k_step=None, naive_kernel=False):
        calls.append((block, tuple(shapes)))
        return real(gk, shapes, rng, block, k_step, naive_kernel)

    monkeypatch.setattr(checks, "run_cases", spy)
    shapes = ((5, 3, 6), (3, 4, 2))
    check_tiled_gemm(kft.make_gemm_tiled, tiles=(4, 32), shapes=shapes, seed=0)
    assert calls == [(4, shapes), (32, shapes[:1])]
    assert "tile 32 on the 5×3×6 shape only" in capsys.readouterr().out


def test_tile_32_runs_the_smallest_default_shape_on_the_simulator(monkeypatch):
    # The default shapes start with M ≠ N ≠ K (for telling diagnoses); tile 32 still runs
    # only 1×1×1 there, as before.
    calls = []
    monkeypatch.setattr(checks, "run_cases",
                        lambda gk, shapes, rng, block, k_step=None: calls.append(
                            (block, tuple(shapes))) or 0.0)
    monkeypatch.setattr(checks, "_simulator_inspection",
                        lambda *args: {"error": None, "races": [], "uninitialised": []})
    check_tiled_gemm(kft.make_gemm_tiled, tiles=(4, 32), seed=0, quiet=True)
    assert calls == [(4, SIM_SHAPES), (32, ((1, 1, 1),))]


def test_tiled_that_multiplies_from_global_memory_is_still_correct():
    # Correct values: only course.checks.traffic can tell (see test_instrument.py).
    check_tiled_gemm(kft.make_gemm_tiled_global_inner, tiles=(4,), shapes=((5, 3, 6),), seed=0,
                     quiet=True)


# --------------------------------------------------------------------------- tiled: fails


MULTIPLE_OF_8 = (8, 8, 16)  # a barrier-probe shape the multiples-only kernel gets right


def test_multiples_only_tiled_fails_on_ragged_shapes():
    msg = message(check_tiled_gemm, kft.make_gemm_tiled_multiples_only, tiles=(4,),
                  shapes=((5, 3, 6),), barrier_shape=MULTIPLE_OF_8, seed=0)
    assert msg.startswith("make_gemm_tiled(4): index out of range for M=5, N=3, K=6")
    assert "must be loaded as 0, not read" in msg


def test_multiples_only_tiled_skips_the_k_tail():
    msg = message(check_tiled_gemm, kft.make_gemm_tiled_multiples_only, tiles=(4,),
                  shapes=((8, 8, 6),), barrier_shape=MULTIPLE_OF_8, seed=0)
    assert "wrong values for M=8, N=8, K=6" in msg
    assert "partial step along K was skipped" in msg
    assert "ceil(K / 4) steps" in msg


def test_multiples_only_tiled_is_caught_by_the_barrier_probe_too():
    # Even on shapes that are multiples of the tile, the ragged probe shape catches it ...
    msg = message(check_tiled_gemm, kft.make_gemm_tiled_multiples_only, tiles=(4,),
                  shapes=((8, 8, 8),), seed=0)
    assert "make_gemm_tiled(8): index out of range for M=11, N=9, K=19" in msg
    # ... and it is right on multiples only.
    check_tiled_gemm(kft.make_gemm_tiled_multiples_only, tiles=(4,), shapes=((8, 8, 8),),
                     barrier_shape=MULTIPLE_OF_8, seed=0, quiet=True)


@pytest.mark.parametrize("variant", ["no_first_barrier", "no_second_barrier"])
def test_missing_barrier_fails(variant):
    msg = message(check_tiled_gemm, kft.BUGGY_TILED[variant], tiles=(4,),
                  shapes=((5, 3, 6),), seed=0)
    # Barriers are probed first (deterministically, on the simulator at tile 8): a race must
    # not be reported as whatever wrong values the schedule happened to produce.
    assert msg.startswith("make_gemm_tiled(8) for M, N, K = (11, 9, 19):"), msg
    assert "cuda.syncthreads()" in msg


@pytest.mark.parametrize("variant", ["no_first_barrier", "no_second_barrier"])
def test_race_detector_alone_catches_a_missing_barrier(monkeypatch, variant):
    monkeypatch.setattr(checks, "run_cases", lambda *args, **kwargs: 0.0)
    msg = message(check_tiled_gemm, kft.BUGGY_TILED[variant], tiles=(4, 8), seed=0)
    assert msg.startswith("make_gemm_tiled(8) for M, N, K = (11, 9, 19):")
    assert "cuda.syncthreads()" in msg
    assert "barrier" in msg


def test_race_detector_alone_passes_the_correct_kernel(monkeypatch):
    monkeypatch.setattr(checks, "run_cases", lambda *args, **kwargs: 0.0)
    check_tiled_gemm(kft.make_gemm_tiled, tiles=(4,), seed=0, quiet=True)


def test_swapped_tile_index_gives_wrong_values():
    msg = message(check_tiled_gemm, kft.make_gemm_tiled_swapped_tile_index, tiles=(4,),
                  shapes=((8, 8, 8),), seed=0)
    assert "make_gemm_tiled(4): wrong values for M=8, N=8, K=8" in msg


def test_default_shapes_catch_every_buggy_tiled_kernel():
    for kernel in kft.BUGGY_TILED.values():
        with pytest.raises(GemmCheckError):
            check_tiled_gemm(kernel, tiles=(4,), shapes=SIM_SHAPES[2:3], seed=0)  # 19×9×37


def test_factory_returning_a_device_function_is_refused():
    with pytest.raises(NotAKernelError, match="device function"):
        check_tiled_gemm(kft.make_gemm_tiled_returns_device, tiles=(4,), shapes=((2, 2, 2),))


def test_a_kernel_passed_as_the_factory_is_refused():
    with pytest.raises(NotAKernelError, match="plain Python function"):
        check_tiled_gemm(kft.gemm_naive, tiles=(4,), shapes=((2, 2, 2),))


def test_tiled_wrapper_uses_the_tile_as_block():
    gk = tiled(kft.make_gemm_tiled, 8)
    assert gk.launch_for(9, 9).block == (8, 8)


# --------------------------------------------------------------------------- diagnose()


def operands(M, N, K, seed=0):
    return random_operands(M, N, K, np.random.default_rng(seed))


def poison(C, rows=slice(None), cols=slice(None)):
    C = C.copy()
    C.view(np.uint32)[rows, cols] = C_POISON_BITS
    return C


def case_all_unwritten():
    A, B = operands(20, 18, 5)
    return A, B, 16, poison(A @ B), ["C holds only the NaN it starts as for M=20, N=18, K=5",
                                     "no thread stored into C", "added to C"]


def case_partial_blocks_unwritten():
    A, B = operands(20, 18, 5)
    return A, B, 16, poison(A @ B, slice(16, None)), [
        "C[16:20, 0:18] was never written (still NaN)", "no thread stored there"]


def case_interior_unwritten():
    A, B = operands(20, 18, 5)
    return A, B, 16, poison(A @ B, slice(3, 5), slice(2, 4)), [
        "C[3:5, 2:4] was never written", "x = col and y = row"]


def case_nan_elsewhere():
    A, B = operands(6, 7, 3)
    C = A @ B
    C[2, 3] = np.nan
    C[4, 5] = np.inf
    return A, B, 4, C, ["C[2:5, 3:6] holds NaN/inf", "a value nothing had set",
                        "tile element is never stored", "must be loaded as 0",
                        "before the barrier", "a per-thread array or accumulator"]


def case_nan_from_a_per_thread_array_never_set():
    A, B = operands(6, 7, 3)
    C = A @ B
    C.view(np.uint32)[1, 2:4] = LOCAL_ARRAY_BITS  # what the simulator's local arrays start as
    C[4, 5] = np.nan  # any other NaN beside it: the marked one decides
    return A, B, 4, C, ["C[1:2, 2:4] holds NaN", "per-thread array (cuda.local.array) before "
                        "the thread had set it", "an accumulator to 0"]


def case_transposed():
    A, B = operands(6, 6, 3)
    return A, B, 4, np.ascontiguousarray((A @ B).T), ["wrong values for M=6, N=6, K=3",
                                                      "C came out transposed"]


def case_k_tail_skipped():
    A, B = operands(8, 8, 6)
    return A, B, 4, A[:, :4] @ B[:4], ["the last, partial step along K was skipped"]


def case_partial_tiles_wrong():
    A, B = operands(6, 7, 8)
    C = A @ B
    C[4:, :] += 1.0
    return A, B, 4, C, ["only in the last, partial tiles", "the full tiles are right"]


def case_generic_wrong():
    A, B = operands(8, 8, 8)
    C = A @ B
    C[1, 2] += 0.5
    return A, B, 4, C, ["wrong values for M=8, N=8, K=8", "e.g. C[1, 2] =",
                        "1 of 64 elements wrong, in C[1:2, 2:3]",
                        "match none of the usual mistakes"]


DIAGNOSES = {f.__name__[5:]: f for f in (
    case_all_unwritten, case_partial_blocks_unwritten, case_interior_unwritten,
    case_nan_elsewhere, case_nan_from_a_per_thread_array_never_set, case_transposed,
    case_k_tail_skipped, case_partial_tiles_wrong, case_generic_wrong)}


@pytest.mark.parametrize("case", list(DIAGNOSES))
def test_diagnose_explains_a_wrong_c(case):
    A, B, block, C, phrases = DIAGNOSES[case]()
    text = diagnose(C.astype(np.float32), A, B, block)
    assert text is not None
    for phrase in phrases:
        assert phrase in text, text


@pytest.mark.parametrize("case", list(DIAGNOSES))
def test_diagnose_returns_none_for_the_right_c_of_each_case(case):
    A, B, block, _, _ = DIAGNOSES[case]()
    C = (A @ B).astype(np.float32)
    assert diagnose(C, A, B, block) is None
    # float32 rounding of a different summation order is within tolerance
    C64 = A.astype(np.float64) @ B.astype(np.float64)
    assert diagnose(C64.astype(np.float32), A, B, block) is None


def test_diagnose_reports_writes_outside_c_first():
    A, B = operands(5, 5, 5)
    text = diagnose((A @ B).astype(np.float32), A, B, 16, wrote_outside=True)
    assert "wrote outside C for M=5, N=5, K=5" in text
    assert "row < M and col < N" in text


def test_diagnose_tolerance_scales_with_k():
    A, B = operands(4, 4, 256)
    C = (A @ B).astype(np.float32)
    C[0, 0] *= 1 + 1e-5  # within K-scaled float32 rounding
    assert diagnose(C, A, B, 16) is None
    C[0, 0] *= 1.01  # far outside
    assert diagnose(C, A, B, 16) is not None


def test_diagnose_does_not_blame_partial_tiles_when_there_are_no_full_tiles():
    A, B = operands(17, 5, 3)
    C = (A[:, :2] @ B[:2]).astype(np.float32)  # K loop one short: every element wrong
    text = diagnose(C, A, B, 16)
    assert "85 of 85 elements wrong" in text
    assert "only in the last partial tiles" not in text


# --------------------------------------------------------------------------- real GPU


@pytest.mark.gpu
def test_checks_on_a_real_gpu():
    b = backend.detect()
    if b.kind != "gpu":
        pytest.skip(f"needs a real CUDA GPU: this runs on {b.kind} ({b.reason})")
    report = check_naive_gemm(kft.gemm_naive, seed=0, quiet=True)
    assert report.backend == "gpu" and report.shapes == checks.GPU_SHAPES
    # tiled: every GPU shape, then the barrier probe in a simulator child process
    check_tiled_gemm(kft.make_gemm_tiled, tiles=(8, 32), seed=0, quiet=True)
    check_tiled_gemm(kft.make_gemm_tiled_global_inner, tiles=(8,), seed=0, quiet=True)
    # On a GPU nothing raises for an out-of-range index: the guard regions must catch it.
    for kernel in kft.BUGGY_NAIVE.values():
        with pytest.raises(GemmCheckError):
            check_naive_gemm(kernel, seed=0, quiet=True)
    for kernel in kft.BUGGY_TILED.values():
        with pytest.raises(GemmCheckError):
            check_tiled_gemm(kernel, tiles=(8,), seed=0, quiet=True)
