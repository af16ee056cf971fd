"""The whole instructor pipeline on the sample class: release, autograde, feedback, table.

Runs `python -m sample_class` on a copy of the course directory, with the
repository itself hidden from student code too, and checks every sample student's score,
the feedback and the table's notes.

Which class: the core class (``samples.CORE_CLASS``: every kind of student, all the correct
answers in other styles, deleted tests in every notebook; what CI grades) unless
``COURSE_SAMPLE_CLASS=full`` (``make test-class``: all sample students), or only the students
``COURSE_SAMPLE_STUDENTS=ada_correct,eli_deletes_tests`` names (a change to a few exercises,
checked on the students who touch them). A test about a student outside the graded class is
skipped, and says so.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

import sample_class as samples
from course.runtime import setup_cell

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow
CLASS = os.environ.get("COURSE_SAMPLE_CLASS", "core")
#: these students only (of the full class), when named
ONLY = [s for s in os.environ.get("COURSE_SAMPLE_STUDENTS", "").split(",") if s]
MEMBERS = sorted(ONLY) if ONLY else samples.class_members(CLASS)


def _need(*students: str) -> None:
    """Skip, with the reason printed, when the graded class leaves one of ``students`` out."""
    missing = [s for s in students if s not in MEMBERS]
    if missing:
        graded = "the students COURSE_SAMPLE_STUDENTS names" if ONLY else \
            f"the {CLASS} sample class"
        pytest.skip(f"{', '.join(missing)} not in {graded}: "
                    "`make test-class` grades the full class")


@pytest.fixture(scope="module")
def graded(sample_class_graded: tuple[Path, dict, str, dict]) -> tuple[Path, dict, str]:
    """The whole sample class, graded once for the run (tests/sample_class_grading.py, started
    in the background when the run begins), with secrets planted outside the course (files
    in the home folder, /var/tmp, /srv, /opt; the instructor's environment) and a listener on
    the grading host's loopback, for the hostile students to find."""
    course, table, stdout, attacks = sample_class_graded
    print(stdout[-6000:])
    ATTACKS.update(attacks)
    return course, table, stdout


#: what the fixture planted for the hostile students, and what its listener heard.
ATTACKS: dict = {}


def test_every_sample_student_scores_as_expected(graded: tuple[Path, dict, str]) -> None:
    _, table, _ = graded
    from course.runtime import backend

    assert sorted(table) == MEMBERS, "the grade table is not the graded class"
    problems = samples.compare(table, gpu=backend.detect().kind == "gpu", only_present=True)
    assert not problems, "\n".join(problems)


def test_the_core_class_has_every_kind_of_student() -> None:
    """Each kind the core class names is what its students' specs do (what CI and `make demo`
    grade must still cover every grading path), and it is the smaller class."""
    specs = samples.sample_students()
    kind = {k: [specs[sid] for sid in ids]  # KeyError: no such student
            for k, ids in samples.CORE_CLASS.items()}
    (ada,) = kind["a full correct submission"]
    assert ada.NOTEBOOKS == "all" and ada.BASE == "solutions"
    assert "03c_tiled_gemm_cuda" in kind["a wrong CUDA C kernel (the CUDA C track)"][0].NOTEBOOKS
    assert getattr(kind["a wrong answer whose test cell was deleted"][0], "DELETE", None)
    for spec in kind["deleted and edited test cells in every notebook with tests"]:
        assert spec.DELETE and spec.EDIT_TESTS and spec.BASE == "solutions"
    assert getattr(kind["lost nbgrader metadata"][0], "STRIP_METADATA", None)
    assert getattr(kind["checks tampered with in the student's kernel"][0], "TAMPERS", False)
    assert set(HOSTILE) <= set(samples.class_members("core"))
    assert sum(getattr(s, "TAMPERS", False) for ks in kind.values() for s in ks) == 1
    core = samples.class_members("core")
    assert len(core) == len(set(core)) < len(samples.class_members("full"))
    # make demo: one student of every kind, all of them in the core class
    demo = samples.class_members("demo")
    assert len(demo) == len(samples.CORE_CLASS) and set(demo) < set(core)
    assert all(set(ids) & set(demo) for ids in samples.CORE_CLASS.values())


def test_the_core_class_grades_20_correct_answers_in_other_styles() -> None:
    """Issue 9's class: at least 20 correct-but-different submissions across the exercises,
    each expected to score exactly what the instructor's solution (ada) scores."""
    specs = samples.sample_students()
    ada = specs["ada_correct"]
    styles = [specs[sid] for sid in samples.CORE_CLASS["correct answers in other styles"]]
    submissions = [(s.__name__, nb) for s in styles for nb in s.NOTEBOOKS]
    assert len(submissions) >= 20, submissions
    assert {nb for _, nb in submissions} >= {
        "01_arithmetic_intensity", "02_naive_gemm", "03_tiled_gemm", "05_roofline",
        "06_tile_sweep", "07_bonus_register_tiling"}
    for spec in styles:
        assert spec.BASE == "solutions" and spec.ANSWERS, spec.__name__
        assert set(spec.ANSWERS) == set(spec.NOTEBOOKS), spec.__name__  # a style everywhere
        for nb in spec.NOTEBOOKS:
            assert spec.EXPECTED[nb] == ada.EXPECTED[nb], (spec.__name__, nb)
            gpu = getattr(spec, "EXPECTED_GPU", {}).get(nb, spec.EXPECTED[nb])
            assert gpu == ada.EXPECTED_GPU.get(nb, ada.EXPECTED[nb]), (spec.__name__, nb)


def test_the_korean_students_hand_in_their_english_counterparts_answers() -> None:
    """Each Korean sample student is an English one on the Korean release: the same answers,
    deletions and additions, so the same expected points; every kind the issue names exists."""
    specs = samples.sample_students()
    korean = {sid: s for sid, s in specs.items() if samples.language(s) == "ko"}
    assert {s.SAME_AS for s in korean.values()} >= {
        "ada_correct", "kim_fake_kernel", "eli_deletes_tests", "fay_hangs"}
    for sid, spec in korean.items():
        en = specs[spec.SAME_AS]
        assert samples.language(en) == "en", sid
        for field in ("BASE", "ANSWERS", "DELETE", "APPEND", "EDIT_TESTS"):
            assert getattr(spec, field, None) == getattr(en, field, None), (sid, field)
        if spec.NOTEBOOKS == "all":
            assert en.NOTEBOOKS == "all" and spec.EXPECTED == en.EXPECTED, sid
        else:
            assert {nb: p for nb, p in en.EXPECTED.items() if nb in spec.NOTEBOOKS} \
                == spec.EXPECTED, sid
    core = set(samples.class_members("core"))
    assert {sid for sid in korean if sid in core} == {"jiwoo_ko_correct", "minji_ko_deletes_tests"}


def test_a_mixed_class_grades_korean_like_english_with_korean_feedback(graded) -> None:
    """English and Korean submissions in one gradebook: each Korean student scores exactly
    what the same answers score in English, loses points for the same reasons, gets the same
    deleted test back — from the Korean release — and reads Korean feedback."""
    _need("minji_ko_deletes_tests", "eli_deletes_tests")
    course, table, _ = graded
    specs = samples.sample_students()
    pairs = [(sid, specs[sid].SAME_AS) for sid in table
             if samples.language(specs[sid]) == "ko" and specs[sid].SAME_AS in table]
    assert ("minji_ko_deletes_tests", "eli_deletes_tests") in pairs
    for ko, en in pairs:
        for nb, (score, maximum) in table[ko]["scores"].items():
            if nb not in table[ko]["missing"]:
                assert (score, maximum) == tuple(table[en]["scores"][nb]), (ko, en, nb)
        assert {k for k in table[ko]["lost"] if k.split(":")[0] in table[ko]["scores"]
                and k.split(":")[0] not in table[ko]["missing"]} <= set(table[en]["lost"])
    minji, eli = table["minji_ko_deletes_tests"], table["eli_deletes_tests"]
    hangul = re.compile(r"[\uac00-\ud7a3]")
    # the same cells lost for the same mistake, each told in the student's own language
    assert set(minji["lost"]) == set(eli["lost"])
    numbers = re.compile(r"\d+(?:\.\d+)?")
    for cell, reason in eli["lost"].items():
        assert hangul.search(minji["lost"][cell]) and not hangul.search(reason), cell
        assert numbers.findall(minji["lost"][cell]) == numbers.findall(reason), cell
    added = "01_arithmetic_intensity: test cell(s) added back: ai_gemm_tiled_model"
    assert added in eli["notes"]
    assert any("ai_gemm_tiled_model" in n and hangul.search(n) for n in minji["notes"]), (
        minji["notes"])
    for sid in [ko for ko, _ in pairs]:
        for html in (course / "feedback" / sid / "week4").glob("*.html"):
            text = html.read_text()
            assert len(hangul.findall(text)) > 300, f"{sid} {html.name}: feedback not Korean"
            assert "Week 4 · Notebook" not in text and "What you learned" not in text, (
                f"{sid} {html.name}: English read-only markdown came back in the feedback")
    eli_html = (course / "feedback" / "eli_deletes_tests" / "week4"
                / "01_arithmetic_intensity.html").read_text()
    # English throughout, but for the setup cell's code: its error for a missing package is
    # written in both languages, since no catalog exists before the package does
    bilingual = sorted(set(re.findall(r"[\uac00-\ud7a3]+", setup_cell.source())), key=len,
                       reverse=True)
    assert bilingual, "the setup cell's Korean error is gone: drop this exception"
    outside_setup = re.sub("|".join(map(re.escape, bilingual)), "", eli_html)
    assert "What you learned" in eli_html and not hangul.search(outside_setup)
    graded_nb = json.loads((course / "autograded" / "minji_ko_deletes_tests" / "week4"
                            / "01_arithmetic_intensity.ipynb").read_text())
    assert graded_nb["metadata"]["course"]["language"] == "ko"
    ids = [c["metadata"].get("nbgrader", {}).get("grade_id") for c in graded_nb["cells"]]
    assert "ai_gemm_tiled_model" in ids


def test_the_notebooks_verdicts_are_the_graders(graded) -> None:
    """One verdict: for every sample student who does not tamper with the checks in their own
    kernel, every test cell's verdict in the notebook equals the grader's; the tamperer's
    differences are flagged in the table."""
    _, table, stdout = graded
    specs = samples.sample_students()
    for sid, row in table.items():
        if getattr(specs[sid], "TAMPERS", False):
            assert row["differs"], f"{sid} tampers with the checks but no difference was seen"
        else:
            assert not row["differs"], f"{sid}: {row['differs']}"
    if any(getattr(specs[sid], "TAMPERS", False) for sid in table):  # (not when ONLY excludes)
        assert "the notebook's own verdict differed" in stdout


def test_every_lost_point_has_its_reason_in_the_table(graded) -> None:
    _need("eli_deletes_tests")
    _, table, stdout = graded
    # Eli's rounding is wrong and the test she deleted came back: its failure says why.
    assert "01_arithmetic_intensity:ai_gemm_tiled_model" in table["eli_deletes_tests"]["lost"]
    assert "Why points were lost" in stdout
    for sid, row in table.items():
        for key, why in row["lost"].items():
            assert why.strip(), f"{sid} {key} lost points with no reason"


def test_restored_cells_are_said_in_the_table(graded) -> None:
    """A deleted or edited test cell in any notebook with tests, on either track, is put
    back (the scores are checked with everyone's) and the table says so."""
    deleters = ("pat_deletes_and_edits_tests", "cas_cuda_deletes_and_edits_tests")
    _need(*deleters)
    _, table, _ = graded
    specs = samples.sample_students()
    covered = set()
    for sid in deleters:
        notes = " ".join(table[sid]["notes"])
        for nb in specs[sid].DELETE:
            assert f"{nb}: test cell(s) added back" in notes, notes
        covered |= set(specs[sid].DELETE) & set(specs[sid].EDIT_TESTS)
    def is_test(cell: dict) -> bool:
        meta = cell["metadata"].get("nbgrader", {})
        return cell["cell_type"] == "code" and meta.get("grade") and not meta.get("solution")

    with_tests = {p.stem for p in (ROOT / "source" / "week4").glob("*.ipynb")
                  if any(is_test(c) for c in json.loads(p.read_text())["cells"])}
    assert with_tests <= covered, f"no deleted-and-edited tests in {with_tests - covered}"


def test_every_expected_note_is_in_the_table(graded) -> None:
    """What a student's spec says the notes must say (copies kept or dropped, an answer below
    its test, read-only cells put back: autograder/grading/normalise.py) is in that student's
    row."""
    _, table, _ = graded
    specs = samples.sample_students()
    if ONLY and not any(getattr(specs[sid], "EXPECTED_NOTES", None) for sid in MEMBERS):
        pytest.skip("none of the students named expects a note")
    checked = 0
    for sid, row in table.items():
        notes = " ".join(row["notes"])
        for nb, texts in getattr(specs[sid], "EXPECTED_NOTES", {}).items():
            for text in texts:
                assert f"{nb}: {text}" in notes, (sid, text, notes)
                checked += 1
    assert checked, "no graded student expects a note: this test would prove nothing"


def test_restored_metadata_is_said_in_the_table(graded) -> None:
    _need("tia_lost_metadata", "eli_deletes_tests")
    _, table, _ = graded
    tia = " ".join(table["tia_lost_metadata"]["notes"])
    assert "nbgrader metadata restored from the release" in tia, tia
    eli = " ".join(table["eli_deletes_tests"]["notes"])
    assert "01_arithmetic_intensity: test cell(s) added back" in eli, eli


def test_gpu_checks_are_reported_not_measured_without_a_gpu(graded) -> None:
    from course.runtime import backend

    if backend.detect().kind == "gpu":
        pytest.skip("this machine has a GPU: the speedup is measured")
    _need("ada_correct")
    _, table, stdout = graded
    assert any("tiled_gemm_speedup" in x for x in table["ada_correct"]["not_measured"])
    assert "not measured" in stdout


def test_a_dying_kernel_keeps_its_row_with_the_reason(graded) -> None:
    _need("gus_kernel_dies")
    _, table, _ = graded
    notes = " ".join(table["gus_kernel_dies"]["notes"])
    assert "kernel died" in notes


def test_feedback_never_shows_hidden_tests(graded) -> None:
    course, _, _ = graded
    hidden, visible = set(), set()
    region = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)
    for path in (course / "source" / "week4").glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            text = "".join(cell["source"])
            for m in region.finditer(text):
                hidden |= {ln.strip() for ln in m.group(1).splitlines() if len(ln.strip()) > 20}
            visible |= {ln.strip() for ln in region.sub("", text).splitlines()}
    # A line the student also sees in a visible part (even inside a longer line) is no secret.
    hidden = {h for h in hidden if not any(h in v for v in visible)}
    assert hidden, "no hidden tests found: this test would prove nothing"
    pages = list((course / "feedback").rglob("*.html"))
    assert pages, "no feedback was generated"
    for page in pages:
        text = page.read_text()
        assert "BEGIN HIDDEN TESTS" not in text, page
        import html

        plain = html.unescape(re.sub(r"<[^>]+>", "", text))
        leaked = [ln for ln in hidden if ln in plain]
        assert not leaked, f"{page.name} shows hidden-test lines: {leaked[:2]}"


def test_student_code_could_not_see_the_instructors_files(graded) -> None:
    _need("max_reads_instructor_files")
    course, _, _ = graded
    folder = course / "autograded" / "max_reads_instructor_files" / "week4"
    outputs = []
    for path in folder.glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            for o in cell.get("outputs", []):
                if o.get("output_type") == "stream":
                    text = o.get("text", "")
                    outputs.append("".join(text) if isinstance(text, list) else text)
    seen = "".join(outputs)
    assert "instructor files found: 0" in seen, seen[-500:]


def test_a_kernel_without_the_grid_stride_loop_is_told_how_to_fix_it(graded) -> None:
    course, _, _ = graded
    import html

    _need("nia_one_thread_per_element")
    page = course / "feedback" / "nia_one_thread_per_element" / "week4" / "05_roofline.html"
    plain = html.unescape(re.sub(r"<[^>]+>", "", page.read_text()))
    assert "each of the grid's 256 threads handled one element" in plain
    assert "for i in range(cuda.grid(1), c.size, cuda.gridsize(1))" in plain


def test_feedback_shows_the_notebooks_figures(graded) -> None:
    """Figures are cell attachments: the feedback HTML carries them, no link to resolve."""
    _need("ada_correct")
    course, _, _ = graded
    for name, alt in [("01_arithmetic_intensity", "A roofline with one compute peak"),
                      ("03_tiled_gemm", "One output tile")]:
        text = (course / "feedback" / "ada_correct" / "week4" / f"{name}.html").read_text()
        images = [dict(re.findall(r'(\w+)="([^"]*)"', tag))  # attributes in any order
                  for tag in re.findall(r"<img\b[^>]*>", text)]
        assert any(i.get("alt", "").startswith(alt)
                   and i.get("src", "").startswith("data:image/png;base64,") for i in images), name
        assert "attachment:" not in text and "assets/" not in text, name


# ----------------------------------------------------------------------- the hostile students

HOSTILE = ["oscar_reads_home_files", "pam_prints_env_secrets", "quinn_phones_home",
           "rita_fork_bomb", "sam_eats_memory"]


def test_hostile_students_leak_nothing_and_the_class_is_graded(graded) -> None:
    """No planted secret anywhere under autograded/ or feedback/, nothing reached the
    listener, and every student (the hostile ones included) has a row as expected."""
    _need(*HOSTILE)
    course, table, _ = graded
    planted, heard = ATTACKS["secret"], ATTACKS["heard"]
    assert planted.startswith("planted-"), "the fixture planted no secret"
    assert heard == [], f"the listener on the grading host received {heard}"
    written = [p for p in (course / "autograded").rglob("*") if p.is_file()]
    written += [p for p in (course / "feedback").rglob("*") if p.is_file()]
    assert any(p.suffix == ".html" for p in written) and len(written) > 10
    leaks = [p for p in written if planted in p.read_text(errors="replace")]
    assert not leaks, f"the planted secret is in {leaks}"
    # The scan can fail: a file holding the secret is found the same way.
    probe = course / "feedback" / "probe.txt"
    probe.write_text(f"x{planted}x")
    assert planted in probe.read_text(errors="replace")
    probe.unlink()
    assert set(HOSTILE) <= set(table)


def test_hostile_rows_say_why(graded) -> None:
    from autograder.sandbox import limits

    _need(*HOSTILE)
    course, table, _ = graded
    parents, _ = limits.find_parents()

    def stream(student: str) -> str:
        path = course / "autograded" / student / "week4" / "01_arithmetic_intensity.ipynb"
        cells = json.loads(path.read_text())["cells"]
        return "".join("".join(o.get("text", "")) + o.get("evalue", "")
                       for c in cells for o in c.get("outputs", []))

    assert "secret files read: 0" in stream("oscar_reads_home_files")
    assert "Connection refused" in stream("quinn_phones_home") or \
        "unreachable" in stream("quinn_phones_home")
    assert "100 GB at once: MemoryError" in stream("sam_eats_memory")
    if "memory" in parents:
        assert any("of memory" in n for n in table["sam_eats_memory"]["notes"]), \
            table["sam_eats_memory"]["notes"]
    if "pids" in parents:
        assert any("processes" in n for n in table["rita_fork_bomb"]["notes"]), \
            table["rita_fork_bomb"]["notes"]
    else:
        assert "fork refused" in stream("rita_fork_bomb")


def test_every_way_of_handing_in_reaches_the_grader(graded) -> None:
    """Issue 19: a Canvas zip (late, two uploads: the newer graded), a Moodle zip (a renamed
    notebook in a folder, found by its cells) and Colab's names (``X (1).IPYNB``, and a scratch
    notebook set aside by name) are graded — their scores are checked with everyone's — and
    the table and collection.csv say what was done with every file."""
    _need("uma_canvas_zip", "vic_moodle_zip", "wes_colab_names")
    course, table, stdout = graded
    uma = "; ".join(table["uma_canvas_zip"]["notes"])
    assert "'uma_LATE_4101_708202_01_arithmetic_intensity.ipynb' not graded" in uma
    assert "is newer and maps to the same notebook" in uma and "marked late by the LMS" in uma
    vic = "; ".join(table["vic_moodle_zip"]["notes"])
    assert "'intensity_final.ipynb' graded as 01_arithmetic_intensity (recognised by its cells)" \
        in vic
    wes = "; ".join(table["wes_colab_names"]["notes"])
    assert "'01_Arithmetic_Intensity (1).IPYNB' graded as 01_arithmetic_intensity" in wes
    assert "'scratch.ipynb' not graded: matches no notebook" in wes
    assert (course / "set_aside" / "wes_colab_names" / "week4" / "scratch.ipynb").exists()
    assert "collected canvas.zip" in stdout and "collected moodle.zip" in stdout
    rows = (course / "collection.csv").read_text()
    for outcome in ("renamed", "superseded", "unmatched"):
        assert f",{outcome}," in rows


def test_the_lms_students_go_back_to_canvas_and_moodle(graded, monkeypatch, capsys) -> None:
    """Issue 30: the class collected from the sample Canvas and Moodle zips goes all the way
    back — Canvas's import file (uma by the Canvas id of her zip's file names, her total from
    the table), the Canvas feedback zip and the fake-Canvas upload, Moodle's worksheet and
    feedback zip (vic as ``Participant 5202``) — with every student of the class accounted
    for by name in each summary."""
    import csv
    import zipfile

    from test_canvas_upload import API, ASSIGNMENT_ID, COURSE, TOKEN, FakeCanvas

    from autograder.cli import harness
    from autograder.results.table import Row, total

    _need("uma_canvas_zip", "vic_moodle_zip")
    course, table, _ = graded
    notebooks = sorted({nb for r in table.values() for nb in r["scores"]})

    def expected(student: str) -> str:
        row = Row(student, scores={k: tuple(v) for k, v in table[student]["scores"].items()},
                  off_track=table[student]["off_track"])
        return f"{total(row, notebooks)[0]:.2f}".rstrip("0").rstrip(".")

    def accounted(out: str) -> None:
        tagged = [ln.split()[1].rstrip(":") for ln in out.splitlines()
                  if ln.split()[:1] and ln.split()[0] in ("IN", "WAITING", "FAILED", "ABSENT",
                                                          "UNGRADED", "MISSING")]
        assert sorted(set(tagged)) == MEMBERS, "a student the summary does not name"

    capsys.readouterr()
    assert harness.main(["export", "--root", str(course), "--lms", "canvas"]) == 0
    out = capsys.readouterr().out
    accounted(out)
    rows = list(csv.reader((course / "handback" / "canvas-import.csv").open()))
    assert rows[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert {r[1]: r[5] for r in rows[2:]} == {"4101": expected("uma_canvas_zip")}
    with zipfile.ZipFile(course / "handback" / "canvas-feedback.zip") as zf:
        assert zf.namelist() == ["uma_4101_708203_feedback-01-arithmetic-intensity.html"]

    assert harness.main(["export", "--root", str(course), "--lms", "moodle"]) == 0
    out = capsys.readouterr().out
    accounted(out)
    sheet = list(csv.DictReader((course / "handback" / "moodle-worksheet.csv").open()))
    assert [(r["Identifier"], r["Grade"]) for r in sheet] == [
        ("Participant 5202", expected("vic_moodle_zip"))]
    with zipfile.ZipFile(course / "handback" / "moodle-feedback.zip") as zf:
        assert zf.namelist() == ["Vic Sample_5202_assignsubmission_file_/"
                                 "01_arithmetic_intensity-feedback.html"]

    fake = FakeCanvas()  # knows Canvas users 4101 (uma) and 4103
    try:
        for name, value in (("CANVAS_URL", f"http://127.0.0.1:{fake.port}"),
                            ("CANVAS_COURSE", COURSE), ("CANVAS_ASSIGNMENT", ASSIGNMENT_ID),
                            ("CANVAS_TOKEN", TOKEN), ("NO_PROXY", "127.0.0.1")):
            monkeypatch.setenv(name, value)
        for name in ("HTTP_PROXY", "http_proxy", "CANVAS_TOKEN_FILE"):
            monkeypatch.delenv(name, raising=False)
        assert harness.main(["return", "--root", str(course), "--lms", "canvas"]) == 0
    finally:
        fake.close()
    out = capsys.readouterr().out
    accounted(out)
    (put,) = [s for s in fake.seen if s.method == "PUT"]
    assert put.path == f"{API}4101"
    assert dict(put.form)["submission[posted_grade]"] == expected("uma_canvas_zip")
    assert TOKEN not in out


def test_one_total_everywhere_for_every_sample_student(graded, tmp_path, capsys) -> None:
    """Issue 38: every place that shows a student's total shows the grade table's — the table
    as printed, the progress line, ``grades.csv``, the formgrader's Manage Students and
    Submissions (nbgrader's API as the course's server extension serves it) and the Canvas
    and Moodle exports (every student given an id by a mapping file, waiting and failed ones
    included) — for every sample student graded."""
    import csv

    from nbgrader.apps.api import NbGraderAPI
    from nbgrader.coursedir import CourseDirectory

    from autograder.cli import harness
    from autograder.results import formgrader_totals

    course, table, printed = graded
    expected = {s: tuple(r["total"]) for s, r in table.items()}
    assert sorted(expected) == MEMBERS

    def number(value: float) -> str:
        return f"{value:.2f}".rstrip("0").rstrip(".")

    shown = {}
    printed_lines = printed.splitlines()
    for i, ln in enumerate(printed_lines):  # a long id stands alone, its scores on the next line
        words = ln.split()
        if not words or words[0] not in expected or "graded" in ln:
            continue
        if "/" in words[-1]:
            shown[words[0]] = words[-1]
        elif len(words) == 1 and i + 1 < len(printed_lines) and \
                printed_lines[i + 1].startswith(" ") and "/" in printed_lines[i + 1]:
            shown[words[0]] = printed_lines[i + 1].split()[-1]
    progress = {ln.split()[0]: ln.split()[4] for ln in printed.splitlines()
                if ln.split()[:1] and ln.split()[0] in expected and " graded  " in ln}
    with open(course / "grades.csv") as fh:
        exported = {r["student_id"]: (float(r["score"]), float(r["max_score"]))
                    for r in csv.DictReader(fh)}
    formgrader_totals.install()
    api = NbGraderAPI(CourseDirectory(root=str(course)))
    students = {s["id"]: (s["score"], s["max_score"]) for s in api.get_students()}
    submissions = {s["student"]: (s["score"], s["max_score"])
                   for s in api.get_submissions("week4")}
    # every student an id in both LMSs (the ones collected from a zip keep that LMS's own)
    mapping = tmp_path / "ids.csv"
    ids = {s: str(9000 + i) for i, s in enumerate(sorted(expected))}
    mapping.write_text("lms_id,student_id\n" + "".join(f"{v},{k}\n" for k, v in ids.items()))
    common = ["--root", str(course), "--mapping", str(mapping), "--include-ungraded",
              "--include-failed"]
    assert harness.main(["export", "--lms", "canvas", *common]) == 0
    assert harness.main(["export", "--lms", "moodle", *common]) == 0
    capsys.readouterr()
    by_id = {v: k for k, v in ids.items()}
    canvas_rows = list(csv.reader((course / "handback" / "canvas-import.csv").open()))[2:]
    canvas = {by_id.get(r[1], r[0]): r[5] for r in canvas_rows}
    moodle = {by_id.get(r["Identifier"].removeprefix("Participant "), r["Full name"]):
              r["Grade"] for r in csv.DictReader(
                  (course / "handback" / "moodle-worksheet.csv").open())}
    problems = []
    for student, (score, maximum) in expected.items():
        for where, got in (("table", shown.get(student)),
                           ("progress line", progress.get(student)),
                           ("grades.csv", exported.get(student)),
                           ("Manage Students", students.get(student)),
                           ("Submissions", submissions.get(student))):
            want = f"{score:g}/{maximum:g}" if isinstance(got, str) or got is None \
                else (score, maximum)
            if got != want:
                problems.append(f"{student}: {where} shows {got}, the table {want}")
        for where, got in (("Canvas", canvas.get(student)), ("Moodle", moodle.get(student))):
            if got is not None and got != number(score):
                problems.append(f"{student}: {where} has {got}, the table {number(score)}")
    from autograder.handback import roster

    zipped = set(roster._from_collection(course))  # their LMS's own ids: the test above
    handed = {s for s, r in table.items() if set(r["missing"]) < set(r["scores"])} - zipped
    assert handed <= set(canvas) | set(moodle), handed - set(canvas) - set(moodle)
    assert not problems, "\n".join(problems)


def test_the_class_report_counts_what_the_gradebook_and_the_grader_recorded(graded) -> None:
    """The demo ends with the class report (autograder/report/): its path is named, and every
    count in it agrees with the gradebook and the re-check's records of every sample student."""
    from nbgrader.api import Gradebook

    from autograder.runner.names import ASSIGNMENT

    course, table, stdout = graded
    last = stdout.strip().splitlines()[-1]
    assert last == f"class report: {course / 'report' / 'index.html'}", last
    report = json.loads((course / "report" / "class.json").read_text(encoding="utf-8"))
    html = (course / "report" / "index.html").read_text(encoding="utf-8")
    assert "<script" not in html and "default-src 'none'" in html
    tests = {(t["notebook"], t["grade_id"]): t for t in report["tests"]}
    expected: dict[tuple[str, str], dict[str, int]] = {}
    measured = 0
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        students = sorted(s.id for s in gb.students)
        assert report["students"] == len(students) == len(table)
        for nb in gb.find_assignment(ASSIGNMENT).notebooks:
            handed = [s for s in students
                      if (course / "submitted" / s / ASSIGNMENT / f"{nb.name}.ipynb").exists()]
            assert report["handed_in"][nb.name] == len(handed), nb.name
            for student in handed:
                path = course / "autograded" / student / ASSIGNMENT / f"{nb.name}.trusted.json"
                cells = json.loads(path.read_text())["cells"] if path.exists() else {}
                for gid, cell in cells.items():
                    count = expected.setdefault((nb.name, gid), {
                        "pass": 0, "fail": 0, "not_measured": 0})
                    count[cell["status"]] += 1
                    grade = gb.find_grade(gid, nb.name, ASSIGNMENT, student)
                    if cell["status"] == "pass" and grade.manual_score is None:
                        assert grade.score == grade.max_score, (student, gid)
                    if cell["status"] == "fail" and grade.manual_score is None:
                        assert grade.score < grade.max_score, (student, gid)
                    measured += "measured" in cell and nb.name not in table[student][
                        "off_track"]
    assert set(tests) == set(expected)
    for key, count in expected.items():
        got = tests[key]
        assert (got["passed"], got["failed"], got["not_measured"]) == (
            count["pass"], count["fail"], count["not_measured"]), key
        named = sum(len(m["students"]) for m in report["mistakes"]
                    if (m["notebook"], m["grade_id"]) == key)
        assert named == count["fail"], key  # every failure is one named mistake
    for student, row in table.items():  # the grade table's total, the same everywhere
        total = [sum(row["scores"][nb][i] for nb in row["scores"] if nb not in row["off_track"])
                 for i in (0, 1)]
        assert report["totals"][student] == pytest.approx(total), student
    for mistake in report["mistakes"]:
        assert not [s for s in students if s in mistake["example"]], mistake["example"]
    assert len(report["kernels"]) == measured  # none without a GPU: every one on a GPU
    if not measured:
        assert any(t["test"].endswith("_speedup") for t in report["not_measured"])


def test_the_slowest_honest_cell_leaves_the_cell_limit_a_margin(graded) -> None:
    """The class is graded with a short per-cell limit (tests/sample_class_grading.py,
    ``CELL_TIMEOUT``) so that fay's endless loop costs seconds, not minutes; a limit an honest
    cell came near would turn a busy day into a wrong timeout. Every cell of every notebook
    whose grading stopped nothing (no note of a timeout, a limit or a dead kernel), in the
    student's kernel and in the trusted re-check, took at most half the limit; the slowest of
    each are printed, with the limit."""
    import sample_class_grading

    from autograder.runner.names import ASSIGNMENT

    course, _, _ = graded
    limit = float(os.environ.get("COURSE_CELL_TIMEOUT", sample_class_grading.CELL_TIMEOUT))
    slowest = {"kernel": (0.0, ""), "re-check": (0.0, "")}
    timed = 0
    for path in sorted((course / "autograded").glob(f"*/{ASSIGNMENT}/*.trusted.json")):
        summary = json.loads(path.read_text())
        if summary["notes"] or summary["dead_kernel"]:
            continue  # a hang, a limit, a dead kernel (fay, sam, gus): cut off on purpose
        where = f"{path.parts[-3]} {path.name.removesuffix('.trusted.json')}"
        for name, seconds in summary.get("kernel_seconds", {}).items():
            timed += 1
            slowest["kernel"] = max(slowest["kernel"], (seconds, f"{where} {name}"))
        for name, cell in summary["cells"].items():
            if cell.get("seconds") is not None:
                slowest["re-check"] = max(slowest["re-check"],
                                          (cell["seconds"], f"{where} {name}"))
    assert timed > 100, f"only {timed} kernel cells had their seconds recorded"
    for side, (seconds, what) in slowest.items():
        print(f"slowest honest {side} cell: {seconds:.1f} s ({what}); limit {limit:g} s")
        assert seconds <= limit / 2, (
            f"{what} took {seconds:.1f} s in the {side}, more than half the test class's "
            f"{limit:g}-s cell limit: raise CELL_TIMEOUT in tests/sample_class_grading.py or "
            "find what made it slow")
