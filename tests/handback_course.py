"""A small graded course for the way back (tests/test_handback.py, tests/test_canvas_upload.py).

Collected for real — a Canvas zip and a Moodle zip through ``make collect``'s code (nbgrader's
``zip_collect`` with the course's plugins), a mapping file for some students — and graded by
hand into a gradebook built with nbgrader's API (running notebooks would take minutes): notebook
01 with an autograded cell (10 points) and a written answer graded by hand (2 points).

=============  =====================================  ======================================
student        handed in                              grade
=============  =====================================  ======================================
jane           Canvas 4101 ``doejane``, mapped        10 + 2 by hand: 12/12
4102           Canvas 4102 ``smithbob``, late         10, written answer still ungraded
minji          Canvas 4103 ``kimminji``, mapped       7 + 2: 9/12, her notebook in Korean
vic            Moodle 5202 ``Vic Sample``, mapped     8 + 1: 9/12
ghost          nothing (in the gradebook only)        no submission
4107           Canvas 4107 ``leeann``: a picture      not in the gradebook (never graded)
=============  =====================================  ======================================
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

from autograder.cli import harness
from autograder.handin import collect
from autograder.runner.names import ASSIGNMENT

ROOT = Path(__file__).resolve().parents[1]
NB1 = "01_arithmetic_intensity"
#: each student's feedback HTML: a stand-in for nbgrader's (the Korean one in Korean), with a
#: script in it, as a student's output may carry: it must be copied, never run or parsed
FEEDBACK = {
    "jane": "<html><body><h1>jane</h1>12/12<script>alert(1)</script></body></html>",
    "4102": "<html><body>smithbob 10/12</body></html>",
    "minji": "<html><body><h1>피드백</h1>9/12 점 — 잘했어요</body></html>",
    "vic": "<html><body>vic 9/12</body></html>",
}
SCORES = {"jane": (10, 2), "4102": (10, None), "minji": (7, 2), "vic": (8, 1)}


def _release_nb(name: str) -> dict:
    return json.loads((ROOT / "release" / ASSIGNMENT / f"{name}.ipynb").read_text())


def _zip(path: Path, members: dict[str, dict]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, nb in members.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=(2026, 11, 20, 9, 0, 0)),
                        json.dumps(nb))
    return path


def build(base: Path) -> Path:
    """The course directory (``base/course``), collected and graded; LMS files beside it."""
    root = base / "course"
    root.mkdir()
    shutil.copytree(ROOT / "release", root / "release")
    shutil.copy(ROOT / "nbgrader_config.py", root)
    korean = _release_nb(NB1)
    korean["metadata"].setdefault("course", {})["language"] = "ko"
    canvas = _zip(base / "canvas.zip", {
        f"doejane_4101_700001_{NB1}.ipynb": _release_nb(NB1),
        f"smithbob_LATE_4102_700002_Copy of {NB1}.ipynb": _release_nb(NB1),
        f"kimminji_4103_700003_{NB1}.ipynb": korean,
    })
    with zipfile.ZipFile(canvas, "a") as zf:  # a student who handed in a picture only
        zf.writestr("leeann_4107_700009_photo.png", b"\x89PNG")
    moodle = _zip(base / "moodle.zip", {
        f"Vic Sample_5202_assignsubmission_file_/week4/{NB1}.ipynb": _release_nb(NB1)})
    ids = base / "ids.csv"
    ids.write_text("lms_id,student_id\n4101,jane\n4103,minji\n5202,vic\n")
    for archive in (canvas, moodle):
        assert collect.collect_zip(root, archive, harness.nbgrader, mapping=ids) == 0
    _gradebook(root)
    for student, html in FEEDBACK.items():
        folder = root / "feedback" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        (folder / f"{NB1}.html").write_text(html, encoding="utf-8")
        graded = root / "autograded" / student / ASSIGNMENT
        graded.mkdir(parents=True)
        (graded / f"{NB1}.ipynb").write_text("{}")
        (graded / f"{NB1}.trusted.json").write_text(json.dumps(
            {"language": "ko" if student == "minji" else "en", "cells": {}}))
    return root


def _gradebook(root: Path) -> None:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        gb.add_assignment(ASSIGNMENT)
        gb.add_notebook(NB1, ASSIGNMENT)
        gb.add_grade_cell("auto", NB1, ASSIGNMENT, max_score=10, cell_type="code")
        gb.add_grade_cell("why", NB1, ASSIGNMENT, max_score=2, cell_type="markdown")
        gb.add_solution_cell("why", NB1, ASSIGNMENT)
        names = {"jane": ("Jane", "Doe"), "minji": ("민지", "김"), "vic": ("Vic", "Sample")}
        for student, (auto, by_hand) in SCORES.items():
            first, last = names.get(student, (None, None))
            gb.add_student(student, first_name=first, last_name=last)
            gb.add_submission(ASSIGNMENT, student)
            grade = gb.find_grade("auto", NB1, ASSIGNMENT, student)
            grade.auto_score, grade.needs_manual_grade = auto, False
            why = gb.find_grade("why", NB1, ASSIGNMENT, student)
            if by_hand is None:
                why.needs_manual_grade = True
            else:
                why.manual_score, why.needs_manual_grade = by_hand, False
        gb.add_student("ghost", first_name="Casper", last_name="Ghost")
        gb.db.commit()


def canvas_export(path: Path) -> Path:
    """A gradebook export as Canvas writes it: its extra columns, the ``Points Possible`` row
    with ``(read only)`` under the totals, a ``Manual Posting`` row, the test student, a
    student who never handed in, and another assignment."""
    head = ("Student,ID,SIS User ID,SIS Login ID,Integration ID,Root Account,Section,"
            "Week 3 (900),Week 4: Roofline (1234),Assignments Current Score,"
            "Assignments Unposted Current Score,Current Score,Unposted Current Score,"
            "Final Score")
    rows = [
        "    Points Possible,,,,,,,20,100,(read only),(read only),(read only),(read only),"
        "(read only)",
        ",,,,,,,Manual Posting,Manual Posting,,,,,",
        '"Doe, Jane",4101,S4101,jane@uni.example,,uni.instructure.com,GPU 101,18,,90,90,'
        '90,90,90',
        '"Smith, Bob",4102,S4102,bob@uni.example,,uni.instructure.com,GPU 101,15,,75,75,75,'
        '75,75',
        '"김, 민지",4103,S4103,minji@uni.example,,uni.instructure.com,GPU 101,20,,100,100,'
        '100,100,100',
        '"Lee, Quinn",4105,S4105,quinn@uni.example,,uni.instructure.com,GPU 101,,,0,0,0,0,0',
        '"Student, Test",4199,,,,uni.instructure.com,GPU 101,,,,,,,',
    ]
    path.write_text("\ufeff" + "\n".join([head, *rows]) + "\n", encoding="utf-8")
    return path
