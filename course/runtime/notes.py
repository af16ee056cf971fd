"""The one-line notes the notebooks' own cells print, in the student's language.

A cell that has nothing to show yet (an answer not written, no GPU to time on, grading in
progress) says so in one line; the line is here, in the message catalog, rather than in the
cell, because code cells are the same in every release of the week and a Korean student must
read Korean (course/runtime/i18n.py). A cell calls ``note("skipped_while_grading")`` or, with
values for the placeholders, ``note("refused", error=e)``. The text of the
figures a notebook draws with its own code is :mod:`course.runtime.figures`.
"""

from __future__ import annotations

from course.runtime.i18n import N_, _

#: every note a notebook cell prints, by name (English; translated when printed).
NOTES = {
    "skipped_while_grading": N_("Skipped while grading."),
    "timing_needs_gpu": N_(
        "Timing needs a real GPU: the simulator runs the GPU threads one at a time in Python and "
        "has no clock worth reading. On Colab, pick a T4 runtime and run this cell again."),
    "speedup_needs_gpu": N_(
        "The speed-up is measured on a GPU only; the grader will measure it on one."),
    "speedup_graded": N_(
        "The grader measures this speed-up on a GPU, from your notebook's source; without a GPU "
        "the result is \"not measured\", never \"passed\"."),
    "swapped_ratio": N_("x ↔ row takes {ratio:.2f}× as long as x ↔ column at {size}³"),
    "write_swapped_first": N_(
        "Write gemm_naive_swapped above first; then this cell times both mappings."),
    "write_intensity_first": N_("Fill in the functions above to see the plot."),
    "write_roofline_first": N_("Write attainable_gflops and bound above to see the table."),
    "write_occupancy_first": N_("Write predict_blocks_per_sm and predict_occupancy above first."),
    "write_register_tiled_first": N_("Write make_gemm_register_tiled first."),
    "load_kernels_first": N_("Load your kernels first (section 2)."),
    "sweep_needs_tiled": N_("The sweep needs your tiled kernel (notebook 3 or 3c): write it "
                            "there, then rerun this."),
    "panel_needs_tiled": N_("The panel needs your tiled kernel (notebook 3 or 3c)."),
    "refused": N_("refused: {error}"),
    "occupancy_try": N_("tile {tile:2d}: blocks per SM {blocks:2d}, occupancy {occupancy:.0%}"),
    "assumed_registers": N_(
        "--- {registers} registers per thread (where the count must be assumed)"),
    "naive_reads": N_("{M}×{N}×{K}: naive kernel reads {reads:,} elements of A and B ({gb:.2f} GB "
                      "in FP32)"),
    "tiled_reads": N_("    tile {tile:2d}: {reads:>13,} ({gb:5.2f} GB), {fewer:4.1f}× fewer"),
    "python_loop_time": N_("Python triple loop, {n}³: {ms:8.1f} ms, {gflops:8.4f} GFLOP/s (at "
                           "1024³ that rate would need about {at_1024:,.0f} s)"),
    "numpy_time": N_("NumPy A @ B,        {n}³: {ms:8.1f} ms, {gflops:8.1f} GFLOP/s"),
    "vector_add_run": N_("{blocks} blocks of {threads} threads for {n} elements; c[:3] = {head}, "
                         "c[-1] = {last}"),
    "vector_add_matches": N_("matches a + b: {matches}; elements never written: {unwritten}"),
    "float32_exact": N_("largest |partial sum| at K = {K}: {largest:,}; float32 is exact up to "
                        "{limit:,}"),
    "float32_past_limit": N_("just past the limit, 2**24 + 1 rounds back to 2**24: {rounds}"),
}

class UnknownNoteError(KeyError):
    """A cell asked for a note that does not exist, or left out one of its values."""


def fill(table: dict[str, str], what: str, name: str, values: dict[str, object]) -> str:
    """Entry ``name`` of ``table`` (English), translated, ``values`` in its placeholders; a
    clear error naming ``what`` is missing otherwise."""
    if name not in table:
        raise UnknownNoteError(f"no {what} named {name!r}; there are: {', '.join(table)}")
    try:
        return _(table[name]).format(**values)
    except KeyError as exc:
        raise UnknownNoteError(f"the {what} {name!r} needs a value for {exc}") from None


def note_text(name: str, **values: object) -> str:
    """The note ``name`` of :data:`NOTES` in the student's language, ``values`` filled in."""
    return fill(NOTES, "note", name, values)


def note(name: str, **values: object) -> None:
    """Print the note ``name`` (see :data:`NOTES`), ``values`` in its placeholders."""
    print(note_text(name, **values))
