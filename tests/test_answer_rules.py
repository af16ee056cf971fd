"""The named-mistake rules behind notebooks 1 and 5's answer tests (the grader's side,
``autograder.answers``), and the student's side that knows only the release's values.

Each rule is proved both ways: a student function that makes exactly that mistake fails with
the rule's hint, and correct answers (written in more than one style) pass. The visible checks
of ``course.checks`` (values from ``course/checks/expected_answers.json``) say exactly what the
rules say at every call the release's test cells make, and refuse any other call.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from autograder.answers import intensity as ia
from autograder.answers import roofline as ra
from autograder.answers import table
from course.checks import expected
from course.checks import intensity_answers as visible_ia
from course.checks import roofline_answers as visible_ra
from course.checks.answers import AnswerError


def _ceil(a, b):
    return -(-a // b)


# --- correct answers, in the students' words -------------------------------------------------

def ai_vector_add(n, bytes_per_element=4):
    return n / (3 * n * bytes_per_element)


def ai_matmul(M, N, K, bytes_per_element=4):
    return 2 * M * N * K / ((M * K + K * N + M * N) * bytes_per_element)


def ai_gemm_naive(M, N, K, bytes_per_element=4):
    return 2 * M * N * K / (M * N * (2 * K + 1) * bytes_per_element)


def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):
    blocks = math.ceil(M / tile) * math.ceil(N / tile)
    elements = blocks * math.ceil(K / tile) * 2 * tile * tile + M * N
    return 2 * M * N * K / (elements * bytes_per_element)


# --- one wrong student function per rule ------------------------------------------------------

VECTOR_ADD_WRONG = {
    "not the write of c": lambda n, bytes_per_element=4: n / (2 * n * bytes_per_element),
    "bytes_per_element is missing": lambda n, bytes_per_element=4: n / (3 * n),
    "one addition per element": lambda n, bytes_per_element=4: 2 * n
    / (3 * n * bytes_per_element),
    "4 is hard-wired": lambda n, bytes_per_element=4: n / (12 * n),
}

MATMUL_WRONG = {
    "FLOPs are half": lambda M, N, K, bytes_per_element=4: M * N * K
    / ((M * K + K * N + M * N) * bytes_per_element),
    "one of the three matrices is missing": lambda M, N, K, bytes_per_element=4: 2 * M * N * K
    / ((M * K + K * N) * bytes_per_element),
    "you counted elements, not bytes": lambda M, N, K, bytes_per_element=4: 2 * M * N * K
    / (M * K + K * N + M * N),
    "4 is hard-wired": lambda M, N, K, bytes_per_element=4: 2 * M * N * K
    / ((M * K + K * N + M * N) * 4),
}

NAIVE_WRONG = {
    "FLOPs are half": lambda M, N, K, bytes_per_element=4: M * N * K
    / (M * N * (2 * K + 1) * bytes_per_element),
    "leave out the write of C": lambda M, N, K, bytes_per_element=4: 2 * M * N * K
    / (M * N * 2 * K * bytes_per_element),
    "not K in all": lambda M, N, K, bytes_per_element=4: 2 * M * N * K
    / (M * N * (K + 1) * bytes_per_element),
    "you counted elements": lambda M, N, K, bytes_per_element=4: 2 * M * N * K
    / (M * N * (2 * K + 1)),
    "ideal model": ai_matmul,
    "4 is hard-wired": lambda M, N, K, bytes_per_element=4: 2 * M * N * K
    / (M * N * (2 * K + 1) * 4),
}


def _tiled(M, N, K, tile, bpe=4, flops=2, per_step=2, c=True, rounding=_ceil, useful=False):
    if useful:
        reads = 2 * M * N * K / tile
    else:
        reads = (rounding(M, tile) * rounding(N, tile) * rounding(K, tile)
                 * per_step * tile * tile)
    return flops * M * N * K / ((reads + (M * N if c else 0)) * bpe)


TILED_WRONG = {
    "FLOPs are half": lambda M, N, K, T, bytes_per_element=4: _tiled(
        M, N, K, T, bytes_per_element, flops=1),
    "leave out the write of C": lambda M, N, K, T, bytes_per_element=4: _tiled(
        M, N, K, T, bytes_per_element, c=False),
    "a tile of A AND a tile of B": lambda M, N, K, T, bytes_per_element=4: _tiled(
        M, N, K, T, bytes_per_element, per_step=1),
    "only the useful elements": lambda M, N, K, T, bytes_per_element=4: _tiled(
        M, N, K, T, bytes_per_element, useful=True),
    "round the numbers of blocks and steps UP": lambda M, N, K, T, bytes_per_element=4: _tiled(
        M, N, K, T, bytes_per_element, rounding=lambda a, b: a // b),
    "bytes_per_element is missing": lambda M, N, K, T, bytes_per_element=4: _tiled(
        M, N, K, T, 1),
    "naive kernel's model": lambda M, N, K, T, bytes_per_element=4: ai_gemm_naive(
        M, N, K, bytes_per_element),
    "4 is hard-wired": lambda M, N, K, T, bytes_per_element=4: _tiled(M, N, K, T, 4),
}

# The notebook's own cases (visible and hidden), so each rule is tried where it is used.
VECTOR_ADD_CASES = [(1_000_000,), (1000, 8), (7, 2), (1,)]
MATMUL_CASES = [(256, 256, 256), (1024, 1024, 1024, 8), (1, 1, 1), (64, 32, 16),
                (300, 7, 45, 2), (1, 1000, 3), (5, 3, 1000, 8)]
NAIVE_CASES = [(1024, 1024, 1024), (100, 37, 45), (5, 300, 7, 8), (1, 1, 1, 8)]
TILED_CASES = [(1024, 1024, 1024, 16), (100, 37, 45, 16), (33, 70, 65, 32, 8), (1, 1, 1, 8),
               (257, 129, 3, 4, 2)]

FORMULAS = [
    (ia.check_ai_vector_add, ai_vector_add, VECTOR_ADD_WRONG, VECTOR_ADD_CASES),
    (ia.check_ai_matmul, ai_matmul, MATMUL_WRONG, MATMUL_CASES),
    (ia.check_ai_gemm_naive, ai_gemm_naive, NAIVE_WRONG, NAIVE_CASES),
    (ia.check_ai_gemm_tiled, ai_gemm_tiled, TILED_WRONG, TILED_CASES),
]


@pytest.mark.parametrize("check, right, wrong, cases", FORMULAS,
                         ids=["vector_add", "matmul", "naive", "tiled"])
def test_intensity_rules_pass_right_answers_and_name_each_mistake(check, right, wrong, cases):
    check(right, cases)
    for hint, fn in wrong.items():
        with pytest.raises(AnswerError, match=hint.replace("(", r"\(").replace(")", r"\)")):
            check(fn, cases)


def test_intensity_checks_accept_other_correct_styles():
    def ai_gemm_tiled_divmod(M, N, K, tile, bytes_per_element=4):
        q = [(x + tile - 1) // tile for x in (M, N, K)]
        moved = (q[0] * q[1] * q[2] * 2 * tile**2 + M * N) * bytes_per_element
        return float(np.float64(2 * M * N * K) / moved)

    ia.check_ai_gemm_tiled(ai_gemm_tiled_divmod, TILED_CASES)


def test_unknown_wrong_value_fails_without_a_made_up_name():
    with pytest.raises(AnswerError, match="not right"):
        ia.check_ai_matmul(lambda M, N, K, bytes_per_element=4: 1.0, [(64, 32, 16)])


def test_coinciding_mistakes_are_both_named():
    # ai_matmul(300, 7, 45, bytes_per_element=2): half the FLOPs = a hard-wired 4 bytes.
    values = expected.hints(ia.mistaken_values(ia.matmul_model, (300, 7, 45, 2),
                                               ia.MATMUL_MISTAKES))
    assert any("FLOPs are half" in h and "; or " in h and "hard-wired" in h
               for h in values.values())
    # a mistake that gives the right value on a case is not listed (4 bytes hard-wired at 4)
    values = expected.hints(ia.mistaken_values(ia.matmul_model, (64, 32, 16),
                                               ia.MATMUL_MISTAKES))
    assert not any("hard-wired" in h for h in values.values())


def test_bad_case_is_refused():
    with pytest.raises(ValueError, match="optional bytes_per_element"):
        ia.check_ai_matmul(ai_matmul, [(1, 2)])


# --- notebook 5 --------------------------------------------------------------------------------

def critical_ai(peak_gflops, bandwidth_gbs):
    return peak_gflops / bandwidth_gbs


def attainable_gflops(ai, peak_gflops, bandwidth_gbs):
    memory = bandwidth_gbs * ai
    return (memory < peak_gflops) * memory + (memory >= peak_gflops) * peak_gflops


def bound(ai, peak_gflops, bandwidth_gbs):
    return "memory" if ai < critical_ai(peak_gflops, bandwidth_gbs) else "compute"


RIDGE_CASES = [(8141.0, 320.0), (66900.0, 4800.0), (1000.0, 250.0)]
RIDGE_WRONG = {
    "swapped": lambda p, b: b / p,
    "do not multiply": lambda p, b: p * b,
    "T4's ridge": lambda p, b: 8141.0 / 320.0,
}

ROOF_CASES = [(0.25, 8141.0, 320.0), (100.0, 8141.0, 320.0), (1 / 12, 66900.0, 4800.0),
              (27.875, 66900.0, 4800.0), (25.0, 8000.0, 320.0)]
ROOF_WRONG = {
    "not the maximum": lambda a, p, b: max(p, b * a),
    "not bandwidth × ai alone": lambda a, p, b: b * a,
    "swapped": lambda a, p, b: min(b, p * a),
    "not peak × ai": lambda a, p, b: p * a,
    "not bandwidth / ai": lambda a, p, b: min(p, b / a),
    "no roof was kept": lambda a, p, b: (b * a < p) * b * a + (b * a > p) * p,
    "twice the peak": lambda a, p, b: (b * a <= p) * b * a + (b * a >= p) * p,
}

BOUND_CASES = [(0.25, 8141.0, 320.0), (100.0, 8141.0, 320.0), (25.0, 8000.0, 320.0),
               (13.9, 66900.0, 4800.0), (13.9375, 66900.0, 4800.0), (500.0, 1000.0, 250.0)]
BOUND_WRONG = {
    "strictly": lambda a, p, b: "memory" if a <= p / b else "compute",
    "sides are swapped": lambda a, p, b: "compute" if a < p / b else "memory",
    "not the T4's ridge": lambda a, p, b: "memory" if a < 8141.0 / 320.0 else "compute",
    "exactly the string": lambda a, p, b: "Memory" if a < p / b else "Compute",
}


@pytest.mark.parametrize("check, right, wrong, cases", [
    (ra.check_critical_ai, critical_ai, RIDGE_WRONG, RIDGE_CASES),
    (ra.check_attainable, attainable_gflops, ROOF_WRONG, ROOF_CASES),
    (ra.check_bound, bound, BOUND_WRONG, BOUND_CASES),
], ids=["critical_ai", "attainable", "bound"])
def test_roofline_rules_pass_right_answers_and_name_each_mistake(check, right, wrong, cases):
    check(right, cases)
    for hint, fn in wrong.items():
        with pytest.raises(AnswerError, match=hint):
            check(fn, cases)


def test_attainable_array_passes_numpy_and_masks_and_names_element_mistakes():
    intensities = [1 / 12, 0.25, 4.0, 25.0, 100.0, 1000.0]
    ra.check_attainable_array(attainable_gflops, intensities, 8000.0, 320.0)

    def attainable_np(ai, peak_gflops, bandwidth_gbs):
        return np.minimum(peak_gflops, bandwidth_gbs * ai)

    ra.check_attainable_array(attainable_np, intensities, 8000.0, 320.0)

    def attainable_scalar_only(ai, peak_gflops, bandwidth_gbs):
        return min(peak_gflops, bandwidth_gbs * ai)

    with pytest.raises(AnswerError, match="not for an array"):
        ra.check_attainable_array(attainable_scalar_only, intensities, 8000.0, 320.0)

    def attainable_no_ridge(ai, peak_gflops, bandwidth_gbs):
        memory = bandwidth_gbs * ai
        return (memory < peak_gflops) * memory + (memory > peak_gflops) * peak_gflops

    with pytest.raises(AnswerError, match=r"at ai = 25 returned 0: no roof was kept"):
        ra.check_attainable_array(attainable_no_ridge, intensities, 8000.0, 320.0)

    def attainable_one_value(ai, peak_gflops, bandwidth_gbs):
        return np.float64(80.0)

    with pytest.raises(AnswerError, match="one limit per intensity"):
        ra.check_attainable_array(attainable_one_value, intensities, 8000.0, 320.0)


# --- the student's side: the release's values, the same messages ------------------------------

SOURCE = Path(__file__).resolve().parents[1] / "source" / "week4"
VISIBLE = {  # each visible check, its rules-based twin, the right answer, the wrong ones
    "check_ai_vector_add": (visible_ia.check_ai_vector_add, ia.check_ai_vector_add,
                            ai_vector_add, VECTOR_ADD_WRONG),
    "check_ai_matmul": (visible_ia.check_ai_matmul, ia.check_ai_matmul, ai_matmul, MATMUL_WRONG),
    "check_ai_gemm_naive": (visible_ia.check_ai_gemm_naive, ia.check_ai_gemm_naive,
                            ai_gemm_naive, NAIVE_WRONG),
    "check_ai_gemm_tiled": (visible_ia.check_ai_gemm_tiled, ia.check_ai_gemm_tiled,
                            ai_gemm_tiled, TILED_WRONG),
    "check_critical_ai": (visible_ra.check_critical_ai, ra.check_critical_ai, critical_ai,
                          RIDGE_WRONG),
    "check_attainable": (visible_ra.check_attainable, ra.check_attainable, attainable_gflops,
                         ROOF_WRONG),
    "check_bound": (visible_ra.check_bound, ra.check_bound, bound, BOUND_WRONG),
}


def _message(check, fn, cases) -> str:
    try:
        check(fn, cases)
    except AnswerError as exc:
        return str(exc)
    return "passed"


@pytest.mark.parametrize("name", sorted(VISIBLE))
def test_visible_checks_say_what_the_rules_say_at_every_released_call(name):
    visible, rules, right, wrong = VISIBLE[name]
    cases = [tuple(e["case"]) for e in json.loads(expected.TABLE.read_text())[name]]
    assert cases
    for case in cases:
        assert _message(visible, right, [case]) == _message(rules, right, [case]) == "passed"
        for fn in wrong.values():
            assert _message(visible, fn, [case]) == _message(rules, fn, [case]), (name, case)
    # and the table is what the rules give (no stale value stands in for a rule)
    assert json.loads(expected.TABLE.read_text()) == table.build(SOURCE)


def test_visible_attainable_array_says_what_the_rules_say():
    ((entry),) = json.loads(expected.TABLE.read_text())["check_attainable_array"]
    intensities, peak, bandwidth = entry["case"]
    for fn in (attainable_gflops, *ROOF_WRONG.values()):
        def run(check, fn=fn):
            try:
                check(fn, intensities, peak, bandwidth)
            except (AnswerError, ValueError, TypeError) as exc:
                return f"{type(exc).__name__}: {exc}"
            return "passed"
        assert run(visible_ra.check_attainable_array) == run(ra.check_attainable_array)


def test_visible_checks_refuse_a_call_the_release_does_not_make():
    """A hidden test's call is not in the student's table: the visible check says so (it holds
    no rule to work it out), the grader's twin checks it."""
    with pytest.raises(ValueError, match="notebook's own test calls only"):
        visible_ia.check_ai_vector_add(ai_vector_add, [(7, 2)])
    ia.check_ai_vector_add(ai_vector_add, [(7, 2)])
    with pytest.raises(ValueError, match="notebook's own test calls only"):
        visible_ra.check_bound(bound, [(13.9, 66900.0, 4800.0)])


def test_the_messages_are_the_ones_students_got_before_the_rules_moved(tmp_path, monkeypatch):
    """Every named-mistake message, visible and hidden calls, English and Korean, is exactly
    what the checks said when their rules lived in course (tests/before_29/: the last commit
    before the move)."""
    import importlib.util
    import sys

    def load(name: str):
        """The old module, as ``old_<name>``, registered in sys.modules until the test ends
        (the old roofline checks import the old intensity ones by that name)."""
        source = (Path(__file__).with_name("before_29") / f"{name}.py").read_text()
        source = source.replace("from course.checks.intensity_answers import",
                                "from old_intensity_answers import")
        (tmp_path / f"old_{name}.py").write_text(source)
        spec = importlib.util.spec_from_file_location(f"old_{name}", tmp_path / f"old_{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, spec.name, module)  # removed again on teardown
        spec.loader.exec_module(module)
        return module

    old_ia = load("intensity_answers")
    old_ra = load("roofline_answers")
    pairs = [(old_ia.check_ai_vector_add, ia.check_ai_vector_add, ai_vector_add,
              VECTOR_ADD_WRONG, VECTOR_ADD_CASES),
             (old_ia.check_ai_matmul, ia.check_ai_matmul, ai_matmul, MATMUL_WRONG, MATMUL_CASES),
             (old_ia.check_ai_gemm_naive, ia.check_ai_gemm_naive, ai_gemm_naive, NAIVE_WRONG,
              NAIVE_CASES),
             (old_ia.check_ai_gemm_tiled, ia.check_ai_gemm_tiled, ai_gemm_tiled, TILED_WRONG,
              TILED_CASES),
             (old_ra.check_critical_ai, ra.check_critical_ai, critical_ai, RIDGE_WRONG,
              RIDGE_CASES),
             (old_ra.check_attainable, ra.check_attainable, attainable_gflops, ROOF_WRONG,
              ROOF_CASES),
             (old_ra.check_bound, ra.check_bound, bound, BOUND_WRONG, BOUND_CASES)]
    compared = 0
    for language in ("en", "ko"):
        monkeypatch.setenv("COURSE_LANG", language)
        for old, new, right, wrong, cases in pairs:
            for case in cases:
                for fn in (right, *wrong.values()):
                    assert _message(new, fn, [case]) == _message(old, fn, [case]), (
                        language, case)
                    compared += 1
    assert compared > 400
