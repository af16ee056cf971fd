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
