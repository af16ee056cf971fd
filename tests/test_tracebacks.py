"""A failing cell shows the student's message, not the course's frames, and still fails.

Runs cells in a real (terminal) IPython shell with the course's handler installed
(course/runtime/tracebacks.py): the cell's exception is still recorded as the cell's error,
what is shown is short, and ``COURSE_TRACEBACK=full`` brings IPython's whole traceback back.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

from course.runtime import tracebacks

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.fixture()
def shell(monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    monkeypatch.delenv(tracebacks.TRACEBACK_ENV, raising=False)
    monkeypatch.setenv("COURSE_LANG", "en")
    ip = InteractiveShell.instance()
    assert tracebacks.install(ip)
    yield ip
    ip.set_custom_exc((), None)


def run(ip: InteractiveShell, code: str, capsys: pytest.CaptureFixture[str]
        ) -> tuple[BaseException | None, list[str]]:
    capsys.readouterr()
    result = ip.run_cell(code)
    captured = capsys.readouterr()
    text = ANSI.sub("", captured.out + captured.err)
    return result.error_in_exec, [ln for ln in text.splitlines() if ln.strip()]


UNFILLED = """
def critical_ai(peak_gflops, bandwidth_gbs):
    raise NotImplementedError()
from course.checks import check_critical_ai
check_critical_ai(critical_ai, [(8141.0, 320.0)])
"""


def test_an_unfilled_answer_is_one_line_naming_it(shell: InteractiveShell,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    error, lines = run(shell, UNFILLED, capsys)
    assert isinstance(error, NotImplementedError)  # the cell still fails: nbgrader sees it
    assert len(lines) == 1, lines
    assert lines[0].startswith("✗ critical_ai is not written yet: replace "), lines


def test_a_course_error_shows_its_message_and_no_course_frames(
        shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    code = ("from course.checks import expect_close\n"
            "expect_close(3.0, 2.0, 'ai_matmul(1, 1, 1)')\n")
    error, lines = run(shell, code, capsys)
    assert type(error).__name__ == "AnswerError"
    assert lines[0].startswith("AnswerError: ai_matmul(1, 1, 1)"), lines
    assert not [ln for ln in lines if "course/" in ln or "File " in ln], lines


def test_an_error_in_the_students_code_shows_their_line(
        shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    code = ("def critical_ai(peak_gflops, bandwidth_gbs):\n"
            "    values = [peak_gflops]\n"
            "    return values[3] / bandwidth_gbs\n"
            "from course.checks import check_critical_ai\n"
            "check_critical_ai(critical_ai, [(8141.0, 320.0)])\n")
    error, lines = run(shell, code, capsys)
    assert isinstance(error, IndexError)
    text = "\n".join(lines)
    assert "return values[3] / bandwidth_gbs" in text and "in critical_ai" in text, text
    assert lines[-1] == "IndexError: list index out of range", lines
    assert "course" not in text.replace("course.checks import", ""), text
    assert len(lines) <= 6, lines


def test_an_error_that_never_entered_the_course_is_ipythons_own(
        shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    error, lines = run(shell, "x = {}\nx['missing']\n", capsys)
    assert isinstance(error, KeyError)
    assert any("Traceback" in ln for ln in lines), lines
    error, lines = run(shell, "def f(:\n", capsys)
    assert any("SyntaxError" in ln for ln in lines), lines


def test_instructors_get_the_whole_traceback(shell: InteractiveShell,
                                             capsys: pytest.CaptureFixture[str],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tracebacks.TRACEBACK_ENV, "full")
    error, lines = run(shell, UNFILLED, capsys)
    assert isinstance(error, NotImplementedError)
    assert any("roofline_answers.py" in ln for ln in lines), lines


def test_korean_unfilled_answer(shell: InteractiveShell, capsys: pytest.CaptureFixture[str],
                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSE_LANG", "ko")
    _error, lines = run(shell, UNFILLED, capsys)
    assert len(lines) == 1 and lines[0].startswith("✗ critical_ai가 아직 작성되지 않았다"), lines


def test_a_passing_checks_report_is_not_echoed(shell: InteractiveShell) -> None:
    """The kernel sends no result for a value whose display data is empty (the notebook run
    of tests/test_student_errors.py sees it end to end)."""
    from course.checks.gemm import GemmReport

    report = GemmReport("gemm_naive", ((1, 2, 3),), "simulator", 0.0)
    assert shell.display_formatter.format(report) == ({}, {})
    assert str(report).startswith("✓ gemm_naive is correct")


def test_an_index_error_in_a_simulated_kernel_names_its_line_thread_and_fix(
        shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    shell.run_cell("import course\nfrom numba import cuda\nimport numpy as np\n"
                   "@cuda.jit\ndef gemm_naive(A, B, C):\n    col, row = cuda.grid(2)\n"
                   "    C[row, col] = A[row, 100]\n")
    code = ("gemm_naive[(1, 1), (2, 2)](np.ones((5, 7), np.float32), "
            "np.ones((7, 3), np.float32), np.zeros((5, 3), np.float32))\n")
    error, lines = run(shell, code, capsys)
    assert isinstance(error, IndexError)
    text = "\n".join(lines)
    assert "C[row, col] = A[row, 100]" in text and "in gemm_naive" in text, text
    assert lines[-1].startswith("IndexError: gemm_naive: an index out of range in thread"), text
    assert "site-packages" not in text and "course/" not in text and len(lines) <= 6, text


def test_in_a_notebook_kernel_a_report_is_not_echoed_and_an_error_is_short(tmp_path) -> None:
    """Through a real kernel, as JupyterLab and nbgrader run it: no result after the ✓ line,
    and a failing cell is still an ``error`` output (what nbgrader scores) with its name and
    message, in one line."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import course"),
        nbformat.v4.new_code_cell("from course.checks.vector_add import VectorAddReport\n"
                                  "report = VectorAddReport((1, 2), 'simulator')\n"
                                  "print(report)\nreport"),
        nbformat.v4.new_code_cell(UNFILLED)])
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute(
        env={**__import__("os").environ, "COURSE_LANG": "en"})
    shown = nb.cells[1].outputs
    assert [o.output_type for o in shown] == ["stream"], shown
    assert shown[0].text.startswith("✓ vector_add is correct"), shown
    [error] = nb.cells[2].outputs
    assert error.output_type == "error" and error.ename == "NotImplementedError", error
    assert len(error.traceback) == 1 and "critical_ai is not written yet" in error.traceback[0]
