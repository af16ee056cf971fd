"""The grade table reads the gradebook in a few queries, however large the class.

``collect`` runs after every student graded (the progress line's total is the class's) and
again for the table, the export and the report. Read one attribute at a time, as nbgrader's
objects load them, it issued about 75 queries per full submission (7,433 for a class of 100):
on the GPU box the last students waited for it. Here: the same rows as reading each student's
submission on its own, in as many queries for 24 students as for 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from autograder.results import table
from autograder.runner.names import ASSIGNMENT

NOTEBOOKS = {"01_arithmetic_intensity": 3, "05_roofline": 2}
#: nbgrader's own add_submission, building the gradebook, warns about its autoflush
pytestmark = pytest.mark.filterwarnings("ignore:Object of type:sqlalchemy.exc.SAWarning")


def _course(root: Path, students: int) -> list[str]:
    """A gradebook of ``students`` graded students (scores varying, one hand grade, one answer
    still to grade by hand) and one who handed nothing in; their folders and re-check records."""
    from nbgrader.api import Gradebook

    ids = [f"s{i:02}" for i in range(students)]
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.add_assignment(ASSIGNMENT)
        for nb, cells in NOTEBOOKS.items():
            gb.add_notebook(nb, ASSIGNMENT)
            for c in range(cells):
                gb.add_grade_cell(f"c{c}", nb, ASSIGNMENT, max_score=c + 1, cell_type="code")
            gb.add_grade_cell("why", nb, ASSIGNMENT, max_score=2, cell_type="markdown")
            gb.add_solution_cell("why", nb, ASSIGNMENT)
        for i, sid in enumerate(ids):
            gb.add_student(sid)
            gb.add_submission(ASSIGNMENT, sid)
            for nb, cells in NOTEBOOKS.items():
                for c in range(cells):
                    grade = gb.find_grade(f"c{c}", nb, ASSIGNMENT, sid)
                    grade.auto_score, grade.needs_manual_grade = float((i + c) % (c + 2)), False
                why = gb.find_grade("why", nb, ASSIGNMENT, sid)
                if i % 3 == 0:
                    why.manual_score, why.needs_manual_grade = 1.5, False
                folder = root / "autograded" / sid / ASSIGNMENT
                folder.mkdir(parents=True, exist_ok=True)
                (folder / f"{nb}.ipynb").write_text("{}")
                (folder / f"{nb}.trusted.json").write_text(json.dumps({"language": "en",
                                                                        "cells": {}}))
                handed = root / "submitted" / sid / ASSIGNMENT
                handed.mkdir(parents=True, exist_ok=True)
                (handed / f"{nb}.ipynb").write_text("{}")
        gb.add_student("ghost")
        gb.db.commit()
    return ids


def _queries(root: Path) -> tuple[int, list[table.Row]]:
    count = [0]

    def counted(*_: object) -> None:
        count[0] += 1

    event.listen(Engine, "before_cursor_execute", counted)
    try:
        _, rows = table.collect(root)
    finally:
        event.remove(Engine, "before_cursor_execute", counted)
    return count[0], rows


@pytest.fixture(scope="module")
def courses(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    made = {}
    for size in (2, 24):
        root = tmp_path_factory.mktemp(f"class{size}")
        _course(root, size)
        made[size] = root
    return made


def test_the_table_reads_a_large_class_in_as_many_queries_as_a_small_one(courses) -> None:
    small, _ = _queries(courses[2])
    large, rows = _queries(courses[24])
    assert len(rows) == 25
    assert large == small, (small, large)


def test_each_row_is_what_the_student_alone_gives_and_what_the_gradebook_says(courses) -> None:
    from nbgrader.api import Gradebook

    root = courses[24]
    names, rows = table.collect(root)
    assert names == list(NOTEBOOKS)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for row in rows:
            assert [vars(r) for r in table.collect(root, only=[row.student])[1]] == [vars(row)]
            if row.student == "ghost":
                assert "no submission" in row.notes and row.missing == names
                continue
            for nb in names:
                assert row.scores[nb] == (gb.find_submission_notebook(nb, ASSIGNMENT,
                                                                      row.student).score,
                                          gb.find_notebook(nb, ASSIGNMENT).max_score)
            manual = [f"{nb}:why" for nb in names]
            assert (row.manual if int(row.student[1:]) % 3 else row.hand_graded) == (
                manual if int(row.student[1:]) % 3
                else [f"{m} 1.5/2" for m in manual])
