"""Tests for course.checks.answers: numeric answers, hints for typical mistakes, ValueErrors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from course.checks.answers import AnswerError, expect_close, expect_equal, expect_value_error
from course.runtime import backend

# The naive GEMM's arithmetic intensity at M = N = K = 1024, float32: 2·n³ FLOPs over
# 4·(2·n³) bytes read (no reuse) = 0.25 FLOP/byte. Typical mistakes and their values:
MISTAKES = {
    0.125: "you counted FLOPs as M·N·K; a multiply-add is 2 FLOPs",
    1.0: "you counted elements, not bytes: a float32 is 4 bytes",
}


def test_expect_close_passes_within_tolerance():
    expect_close(0.25, 0.25, "ai_gemm_naive(1024, 1024, 1024)")
    expect_close(0.25 * (1 + 5e-7), 0.25, "ai", mistakes=MISTAKES)
    expect_close(np.float32(0.25), 0.25, "ai")
    expect_close(np.float64(0.25), 0.25, "ai")
    expect_close(1, 1.0, "ai")
    expect_close(0.0, 0.0, "zero")  # absolute tolerance at zero
    expect_close(0.26, 0.25, "ai", rel=0.1)


def test_expect_close_fails_just_outside_tolerance():
    with pytest.raises(AnswerError):
        expect_close(0.25 * (1 + 1e-5), 0.25, "ai")


@pytest.mark.parametrize(("got", "hint"), list(MISTAKES.items()))
def test_listed_mistake_gets_its_hint(got, hint):
    with pytest.raises(AnswerError) as info:
        expect_close(got, 0.25, "ai_gemm_naive(1024, 1024, 1024)", mistakes=MISTAKES)
    assert str(info.value) == f"ai_gemm_naive(1024, 1024, 1024) returned {got:.6g}: {hint}"


def test_unlisted_wrong_value_gets_the_generic_message():
    with pytest.raises(AnswerError) as info:
        expect_close(0.3, 0.25, "ai_gemm_naive(1024, 1024, 1024)", mistakes=MISTAKES)
    msg = str(info.value)
    assert msg.startswith("ai_gemm_naive(1024, 1024, 1024) returned 0.3, which is not right.")
    assert "Re-derive FLOPs and bytes" in msg
    for hint in MISTAKES.values():
        assert hint not in msg


def test_mistake_matching_uses_the_same_tolerance():
    with pytest.raises(AnswerError, match="a multiply-add is 2 FLOPs"):
        expect_close(0.125 * (1 + 1e-7), 0.25, "ai", mistakes=MISTAKES)


@pytest.mark.parametrize(
    ("got", "phrase"),
    [
        ("0.25", "returned '0.25' (str); return a number"),
        (None, "returned None (NoneType); return a number"),
        (True, "returned True (bool); return a number"),
        ([0.25], "returned [0.25] (list); return a number"),
        (float("nan"), "returned nan; expected a finite number"),
        (math.inf, "returned inf; expected a finite number"),
        (np.float32("nan"), "expected a finite number"),
    ],
)
def test_expect_close_rejects_non_numbers(got, phrase):
    with pytest.raises(AnswerError) as info:
        expect_close(got, 0.25, "ai")
    assert phrase in str(info.value)


def test_answer_error_is_an_assertion_error():
    assert issubclass(AnswerError, AssertionError)


def test_expect_equal():
    expect_equal("memory-bound", "memory-bound", "bound(0.25)")
    with pytest.raises(AnswerError) as info:
        expect_equal("compute-bound", "memory-bound", "bound(0.25)",
                     hint="0.25 FLOP/byte is left of the ridge point")
    assert str(info.value) == ("bound(0.25) returned 'compute-bound': "
                               "0.25 FLOP/byte is left of the ridge point")
    with pytest.raises(AnswerError, match=r"^bound\(0.25\) returned None$"):
        expect_equal(None, "memory-bound", "bound(0.25)")


# --------------------------------------------------------------------------- ValueError


def ai_checked(M, N, K):
    if min(M, N, K) <= 0:
        raise ValueError(f"sizes must be positive, got {M}, {N}, {K}")
    return 2 * M * N * K / (8 * M * N * K)


def ai_unchecked(M, N, K):
    return 2 * M * N * K / (8 * M * N * K) if M * N * K else 0.0


def ai_wrong_error(M, N, K):
    return 2 * M * N * K / (8 * M * N * K)  # ZeroDivisionError at 0


def ai_type_error(M, N, K):
    if M <= 0:
        raise TypeError("M must be positive")
    return 0.25


def test_expect_value_error_passes_when_value_error_is_raised():
    expect_value_error(ai_checked, 0, 4, 4, what="ai_gemm_naive(0, 4, 4)")
    expect_value_error(ai_checked, M=4, N=-1, K=4, what="ai_gemm_naive(N=-1)")


def test_expect_value_error_fails_when_nothing_is_raised():
    with pytest.raises(AnswerError) as info:
        expect_value_error(ai_unchecked, 0, 4, 4, what="ai_gemm_naive(0, 4, 4)")
    assert str(info.value).startswith("ai_gemm_naive(0, 4, 4) did not raise ValueError")


@pytest.mark.parametrize(("fn", "name"), [(ai_wrong_error, "ZeroDivisionError"),
                                          (ai_type_error, "TypeError")])
def test_expect_value_error_fails_on_another_exception(fn, name):
    with pytest.raises(AnswerError) as info:
        expect_value_error(fn, 0, 4, 4, what="ai_gemm_naive(0, 4, 4)")
    assert str(info.value) == f"ai_gemm_naive(0, 4, 4) raised {name}; raise ValueError instead"
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_answers_are_also_checked_in_the_students_kernel_during_autograde(monkeypatch):
    # The grader compares the notebook's own verdict with its trusted one, so checks run.
    monkeypatch.setenv(backend.AUTOGRADE_ENV, "autograde")
    monkeypatch.delenv(backend.TRUSTED_ENV, raising=False)
    expect_close(0.25, 0.25, "ai")
    expect_equal(1, 1, "x")
    expect_value_error(ai_checked, 0, 1, 1, what="ai")
    with pytest.raises(AnswerError):
        expect_close(0.5, 0.25, "ai")
