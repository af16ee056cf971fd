"""Notebook 1's answer checks: each formula against the right value and the named mistakes.

What a student's copy of the course holds is *values*, not rules: for each call the notebook's
visible test cells make, the right intensity and the value each typical mistake gives there
(FLOPs halved, the write of C left out, elements instead of bytes, ...), worked out when the
release was built and stored in ``expected_answers.json`` beside this module. A wrong answer
equal to one of those values is told which mistake it is; two mistakes that give the same value
are both named. The rules that work these out for any call — the models the exercise asks the
student to write — are the grader's (``autograder.answers``), and the hidden tests use them.

A case is the tuple of a call's positional arguments; one element more than the function's
sizes is ``bytes_per_element``, passed by keyword (``(1000, 8)`` calls
``ai_vector_add(1000, bytes_per_element=8)``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from course.checks import expected
from course.checks.answers import expect_close
from course.trust import gate


def check_formula(fn: Callable[..., Any], name: str, sizes: int,
                  cases: Sequence[tuple], known: Callable[[tuple], expected.Expected]) -> None:
    """Call ``fn`` on each case and compare it with what ``known`` says of that case.

    The visible checks below look cases up in the release's table; the grader's checks pass
    the rules' own values (``autograder.answers.intensity``), so both speak alike.
    """
    gate.begin_check(f"check {name}")
    for case in cases:
        if len(case) not in (sizes, sizes + 1):
            raise ValueError(f"a case of {name} has {sizes} sizes and an optional "
                             f"bytes_per_element, got {case!r}")
        shown = ", ".join(repr(x) for x in case[:sizes])
        if len(case) > sizes:
            got = fn(*case[:sizes], bytes_per_element=case[sizes])
            shown += f", bytes_per_element={case[sizes]!r}"
        else:
            got = fn(*case)
        entry = known(tuple(case))
        expect_close(got, float(entry.value), f"{name}({shown})",
                     mistakes=expected.hints(entry.mistakes))


def check_ai_vector_add(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """Check ``ai_vector_add`` on each ``(n[, bytes_per_element])`` of the notebook."""
    check_formula(fn, "ai_vector_add", 1, cases, expected.known("check_ai_vector_add"))


def check_ai_matmul(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """Check ``ai_matmul`` on each ``(M, N, K[, bytes_per_element])`` of the notebook."""
    check_formula(fn, "ai_matmul", 3, cases, expected.known("check_ai_matmul"))


def check_ai_gemm_naive(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """Check ``ai_gemm_naive`` on each ``(M, N, K[, bytes_per_element])`` of the notebook."""
    check_formula(fn, "ai_gemm_naive", 3, cases, expected.known("check_ai_gemm_naive"))


def check_ai_gemm_tiled(fn: Callable[..., Any], cases: Sequence[tuple]) -> None:
    """Check ``ai_gemm_tiled`` on each ``(M, N, K, tile[, bytes_per_element])`` of the
    notebook."""
    check_formula(fn, "ai_gemm_tiled", 4, cases, expected.known("check_ai_gemm_tiled"))
