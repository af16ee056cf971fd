"""Source notebooks are stored clean: no outputs, one standard kernelspec, valid nbgrader ids."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = sorted((ROOT / "source" / "week4").glob("*.ipynb"))
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def test_there_are_source_notebooks() -> None:
    assert len(SOURCE) >= 3, "expected the week-4 source notebooks in source/week4"


@pytest.mark.parametrize("path", SOURCE, ids=lambda p: p.name)
def test_source_notebook_is_clean(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec") == KERNELSPEC
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: a code cell has stored outputs"
            assert cell.execution_count is None, f"{path.name}: stored execution count"


@pytest.mark.parametrize("path", SOURCE, ids=lambda p: p.name)
def test_grade_ids_are_unique_and_readable(path: Path) -> None:
    ids = [c.metadata["nbgrader"]["grade_id"] for c in nbformat.read(path, as_version=4).cells
           if "nbgrader" in c.metadata]
    assert len(ids) == len(set(ids)), f"{path.name}: duplicate grade_id"
    for gid in ids:
        assert not gid.startswith("cell-"), f"{path.name}: unreadable grade_id {gid}"


@pytest.mark.parametrize("path", SOURCE, ids=lambda p: p.name)
def test_test_cells_are_self_contained(path: Path) -> None:
    """The grader re-runs each test cell with only the student's definitions: a test cell may
    use names from answer cells, and everything else it must import itself."""
    from course.trust.kernel_source import referenced_names

    nb = json.loads(path.read_text())
    answers = "\n".join("".join(c["source"]) for c in nb["cells"]
                        if c["cell_type"] == "code"
                        and c.get("metadata", {}).get("nbgrader", {}).get("solution"))
    defined = referenced_names("") | {n for n in _defined_names(answers)}
    import builtins

    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "code" and meta.get("grade") and not meta.get("solution"):
            free = {n for n in referenced_names("".join(cell["source"]))
                    if not hasattr(builtins, n)}
            missing = free - defined
            assert not missing, f"{path.name}:{meta['grade_id']} relies on {missing}"


def _defined_names(code: str) -> set[str]:
    import ast

    code = code.replace("### BEGIN SOLUTION", "").replace("### END SOLUTION", "")
    names = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


#: Helper code lives in `course`, not in cells: a code cell outside the students' answers stays
#: short enough to read at a glance (issue 11).
MAX_CELL_LINES = 30


def long_cells(nb: nbformat.NotebookNode) -> list[str]:
    """The code cells, answers excepted, longer than MAX_CELL_LINES: 'grade_id or id: lines'."""
    return [f"{c.metadata.get('nbgrader', {}).get('grade_id') or c.get('id')}: "
            f"{len(c.source.splitlines())} lines"
            for c in nb.cells if c.cell_type == "code"
            and not c.metadata.get("nbgrader", {}).get("solution")
            and len(c.source.splitlines()) > MAX_CELL_LINES]


@pytest.mark.parametrize("path", SOURCE, ids=lambda p: p.name)
def test_cells_outside_the_answers_are_short(path: Path) -> None:
    assert not long_cells(nbformat.read(path, as_version=4)), path.name


def test_the_cell_length_check_finds_a_long_cell() -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1\n" * (MAX_CELL_LINES + 1)),
                nbformat.v4.new_code_cell("y = 1\n" * MAX_CELL_LINES)]
    answer = nbformat.v4.new_code_cell("z = 1\n" * 99)
    answer.metadata["nbgrader"] = {"solution": True, "grade_id": "answer"}
    nb.cells.append(answer)
    assert long_cells(nb) == [f"{nb.cells[0].id}: {MAX_CELL_LINES + 1} lines"]
