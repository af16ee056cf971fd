"""Hand-in without grading: renamed notebooks recognised, submitted/ tidied, LMS zips collected,
bad input refused by name, failures said in words, a fresh gradebook given the assignment.

(Grading what was handed in: the sample class's Canvas, Moodle and Colab students in
tests/test_sample_class.py, and the exchange in tests/test_exchange.py.)
"""

from __future__ import annotations

import copy
import csv
import json
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

import sample_class as samples
from autograder.cli import harness
from autograder.handin import collect, failure, ready, report, tidy
from autograder.handin.recognise import Release, by_name, stem
from autograder.runner.names import ASSIGNMENT

ROOT = Path(__file__).resolve().parents[1]
RELEASED = sorted(p.stem for p in (ROOT / "release" / ASSIGNMENT).glob("*.ipynb"))
NB1 = "01_arithmetic_intensity"


def release_nb(name: str) -> dict:
    return json.loads((ROOT / "release" / ASSIGNMENT / f"{name}.ipynb").read_text())


@pytest.fixture
def course(tmp_path: Path) -> Path:
    """A course directory with the release (no gradebook), inside a folder of its own so a
    test can see that nothing was written beside it."""
    root = tmp_path / "course"
    root.mkdir()
    shutil.copytree(ROOT / "release", root / "release")
    shutil.copy(ROOT / "nbgrader_config.py", root)
    return root


@pytest.mark.parametrize("name", [
    "Copy of 01_arithmetic_intensity.ipynb", "01_arithmetic_intensity (1).ipynb",
    "01_arithmetic_intensity.ipynb.txt", "01_ARITHMETIC_INTENSITY.IPYNB",
    "01_arithmetic_intensity - Copy.ipynb", "01_arithmetic_intensity-1.ipynb",
    "Copy of Copy of 01_arithmetic_intensity (2).ipynb", "01_arithmetic_intensity copy.ipynb",
    "01_arithmetic_intensity.ipynb.json",
])
def test_names_that_colab_browsers_and_lmss_make_are_recognised(name: str) -> None:
    assert by_name(name, RELEASED) == NB1


@pytest.mark.parametrize("name", [
    "01_arithmetic_intensity_v2.ipynb", "arithmetic_intensity.ipynb", "notes.txt",
    "01_arithmetic_intensity.py", "Copy of .ipynb",
])
def test_other_names_are_not(name: str) -> None:
    assert by_name(name, RELEASED) is None


def test_stem_keeps_a_name_made_only_of_marks() -> None:
    assert stem("(1).ipynb") == "(1)"


def test_a_renamed_notebook_is_recognised_by_its_cells() -> None:
    release = Release.load(ROOT / "release" / ASSIGNMENT)
    for name in RELEASED:
        assert release.by_content(release_nb(name)) == name, name
    # Colab keeps the ids in metadata.id; an editor that drops everything leaves the text
    nb = release_nb("03_tiled_gemm")
    for cell in nb["cells"]:
        cell["metadata"] = {"id": cell.pop("id", "")}
    assert release.by_content(nb) == "03_tiled_gemm"
    nb = release_nb("05_roofline")
    samples.strip_metadata(nb)
    assert release.by_content(nb) == "05_roofline"
    # and a notebook of something else is nobody's
    other = {"cells": [{"cell_type": "code", "metadata": {}, "source": "print('my own work')"}]}
    assert release.by_content(other) is None
    # a notebook holding as much of two notebooks is not guessed
    one = {name: sorted(k.split(":", 1)[1] for k in release.fingerprints[name]
                        if k.startswith("grade_id:"))[0]
           for name in ("02_naive_gemm", "06_tile_sweep")}
    mixed = {"cells": [{"cell_type": "code", "source": "", "metadata": {
        "nbgrader": {"grade_id": gid}}} for gid in one.values()]}
    assert release.by_content(mixed) is None
    mixed["cells"].pop()
    assert release.by_content(mixed) == "02_naive_gemm"


def _write(path: Path, nb: dict, mtime: float | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb))
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def test_tidy_renames_keeps_the_newer_and_sets_aside_by_name(course: Path) -> None:
    folder = course / "submitted" / "kid" / ASSIGNMENT
    now = time.time()
    _write(folder / f"{NB1}.ipynb", release_nb(NB1), now - 3600)          # older, exact name
    _write(folder / f"Copy of {NB1}.ipynb", release_nb(NB1), now)         # newer copy
    renamed = copy.deepcopy(release_nb("02_naive_gemm"))
    _write(folder / "my gemm.ipynb", renamed)                              # by its cells
    _write(folder / "05_roofline.ipynb.txt", release_nb("05_roofline"))
    _write(folder / "scratch.ipynb", {"cells": [], "metadata": {}, "nbformat": 4})
    (folder / "broken.ipynb").write_text('{"cells": [')
    (folder / "plot.png").write_bytes(b"\x89PNG")
    (folder / "notes.txt").write_text("my notes")
    (folder / "submission_secret.txt").write_text("s3cret")  # nbgrader's: not even listed
    checkpoint = folder / ".ipynb_checkpoints" / f"{NB1}-checkpoint.ipynb"  # Jupyter's, newest
    _write(checkpoint, release_nb(NB1), now + 60)
    _write(course / "submitted" / "kid" / "06_tile_sweep.ipynb", release_nb("06_tile_sweep"))
    entries = tidy.tidy(course)
    got = {(e.handed_in, e.outcome) for e in entries}
    assert got == {
        (f"Copy of {NB1}.ipynb", "renamed"), (f"{NB1}.ipynb", "superseded"),
        ("my gemm.ipynb", "renamed"), ("05_roofline.ipynb.txt", "renamed"),
        ("06_tile_sweep.ipynb", "kept"), ("scratch.ipynb", "unmatched"),
        ("broken.ipynb", "rejected"), ("plot.png", "ignored"), ("notes.txt", "ignored")}
    assert sorted(p.name for p in folder.iterdir()) == [
        ".ipynb_checkpoints", f"{NB1}.ipynb", "02_naive_gemm.ipynb", "05_roofline.ipynb",
        "06_tile_sweep.ipynb", "notes.txt", "plot.png", "submission_secret.txt"]
    aside = course / report.SET_ASIDE / "kid" / ASSIGNMENT
    assert sorted(p.name for p in aside.iterdir()) == [f"{NB1}.ipynb", "broken.ipynb",
                                                      "scratch.ipynb"]
    notes = report.notes_for(course, "kid")
    assert any("'scratch.ipynb' not graded: matches no notebook" in n for n in notes)
    assert any("not valid JSON" in n for n in notes)
    assert any(f"'Copy of {NB1}.ipynb' is newer" in n for n in notes)
    with open(course / report.CSV_NAME) as fh:
        assert len(list(csv.DictReader(fh))) == len(entries)
    assert tidy.tidy(course) and all(e.outcome in ("kept", "ignored")
                                     for e in tidy.tidy(course))  # idempotent


def test_a_500_mb_file_is_refused_unread(course: Path) -> None:
    folder = course / "submitted" / "big" / ASSIGNMENT
    folder.mkdir(parents=True)
    with open(folder / f"{NB1}.ipynb", "wb") as fh:  # sparse: costs no disk and no time
        fh.truncate(500 * 2**20)
    _write(course / "submitted" / "small" / ASSIGNMENT / f"{NB1}.ipynb", release_nb(NB1))
    started = time.monotonic()
    entries = tidy.tidy(course)
    assert time.monotonic() - started < 10
    (big,) = [e for e in entries if e.student == "big"]
    assert big.outcome == "rejected" and "too large (500 MB" in big.detail
    assert [e.outcome for e in entries if e.student == "small"] == ["kept"]


def _zip(path: Path, members: dict[str, bytes | dict], times: dict[str, tuple] | None = None
         ) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(times or {}).get(name, (2026, 11, 20, 9, 0,
                                                                             0)))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data if isinstance(data, bytes) else json.dumps(data))
    return path


def _collect(course: Path, archive: Path, **kw) -> int:
    return collect.collect_zip(course, archive, harness.nbgrader, **kw)


def _files(course: Path) -> dict[str, list[str]]:
    sub = course / "submitted"
    return {s.name: sorted(p.name for p in (s / ASSIGNMENT).iterdir() if p.suffix == ".ipynb")
            for s in sorted(sub.iterdir())}


def test_a_canvas_zip_with_late_and_two_uploads_and_a_mapping(course: Path) -> None:
    answered = release_nb(NB1)
    answered["metadata"]["marker"] = "newer"
    archive = _zip(course.parent / "canvas.zip", {
        f"doejane_4101_700001_{NB1}.ipynb": release_nb(NB1),
        f"doejane_4101_700002_Copy of {NB1}.ipynb": answered,
        f"__MACOSX/._doejane_4101_700003_{NB1}.ipynb": b"\x00\x05\x16\x07 resource fork",
        "smithbob_LATE_4102_700003_05_roofline (1).ipynb": release_nb("05_roofline"),
        "smithbob_LATE_4102_700004_gemm.ipynb": release_nb("02_naive_gemm"),
        "smithbob_LATE_4102_700005_photo.png": b"\x89PNG",
    }, {f"doejane_4101_700002_Copy of {NB1}.ipynb": (2026, 11, 21, 9, 0, 0)})
    ids = course.parent / "ids.csv"
    ids.write_text("lms_id,student_id\n4101,jane\n")
    assert _collect(course, archive, layout="canvas", mapping=ids) == 0
    assert _files(course) == {"4102": ["02_naive_gemm.ipynb", "05_roofline.ipynb"],
                              "jane": [f"{NB1}.ipynb"]}
    got = json.loads((course / "submitted" / "jane" / ASSIGNMENT / f"{NB1}.ipynb").read_text())
    assert got["metadata"]["marker"] == "newer"  # the newer upload counts
    notes = report.notes_for(course, "4102")
    assert any("marked late by the LMS" in n for n in notes)
    assert any("LMS id 4102 is not in the mapping file" in n for n in notes)
    assert any("'smithbob_LATE_4102_700005_photo.png' ignored" in n for n in notes)
    assert any("is newer" in n for n in report.notes_for(course, "jane"))
    assert not any("__MACOSX" in r.handed_in for r in report.read(course))  # a Mac's zip noise


def test_a_moodle_zip_with_nested_folders(course: Path) -> None:
    archive = _zip(course.parent / "moodle.zip", {
        f"Jane Doe_5201_assignsubmission_file_/week4/{NB1}.ipynb": release_nb(NB1),
        "Bob Smith_5202_assignsubmission_file_/my roofline.ipynb": release_nb("05_roofline"),
        "Bob Smith_5202_assignsubmission_onlinetext_/onlinetext.html": b"<p>hi</p>",
    })
    assert _collect(course, archive, layout="moodle") == 0
    assert _files(course) == {"5201": [f"{NB1}.ipynb"], "5202": ["05_roofline.ipynb"]}
    assert any("recognised by its cells" in n for n in report.notes_for(course, "5202"))


def test_another_lms_through_a_regex(course: Path) -> None:
    """The regex docs/grading.md gives for Blackboard's file names."""
    archive = _zip(course.parent / "bb.zip", {
        f"week4_jdoe_attempt_2026-11-20-09-00-00_{NB1}.ipynb": release_nb(NB1)})
    regex = r"(?P<assignment>[^/_]+)_(?P<student_id>[^/_]+)_attempt_(?P<timestamp>[0-9-]+)_" \
            r"(?P<file_id>[^/]+)$"
    assert _collect(course, archive, regex=regex) == 0
    assert _files(course) == {"jdoe": [f"{NB1}.ipynb"]}


def test_bad_zips_are_refused_with_a_clear_error(course: Path) -> None:
    not_zip = course.parent / "download.zip"
    not_zip.write_text("<html>Session expired</html>")
    with pytest.raises(SystemExit, match="is not a zip archive"):
        _collect(course, not_zip)
    empty = _zip(course.parent / "empty.zip", {})
    with pytest.raises(SystemExit, match="empty zip archive"):
        _collect(course, empty)
    with pytest.raises(SystemExit, match="no such file"):
        _collect(course, course.parent / "missing.zip")
    assert not (course / "submitted").exists()


def test_unsafe_members_are_refused_and_everyone_else_collected(
        course: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSE_HANDIN_MAX_MB", "1")  # the size check, without a 500 MB file
    before = sorted(p.name for p in course.parent.iterdir())
    archive = _zip(course.parent / "canvas.zip", {
        f"../../evil_1_2_{NB1}.ipynb": release_nb(NB1),
        f"/tmp/abs_3_4_{NB1}.ipynb": release_nb(NB1),
        f"bigkid_4103_1_{NB1}.ipynb": b" " * (2 * 2**20),
        "badjson_4104_1_05_roofline.ipynb": b'{"cells": [',
        f"goodkid_4105_1_{NB1}.ipynb": release_nb(NB1),
    })
    before.append("canvas.zip")
    assert _collect(course, archive, layout="canvas") == 0
    assert sorted(p.name for p in course.parent.iterdir()) == sorted(before)
    assert not Path("/tmp/abs_3_4_01_arithmetic_intensity.ipynb").exists()
    assert _files(course) == {"4103": [], "4104": [], "4105": [f"{NB1}.ipynb"]}
    rows = {r.handed_in: r for r in report.read(course)}
    assert "unsafe path" in rows[f"../../evil_1_2_{NB1}.ipynb"].detail
    assert "unsafe path" in rows[f"/tmp/abs_3_4_{NB1}.ipynb"].detail
    assert "too large" in rows[f"bigkid_4103_1_{NB1}.ipynb"].detail
    assert "not valid JSON" in rows["canvas/badjson_4104_1_05_roofline.ipynb"].detail
    # a student whose only file was refused still gets a folder, so a row in the grade table,
    # and the note says what happened to the file
    assert any("too large" in n for n in report.notes_for(course, "4103"))
    assert any("not valid JSON" in n for n in report.notes_for(course, "4104"))


def test_grading_failures_are_said_in_words() -> None:
    log = """[AutogradeApp | ERROR] There was an error processing assignment: /c/submitted/x
[AutogradeApp | ERROR] Traceback (most recent call last):
      File "nbgrader/converters/base.py", line 386, in convert_notebooks
    KeyError: 'ai_matmul_square'
[AutogradeApp | ERROR] Please see the the above traceback for details"""
    assert failure.explain(log) == "KeyError: 'ai_matmul_square'"
    missing = ("raise MissingEntry(\"No such assignment: {}\".format(name))\n"
               "nbgrader.api.MissingEntry: No such assignment: week4\n"
               "[AutogradeApp | ERROR] Please see the the above traceback for details")
    assert failure.explain(missing).startswith("the gradebook has no assignment week4")
    assert "Please see" not in failure.explain("[AutogradeApp | ERROR] Please see the above")


def test_make_grade_in_a_fresh_course_directory(course: Path) -> None:
    """No gradebook yet: `make grade` adds the assignment (leaving the release as it is), and a
    student whose only file matches no notebook is not sent to nbgrader but keeps a row of
    zeros whose notes name the file."""
    shutil.copytree(ROOT / "source", course / "source")
    before = {p.name: p.read_bytes() for p in (course / "release" / ASSIGNMENT).iterdir()}
    _write(course / "submitted" / "kid" / ASSIGNMENT / "scratch.ipynb",
           {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    assert not ready.has_assignment(course)
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade", "--root",
                           str(course), "--json", str(course / "table.json")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "the gradebook has no assignment week4 yet: adding it" in proc.stdout
    assert ready.has_assignment(course)
    after = {p.name: p.read_bytes() for p in (course / "release" / ASSIGNMENT).iterdir()}
    assert after == before  # the release students were given is not rewritten
    assert not (course / ready.SCRATCH_RELEASE).exists()
    row = json.loads((course / "table.json").read_text())["kid"]
    assert "no submission" in row["notes"]
    assert any("'scratch.ipynb' not graded: matches no notebook" in n for n in row["notes"])
    assert sorted(row["missing"]) == sorted(RELEASED)
    assert "kid" in (course / "grades.csv").read_text()


def test_without_source_grading_says_what_to_run_first(course: Path) -> None:
    with pytest.raises(SystemExit, match=r"run `make release` in the course's folder first"):
        ready.ensure_assignment(course, harness.nbgrader)
