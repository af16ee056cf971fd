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
