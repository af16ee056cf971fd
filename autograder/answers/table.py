"""The visible answer checks' table: the rules' values at the calls the released tests make.

``python -m autograder.release`` (``make release``) writes ``course/checks/expected_answers.json``
with :func:`write` from the source notebooks' test cells *without* their hidden blocks — what
the release shows — so the student's copy of the course knows the right value and each named
mistake's value at exactly those calls (:mod:`course.checks.expected`) and nothing else: no
rule, no hidden test's arguments. ``--check`` in ``python -m autograder.release`` and
tests/test_answer_tables.py fail while the committed table is not what the notebooks ask.
"""

from __future__ import annotations

import ast
import json
import operator
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat

from autograder.answers import intensity, levels, roofline
from course.checks.expected import TABLE, Expected

#: a hidden block of a test cell, markers included (nbgrader's syntax).
HIDDEN_BLOCK = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[^\n]*\n?",
                          re.M | re.S)

_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}


def constant(node: ast.AST) -> Any:
    """The value of a literal written with numbers, tuples, lists, dicts keyed by strings and
    arithmetic (``1 / 12``, ``48 * 1024``, ``{"DRAM": 6.4e7}``); ``ValueError`` for anything
    else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str)
                                          for k in node.keys):
        return {k.value: constant(v) for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant)}
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [constant(e) for e in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -constant(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](constant(node.left), constant(node.right))
    raise ValueError(f"not a literal: {ast.unparse(node)}")


def _entry(value: Expected) -> dict[str, Any]:
    return {"value": value.value, "mistakes": [[v, list(h)] for v, h in value.mistakes],
            **value.extra}


def _cases_entries(check: str, cases: list[tuple], rule: Callable[[tuple], Expected]
                   ) -> list[dict[str, Any]]:
    return [{"case": list(case), **_entry(rule(tuple(case)))} for case in cases]


def _intensity(check: str) -> Callable[[tuple], Expected]:
    return lambda case: intensity.expected(check, case)


def _intensity_entries(name: str) -> Callable[[list[Any]], list[dict[str, Any]]]:
    return lambda args: _cases_entries(name, args[1], _intensity(name))


#: each visible check: how its call's arguments become table entries.
CHECKS: dict[str, Callable[[list[Any]], list[dict[str, Any]]]] = {
    **{name: _intensity_entries(name) for name in intensity.RULES},
    "check_critical_ai": lambda args: _cases_entries("check_critical_ai", args[1],
                                                     roofline.ridge_expected),
    "check_attainable": lambda args: _cases_entries("check_attainable", args[1],
                                                    roofline.roof_expected),
    "check_bound": lambda args: _cases_entries("check_bound", args[1], roofline.bound_expected),
    "check_measured_intensities": lambda args: _cases_entries(
        "check_measured_intensities", args[1], levels.intensities_expected),
    "check_bounding_level": lambda args: _cases_entries("check_bounding_level", args[1],
                                                        levels.bounding_expected),
    "check_attainable_array": lambda args: [{
        "case": [list(args[1]), args[2], args[3]],
        "elements": roofline.array_elements(args[1], args[2], args[3])}],
}


def visible_code(cell_source: str) -> str:
    """A test cell as the release shows it: its hidden blocks left out."""
    return HIDDEN_BLOCK.sub("", cell_source)


def hidden_code(cell_source: str) -> list[str]:
    """The hidden blocks of a test cell (what the release leaves out)."""
    return [m.group(0) for m in HIDDEN_BLOCK.finditer(cell_source)]


def _calls(code: str) -> Iterator[tuple[str, list[Any]]]:
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in CHECKS:
            yield node.func.id, [None, *(constant(a) for a in node.args[1:])]


def test_cells(source_dir: Path) -> Iterator[tuple[str, str, str]]:
    """``(notebook, grade_id, source)`` of every test cell of the source notebooks."""
    for path in sorted(source_dir.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            meta = cell.get("metadata", {}).get("nbgrader", {})
            if cell.cell_type == "code" and meta.get("grade") and not meta.get("solution"):
                yield path.stem, meta.get("grade_id", ""), cell.source


def build(source_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """The table for the visible test cells of the notebooks in ``source_dir``."""
    table: dict[str, list[dict[str, Any]]] = {}
    for _, _, source in test_cells(source_dir):
        for check, args in _calls(visible_code(source)):
            for entry in CHECKS[check](args):
                if entry not in table.setdefault(check, []):
                    table[check].append(entry)
    return dict(sorted(table.items()))


def hidden_calls(source_dir: Path) -> list[tuple[str, list[Any]]]:
    """Every answer-check call of the hidden blocks: what the table must not hold."""
    out: list[tuple[str, list[Any]]] = []
    for _, _, source in test_cells(source_dir):
        for block in hidden_code(source):
            out.extend(_calls(block))
    return out


def render(table: dict[str, list[dict[str, Any]]]) -> str:
    return json.dumps(table, indent=1, ensure_ascii=False) + "\n"


def write(source_dir: Path, target: Path = TABLE, write: bool = True) -> bool:
    """Bring ``target`` up to date with ``source_dir``'s visible tests; True if it changed."""
    text = render(build(source_dir))
    if target.is_file() and target.read_text(encoding="utf-8") == text:
        return False
    if write:
        target.write_text(text, encoding="utf-8")
    return True
