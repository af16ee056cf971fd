"""The ✓ line a test cell prints once its checks have passed, in the student's language.

A test cell of notebooks 01 and 05 runs its checks and then says, in one line, what the
student has now shown (``✓ ai_matmul(256, 256, 256) = 42.67 FLOP/byte``). The line is here,
keyed by the test cell's grade_id, so that it goes through the message catalog: code cells are
the same in every release, and a Korean student reads Korean. The grader runs the same test
cell in its own process with the notebook's language, so it records exactly this line too
(docs/grading.md, "One verdict").
"""

from __future__ import annotations

from course.runtime.i18n import N_
from course.runtime.notes import fill

#: the success line of each test cell that prints one, by grade_id (English; translated when
#: printed).
PASSED = {
    # notebook 01
    "ai_vector_add_basic": N_("✓ ai_vector_add: 1/12 FLOP/byte in FP32, 1/24 in FP64, for any n"),
    "ai_matmul_square": N_("✓ ai_matmul(256, 256, 256) = 42.67 FLOP/byte"),
    "ai_matmul_ragged": N_("✓ ai_matmul(64, 32, 16) is right"),
    "ai_gemm_naive_model": N_("✓ ai_gemm_naive: about 0.25 FLOP/byte in FP32, whatever the size"),
    "ai_gemm_tiled_model": N_(
        "✓ ai_gemm_tiled: about tile/4 FLOP/byte in FP32 for large matrices"),
    "ai_bad_arguments": N_("✓ bad sizes raise ValueError"),
    # notebook 05
    "critical_ai_ridge": N_(
        "✓ critical_ai(8141, 320) = 25.44 FLOP/byte: a T4 does about 25 FLOPs per byte it moves"),
    "attainable_scalar": N_("✓ attainable_gflops: 80 GFLOP/s at 0.25 FLOP/byte (memory roof), "
                            "8,141 at 100 (compute roof)"),
    "attainable_arrays": N_(
        "✓ attainable_gflops works element by element on arrays, with names the grader accepts"),
    "bound_sides": N_('✓ bound: "memory" below the ridge, "compute" at and above it'),
    "measured_intensities_levels": N_(
        "✓ measured_intensities: FLOPs over each level's own bytes, for any levels"),
    "bounding_level_verdict": N_(
        '✓ bounding_level: the level whose bytes take longest, or "compute" when the '
        'arithmetic does'),
}


def passed_line(test: str) -> str:
    """The success line of the test cell ``test`` (its grade_id), in the student's language;
    :class:`course.runtime.notes.UnknownNoteError` names the tests that have one otherwise."""
    return fill(PASSED, "success line", test, {})


def passed(test: str) -> None:
    """Print the success line of the test cell ``test`` (its grade_id): call it last in the
    cell, after every check has passed."""
    print(passed_line(test))


class PrintedReport:
    """A check's report, already printed as its ✓ line: a notebook does not echo it again.

    A test cell ends with the check's call, so IPython would show the returned report after
    the ✓ line (``GemmReport(kernel='gemm_naive', …)``). ``_ipython_display_`` shows nothing;
    ``print(report)`` and code that reads the report's fields work as before.
    """

    def _ipython_display_(self) -> None:
        """Nothing: the check printed this report's ✓ line already."""
