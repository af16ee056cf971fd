"""The notebook shows the grader's verdict on a test cell's definitions (course.gate).

The grader rebuilds a test cell's definitions from source under the code policy; a definition
it cannot rebuild fails there. The gate makes the student's own run of the same test cell fail
the same way, with the same message, instead of printing ✓.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell

from course.trust import gate
from course.trust.code_policy import DisallowedCodeError
from course.trust.kernel_source import bundle_for_test_cell

ROOT = Path(__file__).resolve().parents[1]

TEST_CELL = '''"""Check ai_x."""
from course.checks import expect_close

expect_close(ai_x(2), 2.0, "ai_x(2)")
print("passed")
'''


@pytest.fixture
def shell():
    InteractiveShell.clear_instance()
    gate._seen.clear()
    sh = InteractiveShell.instance()
    yield sh
    InteractiveShell.clear_instance()


def run(shell, source: str):
    result = shell.run_cell(source, store_history=True)
    return result.error_in_exec or result.error_before_exec


def grader_error(cells: list[str], test: str) -> BaseException | None:
    earlier = [c for c in cells if not gate.looks_like_test_cell(c)]
    try:
        bundle_for_test_cell(earlier, test)
    except (ValueError, NameError) as exc:
        return exc
    return None


@pytest.mark.parametrize("answer", [
    "def ai_x(n):\n    return float(n)\n",
    "def ai_x(n):\n    if not isinstance(n, int):\n        raise ValueError('n')\n"
    "    return n * 1.0\n",
    "ai_x = lambda n: n * 1.0\n",
])
def test_a_correct_answer_passes_in_the_notebook_and_for_the_grader(shell, answer):
    assert run(shell, answer) is None
    assert run(shell, TEST_CELL) is None
    assert grader_error([answer], TEST_CELL) is None


@pytest.mark.parametrize("answer", [
    "import os\ndef ai_x(n):\n    return float(n) + 0 * os.getpid()\n",
    "def ai_x(n):\n    return float(getattr(n, 'real'))\n",
    "class X:\n    def __call__(self, n):\n        return float(n)\nai_x = X()\n",
])
def test_a_refused_answer_fails_in_the_notebook_with_the_graders_message(shell, answer):
    # In the kernel these answers *work*: without the gate the student would see ✓.
    assert run(shell, answer) is None
    error = run(shell, TEST_CELL)
    expected = grader_error([answer], TEST_CELL)
    assert isinstance(error, DisallowedCodeError), error
    assert str(error) == str(expected)


def test_a_name_only_a_loop_defines_fails_in_the_notebook_as_for_the_grader(shell):
    # The grader rebuilds definitions, not effects: a name bound by a for loop is not there.
    answer = "for ai_x in [lambda n: float(n)]:\n    pass\n"
    assert run(shell, answer) is None
    error = run(shell, TEST_CELL)
    assert isinstance(error, NameError) and "`ai_x` is not defined" in str(error)
    assert str(error) == str(grader_error([answer], TEST_CELL))


def test_earlier_test_cells_do_not_provide_definitions(shell):
    # A test cell that imports numpy does not give the answer `np`: the grader leaves test
    # cells out of the definitions, and so does the gate.
    importing_test = '"""Check something."""\nimport numpy as np\n'
    answer = "def ai_x(n):\n    return float(np.float64(n))\n"
    assert run(shell, importing_test) is None
    assert run(shell, answer) is None
    error = run(shell, TEST_CELL)
    assert isinstance(error, DisallowedCodeError) and "`np`" in str(error)


def test_the_gate_is_silent_outside_test_cells_and_outside_ipython(shell, monkeypatch):
    assert run(shell, "import os\ndef ai_x(n):\n    return float(n)\n") is None
    # A student's own cell calling a check is not a test cell: no gate.
    assert run(shell, "from course.checks import expect_close\n"
                      "expect_close(ai_x(2), 2.0, 'x')\n") is None
    InteractiveShell.clear_instance()
    gate.begin_check("expect_close")  # plain Python: nothing to look at


def test_the_gate_does_nothing_in_the_graders_process(shell, monkeypatch):
    from course.runtime import backend

    run(shell, "import os\ndef ai_x(n):\n    return float(n)\n")
    monkeypatch.setenv(backend.TRUSTED_ENV, "1")
    assert run(shell, TEST_CELL) is None


@pytest.mark.parametrize("source, expected", [
    ('"""Check that x."""\nx()\n', True),
    ('%matplotlib inline\n"""Check it."""\n', True),
    ('"""Return x."""\n', False),
    ("x = 1\n", False),
    ("def f(:\n", False),
    ("", False),
])
def test_looks_like_test_cell(source, expected):
    assert gate.looks_like_test_cell(source) is expected


def test_every_test_cell_of_the_course_opens_with_a_check_docstring():
    """The gate finds test cells by this convention; nbgrader by metadata. They must agree."""
    for path in sorted((ROOT / "source" / "week4").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell["cell_type"] != "code":
                continue
            is_test = bool(meta.get("grade")) and not meta.get("solution")
            text = "".join(cell["source"])
            assert gate.looks_like_test_cell(text) is is_test, (path.name, meta.get("grade_id"))


def test_with_the_audit_off_the_students_kernel_leaves_checks_to_the_grader(shell, monkeypatch):
    from course.runtime import backend

    assert run(shell, "def ai_x(n):\n    return float(n)\n") is None
    monkeypatch.setenv(backend.AUTOGRADE_ENV, "autograde")
    monkeypatch.delenv(backend.TRUSTED_ENV, raising=False)
    assert run(shell, TEST_CELL) is None  # audit on (default): the check runs here too
    monkeypatch.setenv(gate.AUDIT_ENV, "off")
    error = run(shell, TEST_CELL)
    assert isinstance(error, gate.CheckedByTheGrader)
    # ... after the definitions were checked: a refused answer still says so, first.
    assert run(shell, "import os\ndef ai_x(n):\n    return float(n) + 0 * os.getpid()\n") is None
    assert isinstance(run(shell, TEST_CELL), DisallowedCodeError)
