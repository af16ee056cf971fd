"""How long each cell ran in the student's kernel (autograder/grading/trusted.py,
``kernel_seconds``), read from the timestamps nbclient records while a cell runs, and kept in
the notebook's ``.trusted.json``: what the test class's per-cell limit is measured against."""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.grading.trusted import kernel_seconds


def _ran(source: str, busy: str, reply: str | None, grade_id: str | None = None):
    stamps = {"iopub.status.busy": busy, "iopub.execute_input": busy}
    if reply is not None:
        stamps["shell.execute_reply"] = reply
    meta = {"execution": stamps}
    if grade_id:
        meta["nbgrader"] = {"grade_id": grade_id, "grade": True, "solution": False}
    return new_code_cell(source, metadata=meta)


def test_each_run_cell_gets_its_seconds_by_grade_id_or_index() -> None:
    nb = new_notebook(cells=[
        new_markdown_cell("# A title"),
        _ran("import course", "2026-12-07T12:00:00.000000Z", "2026-12-07T12:00:01.250000Z"),
        _ran("check()", "2026-12-07T12:00:02.000000Z", "2026-12-07T12:00:05.5Z",
             grade_id="ai_vector_add_basic"),
        new_code_cell("x = 1"),  # never ran (after a dead kernel): no stamps
    ])
    assert kernel_seconds(nb) == {"cell-1": 1.25, "ai_vector_add_basic": 3.5}


def test_a_cell_cut_off_counts_to_its_last_message_and_garbage_is_skipped() -> None:
    cut = _ran("while True: pass", "2026-12-07T12:00:00Z", None)
    cut.metadata["execution"]["iopub.status.idle"] = "2026-12-07T12:00:30Z"
    garbled = _ran("y = 2", "not a time", "2026-12-07T12:00:01Z")
    no_end = _ran("z = 3", "2026-12-07T12:00:00Z", None)
    nb = new_notebook(cells=[cut, garbled, no_end])
    assert kernel_seconds(nb) == {"cell-0": 30.0}


def test_the_students_own_stamps_and_anything_else_they_wrote_are_skipped() -> None:
    """The metadata comes with the submission: a cell the grading never ran keeps whatever the
    student's notebook held. Stamps from before this grading's run, stamps without a time zone
    (nbclient's have one), and values that are no stamps at all count for nothing and never
    stop the re-check."""
    from datetime import UTC, datetime

    since = datetime(2026, 12, 7, 12, 0, tzinfo=UTC)
    theirs = _ran("a = 1", "2026-11-30T09:00:00Z", "2026-11-30T09:00:09Z")  # their own run
    mixed = _ran("b = 2", "2026-12-07T12:00:01", "2026-12-07T12:00:02Z")  # no time zone
    odd, not_a_dict = new_code_cell("c = 3"), new_code_cell("d = 4")
    bad_id = _ran("e = 5", "2026-12-07T12:00:03Z", "2026-12-07T12:00:04Z")
    nb = new_notebook(cells=[theirs, mixed, odd, not_a_dict, bad_id])
    # what nbformat's schema would refuse, set past it in the notebook itself
    nb.cells[2].metadata["execution"] = {"iopub.status.busy": 12, "shell.execute_reply": ["x"]}
    nb.cells[3].metadata["execution"] = "yesterday"
    nb.cells[4].metadata["nbgrader"] = {"grade_id": {"<script>": 1}}
    assert nb.cells[4].metadata["nbgrader"]["grade_id"] == {"<script>": 1}
    assert kernel_seconds(nb, since) == {"cell-4": 1.0}
    assert kernel_seconds(nb) == {"cell-0": 9.0, "cell-4": 1.0}  # no start known: aware ones
