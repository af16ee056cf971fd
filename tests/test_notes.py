"""The lines the notebooks' own cells print, and their figures' words, come from the catalog.

course/checks/success_lines.py (a test cell's ✓ line), course/runtime/notes.py (any other cell's
one-line note) and course/runtime/figures.py (the words of a figure a cell draws itself):
each name a notebook uses exists, each entry is used, a wrong name or a missing value is a
clear error, and Korean is Korean. A static guard too: no code cell of the source notebooks
prints an English sentence of its own (tests/test_korean_outputs.py runs the Korean release;
this also covers the GPU-only branches the simulator never reaches).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

from course.checks.success_lines import PASSED, passed, passed_line
from course.runtime import i18n
from course.runtime.figures import FIGURE_TEXT, figure_text
from course.runtime.notes import NOTES, UnknownNoteError, note, note_text

ROOT = Path(__file__).resolve().parents[1]
SOURCE = sorted((ROOT / "source" / "week4").glob("*.ipynb"))
HANGUL = re.compile("[\uac00-\ud7a3]")


def _code_cells() -> list[tuple[str, str, str]]:
    """(notebook, grade_id or id, source) of every code cell of the source notebooks."""
    cells = []
    for path in SOURCE:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code":
                gid = cell.metadata.get("nbgrader", {}).get("grade_id") or cell.get("id", "")
                cells.append((path.stem, gid, cell.source))
    return cells


def _calls(source: str, function: str) -> list[str]:
    """The first (string) argument of every call of ``function`` in ``source``."""
    return [node.args[0].value for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == function and node.args
            and isinstance(node.args[0], ast.Constant)]


def test_each_test_cell_reports_its_own_success_line_and_each_line_is_used() -> None:
    used = {}
    for _nb, gid, source in _code_cells():
        for name in _calls(source, "passed"):
            assert name == gid, f"test cell {gid} prints the success line of {name}"
            used[name] = gid
    assert sorted(used) == sorted(PASSED)


@pytest.mark.parametrize(("table", "function"), [(NOTES, "note"), (FIGURE_TEXT, "figure_text")])
def test_every_name_a_cell_uses_exists_and_every_entry_is_used(table: dict, function: str) -> None:
    used = {name for _nb, _gid, source in _code_cells() for name in _calls(source, function)}
    used |= {name for _nb, _gid, source in _code_cells()
             for name in _calls(source, "note_text")} if function == "note" else set()
    assert used <= set(table), used - set(table)
    # "speedup_graded" is printed by the visible part of notebook 3's and 3c's speedup tests,
    # "skipped_while_grading" also by course.notebooks.kernel_roofline.
    assert set(table) <= used, set(table) - used


def test_a_wrong_name_or_a_missing_value_is_a_clear_error() -> None:
    with pytest.raises(UnknownNoteError, match="no success line named 'ai_matmul'; there are: "
                       "ai_vector_add_basic"):
        passed("ai_matmul")
    with pytest.raises(UnknownNoteError, match="no note named 'skipped'"):
        note("skipped")
    with pytest.raises(UnknownNoteError, match="'refused' needs a value for 'error'"):
        note("refused")
    with pytest.raises(UnknownNoteError, match="no figure text named 'title'"):
        figure_text("title")


def test_english_as_written_and_korean_in_a_korean_notebook(monkeypatch, capsys) -> None:
    monkeypatch.delenv(i18n.ENV, raising=False)
    i18n.reset()
    passed("ai_matmul_square")
    note("swapped_ratio", ratio=3.14159, size=2048)
    assert capsys.readouterr().out == ("✓ ai_matmul(256, 256, 256) = 42.67 FLOP/byte\n"
                                       "x ↔ row takes 3.14× as long as x ↔ column at 2048³\n")
    monkeypatch.setenv(i18n.ENV, "ko")
    i18n.reset()
    try:
        lines = [passed_line(t) for t in PASSED] + [figure_text(f, t=8, gpu="T4", ridge=25.4,
                 mapping="x ↔ row", matrix="A", elements=2, sectors=1, step=0)
                 for f in FIGURE_TEXT]
        lines.append(note_text("swapped_ratio", ratio=3.14159, size=2048))
        assert all(HANGUL.search(line) for line in lines), [x for x in lines
                                                            if not HANGUL.search(x)]
        assert "3.14" in lines[-1] and "2048³" in lines[-1]
    finally:
        i18n.reset()


#: a string literal with two English words in a row ("Skipped while", "is right").
_PROSE = re.compile(r"[A-Za-z][a-z]+ [a-z]+")
#: commands a cell may show as they are typed: the setup cell's "⏳ pip install <package>".
_COMMANDS = re.compile(r"\bpip install\b")


def _printed_prose(source: str) -> list[str]:
    """String literals (f-strings' literal parts too) that a print() call in ``source`` shows."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id == "print":
            for arg in node.args:
                for part in ast.walk(arg):
                    if isinstance(part, ast.Constant) and isinstance(part.value, str) \
                            and _PROSE.search(_COMMANDS.sub("", part.value)):
                        found.append(part.value)
    return found


def test_no_cell_prints_an_english_sentence_of_its_own() -> None:
    found = [f"{nb} {gid}: {text!r}" for nb, gid, source in _code_cells()
             for text in _printed_prose(source)]
    assert not found, found


def test_the_print_guard_finds_an_english_line() -> None:
    assert _printed_prose('print("Skipped while grading.")') == ["Skipped while grading."]
    assert _printed_prose('print(f"{n} elements never written")') == [" elements never written"]
    assert _printed_prose('print(f"A[{row}, {k}] = {x}")\nprint(C)') == []
    assert _printed_prose('print(f"⏳ pip install {COURSE_PACKAGE}")') == []
