"""The class report (autograder/report/) on synthetic classes: the counts, the named mistakes
grouped by template and anonymised, the kernels measured drawn on the roofline from recorded
numbers, the leaderboard's pseudonyms, the page's policy and escaping, the Korean edition.
(The report of the graded sample class is checked against its gradebook in
tests/test_sample_class.py; the page in Chromium in tests/test_browser_report.py.)"""

from __future__ import annotations

import csv
import importlib.util
import re
from pathlib import Path

import pytest

from autograder.report import command, figures, leaderboard, mistakes
from autograder.report.records import ClassReport, build
from autograder.results.table import Row
from autograder.runner.names import ASSIGNMENT

NOTEBOOKS = ["01_arithmetic_intensity", "03_tiled_gemm", "03c_tiled_gemm_cuda"]
HOSTILE_ID = 'eve<script>alert("id")</script>'
HOSTILE_NAME = "Mallory<img src=x onerror=alert(3)>"
PAYLOAD = '<script>alert("msg")</script><img src="http://127.0.0.1:47620/x" onerror=alert(4)>'


def _cell(status: str, evalue: str = "", ename: str = "", seconds: float = 1.0,
          measured: dict | None = None) -> dict:
    cell = {"status": status, "ename": ename or ("AssertionError" if status == "fail" else ""),
            "evalue": evalue, "seconds": seconds}
    if measured:
        cell["measured"] = measured
    return cell


def _measured(tiled_ms: float, naive_ms: float, device: str = "NVIDIA H200") -> dict:
    flop = 2.0 * 2048 ** 3
    return {"size": 2048, "tile": 32, "ms": {"tiled": tiled_ms, "own naive": naive_ms},
            "gflops": {"tiled": flop / (tiled_ms * 1e6), "own naive": flop / (naive_ms * 1e6)},
            "speedup": naive_ms / tiled_ms, "device": device}


def synthetic_class(speedups: bool = True) -> tuple[list[Row], dict]:
    """Five students: three make one mistake at different places (one hostile), two measured
    on an H200, one on a T4, one whose notebook could not be graded."""
    rows, summaries = [], {}

    def student(sid: str, track: str, cells: dict[str, dict], score: float, gpu: str = "",
                failed: bool = False) -> None:
        row = Row(sid, track=track, language="en")
        row.scores = {"01_arithmetic_intensity": (score, 10.0), "03_tiled_gemm": (5.0, 10.0)}
        row.missing = ["03c_tiled_gemm_cuda"]
        if failed:
            row.failed = ["03_tiled_gemm"]
        rows.append(row)
        summaries[(sid, "01_arithmetic_intensity")] = {"cells": {
            "ai_answer": cells.pop("ai_answer")}}
        if not failed:
            summaries[(sid, "03_tiled_gemm")] = {"gpu": gpu, "cells": cells}

    wrong = "C[{i}, {j}] is {got}, expected {want}: did {who} sync after loading the tile?"
    student("ada_l", "Numba", {"ai_answer": _cell("pass"),
                             "tiled_gemm_correct": _cell("pass"),
                             "tiled_gemm_speedup": _cell("pass", measured=_measured(2.0, 12.0))
                             if speedups else _cell("not_measured", "no GPU")},
            10, "GPU 0 (NVIDIA H200)")
    student("ben_k", "Numba", {"ai_answer": _cell("fail", "intensity 0.25 is per element"),
                             "tiled_gemm_correct": _cell("fail", wrong.format(
                                 i=3, j=17, got=12.5, want=3.25, who="ben_k")),
                             "tiled_gemm_speedup": _cell("not_measured", "no GPU")}, 4)
    student(HOSTILE_ID, "Numba", {
        "ai_answer": _cell("fail", PAYLOAD),
        "tiled_gemm_correct": _cell("fail", wrong.format(i=0, j=5, got=1e3, want=-2,
                                                         who=HOSTILE_NAME)),
        "tiled_gemm_speedup": _cell("pass", measured=_measured(3.0, 9.0))
        if speedups else _cell("not_measured", "no GPU")}, 10, "GPU 1 (NVIDIA H200)")
    student("cy_p", "CUDA C", {"ai_answer": _cell("fail", "intensity 0.5 is per element"),
                             "tiled_gemm_correct": _cell("fail", wrong.format(
                                 i=1, j=1, got=0, want=7, who="cy_p")),
                             "tiled_gemm_speedup": _cell("fail", "too slow",
                                                         ename="SpeedupCheckError",
                                                         measured=_measured(9.0, 10.0, "Tesla T4"))
                             if speedups else _cell("not_measured", "no GPU")}, 2, "Tesla T4")
    student("dee_q", "CUDA C", {"ai_answer": _cell("pass")}, 7, failed=True)
    return rows, summaries


PEOPLE = ["ada_l", "ben_k", HOSTILE_ID, HOSTILE_NAME, "cy_p", "dee_q"]


@pytest.fixture
def report() -> ClassReport:
    rows, summaries = synthetic_class()
    return build(NOTEBOOKS, rows, summaries, PEOPLE)


def test_templates_leave_out_numbers_shapes_and_quoted_names() -> None:
    a = mistakes.template("AssertionError", "C[3, 17] is 12.5, expected 3.25 for 'gemm'\nmore")
    b = mistakes.template("AssertionError", "C[0, 5] is 1e3,  expected -2 for 'tiled'")
    assert a == b == "AssertionError: C[#, #] is #, expected # for '…'"
    assert mistakes.template("ValueError", "C[0, 5] is 1") != a  # another error, another group


def test_counts_per_test(report: ClassReport) -> None:
    counts = {(t.notebook, t.grade_id): t for t in report.tests}
    correct = counts[("03_tiled_gemm", "tiled_gemm_correct")]
    assert (correct.handed_in, correct.passed, correct.failed, correct.not_checked) == (5, 1, 3, 1)
    speed = counts[("03_tiled_gemm", "tiled_gemm_speedup")]
    assert (speed.passed, speed.failed, speed.not_measured) == (2, 1, 1)
    assert report.handed_in == {"01_arithmetic_intensity": 5, "03_tiled_gemm": 5,
                                "03c_tiled_gemm_cuda": 0}
    assert sorted(report.scores) == ["CUDA C", "Numba"] and len(report.scores["Numba"]) == 3
    assert report.totals["ada_l"] == (15.0, 20.0)  # the grade table's total


def test_mistakes_are_grouped_counted_ordered_and_anonymised(report: ClassReport) -> None:
    first = report.mistakes[0]
    assert (first.grade_id, len(first.students)) == ("tiled_gemm_correct", 3)
    assert sorted(first.students) == sorted(["ben_k", HOSTILE_ID, "cy_p"])
    assert report.mistakes[1].grade_id == "ai_answer" and len(report.mistakes[1].students) == 2
    assert [len(m.students) for m in report.mistakes] == sorted(
        (len(m.students) for m in report.mistakes), reverse=True)
    for m in report.mistakes:
        for who in PEOPLE:
            assert who.lower() not in m.example.lower(), (who, m.example)
    assert "<student>" in first.example


def test_grading_says_what_was_not_measured_and_who_was_not_graded(report) -> None:
    assert report.not_measured == {("03_tiled_gemm:tiled_gemm_speedup", "no GPU"): 1}
    assert [(s, nb) for s, nb, _ in report.failed_to_run] == [("dee_q", "03_tiled_gemm")]
    assert report.check_seconds["ada_l"] == 3.0


def test_the_roofline_is_drawn_from_recorded_numbers(report: ClassReport) -> None:
    assert {(k.student, k.device) for k in report.kernels} == {
        ("ada_l", "NVIDIA H200"), (HOSTILE_ID, "NVIDIA H200"), ("cy_p", "Tesla T4")}
    ada = next(k for k in report.kernels if k.student == "ada_l")
    assert ada.tiled_gflops == pytest.approx(2 * 2048**3 / 2e6) and ada.speedup == 6.0
    assert figures.intensity("naive", 2048, 32) == pytest.approx(0.25, rel=1e-3)
    assert figures.intensity("tiled", 2048, 32) == pytest.approx(8.0, rel=1e-2)
    drawn = command.draw(report)
    assert drawn["roofline-nvidia-h200"] and drawn["roofline-tesla-t4"]
    assert drawn["speeds"] and drawn["mistakes"] and drawn["scores"]
    assert figures.roofline(report, "Imaginary GPU 9000", report.kernels) is None


def test_without_a_gpu_the_page_says_nothing_was_measured(tmp_path: Path) -> None:
    rows, summaries = synthetic_class(speedups=False)
    page = command.write(tmp_path / "report", build(NOTEBOOKS, rows, summaries, PEOPLE))
    html = page.read_text()
    assert "No speedup was measured" in html and not list(page.parent.glob("roofline*"))


def test_the_page_escapes_everything_and_allows_no_script(tmp_path: Path, report) -> None:
    page = command.write(tmp_path / "report", report)
    html = page.read_text()
    head = html.split("<head>", 1)[1]
    assert head.startswith('<meta charset="utf-8">\n<meta http-equiv="Content-Security-Policy"')
    assert "default-src 'none'" in html and "script-src 'none'" in html
    assert "<script" not in html.lower() and "onerror=" not in html.replace(
        "onerror=alert", "")  # only as escaped text, below
    assert "&lt;script&gt;alert(&quot;id&quot;)" in html  # the hostile id, shown as text
    assert re.findall(r"<img [^>]*src=\"([^:\"]*):", html) == ["data"] * html.count("<img ")
    assert {p.name for p in page.parent.iterdir()} >= {"index.html", "class.json",
                                                         "scores.png", "mistakes.png"}


def test_the_leaderboard_shows_pseudonyms_and_one_gpu_per_table(tmp_path: Path, report) -> None:
    folder = tmp_path / "report"
    command.write(folder, report, with_leaderboard=True)
    html = (folder / leaderboard.PAGE_NAME).read_text()
    mapping = leaderboard.read_mapping(folder / leaderboard.MAPPING_NAME)
    assert set(mapping) == {"ada_l"}  # the only correct measured kernel (eve's and cy's failed)
    for who in PEOPLE:
        assert who not in html
    assert mapping["ada_l"] in html and "NVIDIA H200" in html and "Tesla T4" not in html
    command.write(folder, report, with_leaderboard=True)  # a second report: the same names
    assert leaderboard.read_mapping(folder / leaderboard.MAPPING_NAME) == mapping
    with (folder / leaderboard.MAPPING_NAME).open() as fh:
        assert next(csv.reader(fh)) == ["student", "pseudonym"]
    command.write(folder, report)  # not asked for: no leaderboard left from before
    assert not (folder / leaderboard.PAGE_NAME).exists()


def test_a_korean_class_gets_a_korean_page(tmp_path: Path) -> None:
    rows, summaries = synthetic_class()
    page = command.write(tmp_path / "r", build(NOTEBOOKS, rows, summaries, PEOPLE, "ko"))
    html = page.read_text()
    assert '<html lang="ko">' in html and "4주차" in html and "Scores" not in html


def test_nothing_graded_is_said_and_exits_non_zero(tmp_path: Path, capsys) -> None:
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "index.html").write_text("an old class")
    assert command.main(tmp_path) == 1
    assert "grade the class first" in capsys.readouterr().err
    assert not (tmp_path / "report" / "index.html").exists()


def test_a_missing_korean_font_is_said_and_exits_non_zero(tmp_path: Path, capsys,
                                                         monkeypatch) -> None:
    """The figures draw names in Hangul: without NanumGothic (koreanize-matplotlib) the command
    says so in a sentence, exits 1 and leaves no earlier class's page behind (it was a traceback
    at the end of ``make demo``, after the whole class had been graded)."""
    graded = tmp_path / "autograded" / "ada_l" / ASSIGNMENT
    graded.mkdir(parents=True)
    (graded / "01_arithmetic_intensity.trusted.json").write_text("{}")
    (tmp_path / "gradebook.db").write_text("")
    (tmp_path / "report").mkdir()
    (tmp_path / "report" / "index.html").write_text("an old class")
    rows, summaries = synthetic_class()
    monkeypatch.setattr(command, "gather",
                        lambda root, language: build(NOTEBOOKS, rows, summaries, PEOPLE))
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None
                        if name == "koreanize_matplotlib" else find_spec(name, *rest))
    assert command.main(tmp_path) == 1
    err = capsys.readouterr().err
    assert "NanumGothic" in err and "pip install koreanize-matplotlib" in err, err
    assert "Traceback" not in err
    assert not (tmp_path / "report" / "index.html").exists()


def test_the_speedup_is_shown_against_the_course_naive_kernel_it_was_measured_on(
        tmp_path: Path) -> None:
    """A student whose own naive kernel is fast (jo_while_loops on the H200: 4,629 GFLOP/s,
    the course's 1,304) is timed against the course's naive kernel: the table shows both
    naive kernels, so that 6,993 GFLOP/s and 5.36× read as one measurement."""
    rows, summaries = synthetic_class()
    flop = 2.0 * 2048 ** 3
    record = {"size": 2048, "tile": 32, "device": "NVIDIA H200", "speedup": 5.3638,
              "gflops": {"tiled": 6993.3, "own naive": 4629.4, "reference naive": 1303.8},
              "ms": {"tiled": flop / 6993.3e6, "own naive": flop / 4629.4e6,
                     "reference naive": flop / 1303.8e6}}
    summaries[("ada_l", "03_tiled_gemm")]["cells"]["tiled_gemm_speedup"]["measured"] = record
    report = build(NOTEBOOKS, rows, summaries, PEOPLE)
    ada = next(k for k in report.kernels if k.student == "ada_l")
    assert (ada.naive_gflops, ada.reference_gflops, ada.speedup) == (4629.4, 1303.8, 5.3638)
    page = (command.write(tmp_path, report).parent / command.PAGE_NAME).read_text()
    assert "course&#x27;s naive GFLOP/s" in page or "course's naive GFLOP/s" in page
    row = page[page.index(">ada_l<"):].split("</tr>")[0]
    assert all(v in row for v in ("4629", "1304", "6993", "5.36×")), row
