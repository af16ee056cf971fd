"""The shape of course/ and autograder/ (docs/architecture.md): small modules, and the old flat
paths still importable for notebooks, gradebooks and the sample students.

The layers themselves, and that there is no import cycle, are checked by import-linter
(``lint-imports``, contracts in pyproject.toml), which ``make test`` runs.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "course"
#: a module longer than this does several jobs: split it by job (docs/architecture.md).
MAX_LINES = 400
#: the layers; a module of course/ outside them is a re-export kept for an old path.
LAYERS = ("runtime", "trust", "gemm", "perf", "checks", "notebooks", "_isolated")
AUTOGRADER = ROOT / "autograder"


def too_long(root: Path, limit: int = MAX_LINES) -> list[str]:
    """Python files under ``root`` with more than ``limit`` lines, with their length."""
    found = []
    for path in sorted(root.rglob("*.py")):
        lines = len(path.read_text().splitlines())
        if lines > limit:
            found.append(f"{path.relative_to(root)}: {lines} lines")
    return found


def test_no_module_of_course_is_over_the_limit():
    assert too_long(COURSE) == [], f"split these by job (at most {MAX_LINES} lines each)"


def test_no_module_of_the_grader_is_over_the_limit():
    assert too_long(AUTOGRADER) == [], f"split these by job (at most {MAX_LINES} lines each)"


def test_the_length_check_finds_a_long_module(tmp_path):
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    assert too_long(tmp_path) == [f"pkg/long.py: {MAX_LINES + 1} lines"]


def facades() -> list[Path]:
    """The modules at the old flat paths: course/*.py (but __init__) and course/cudac/*.py."""
    return [p for p in [*COURSE.glob("*.py"), *(COURSE / "cudac").glob("*.py")]
            if p.name != "__init__.py" or p.parent.name == "cudac"]


def reexports_only(source: str) -> bool:
    """True if ``source`` is a docstring followed by ``from course... import`` lines only."""
    body = ast.parse(source).body
    if not body or not (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                        and isinstance(body[0].value.value, str)):
        return False
    return all(isinstance(node, ast.ImportFrom) and (node.module or "").startswith("course.")
               for node in body[1:])


@pytest.mark.parametrize("path", facades(), ids=lambda p: str(p.relative_to(COURSE)))
def test_an_old_path_only_reexports(path):
    assert reexports_only(path.read_text()), \
        f"{path.relative_to(ROOT)} holds code: code belongs in a layer ({', '.join(LAYERS)})"


def test_the_reexport_check_refuses_code():
    assert reexports_only('"""Where."""\nfrom course.perf.roofline import Roof\n')
    assert not reexports_only('"""Where."""\nfrom course.perf.roofline import Roof\nX = 1\n')
    assert not reexports_only("from course.perf.roofline import Roof\n")  # no docstring
    assert not reexports_only('"""Where."""\nimport os\n')


def test_every_course_module_is_in_a_layer_or_a_reexport():
    for path in COURSE.rglob("*.py"):
        parts = path.relative_to(COURSE).parts
        assert len(parts) == 1 or parts[0] in (*LAYERS, "cudac"), path


#: ``from course.X import a, b`` and ``import course.X`` as notebooks and samples write them.
_FROM = re.compile(r"^\s*from (course(?:\.\w+)*) import ([\w, ()]+?)\s*(?:#.*)?$", re.M)
_IMPORT = re.compile(r"^\s*import (course(?:\.\w+)*)", re.M)


def student_imports() -> set[tuple[str, str | None]]:
    """(module, name) for every import of ``course`` in the source notebooks, the sample
    students and docs/contract.md: the paths gradebooks and students rely on."""
    texts = []
    for nb in sorted((ROOT / "source" / "week4").glob("*.ipynb")):
        texts += ["".join(c["source"]) for c in json.loads(nb.read_text())["cells"]
                  if c["cell_type"] == "code"]
    texts += [p.read_text() for p in (ROOT / "sample_class" / "students").glob("*.py")]
    texts.append((ROOT / "docs" / "contract.md").read_text())
    found: set[tuple[str, str | None]] = set()
    for text in texts:
        for module, names in _FROM.findall(text):
            for name in names.replace("(", "").replace(")", "").split(","):
                if name.strip():
                    found.add((module, name.split(" as ")[0].strip()))
        found |= {(module, None) for module in _IMPORT.findall(text)}
    return found


def test_the_student_imports_are_found():
    found = student_imports()
    assert ("course.checks", "check_tiled_gemm") in found
    assert ("course", "backend") in found and len(found) > 40


@pytest.mark.parametrize("module,name", sorted(student_imports(), key=str))
def test_every_student_import_still_works(module, name):
    mod = importlib.import_module(module)
    if name is not None:
        assert hasattr(mod, name) or importlib.util.find_spec(f"{module}.{name}"), \
            f"from {module} import {name} no longer works"


def local_course_imports(source: str) -> list[int]:
    """Lines of ``source`` that import ``course`` code inside a function or a class (outside
    an ``if TYPE_CHECKING:`` block): the way import cycles used to be hidden."""
    tree = ast.parse(source)
    hidden = {id(n) for node in ast.walk(tree)
              if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
              for n in ast.walk(node)}
    found = []
    for scope in ast.walk(tree):
        if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for node in ast.walk(scope):
            if id(node) in hidden:
                continue
            if isinstance(node, ast.ImportFrom):
                modules = [node.module or ""]
            elif isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            else:
                continue
            if any(m.split(".")[0] == "course" for m in modules):
                found.append(node.lineno)
    return sorted(set(found))


def test_no_course_code_is_imported_inside_a_function():
    found = {str(p.relative_to(ROOT)): lines for p in COURSE.rglob("*.py")
             if (lines := local_course_imports(p.read_text()))}
    assert found == {}, "import course code at the top of the module (docs/architecture.md)"


def test_the_local_import_check_finds_one():
    assert local_course_imports("def f():\n    from course.perf import timing\n") == [2]
    assert local_course_imports("def f():\n    import course.perf\n") == [2]
    assert local_course_imports("def f():\n    import cupy\n") == []
    assert local_course_imports("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                "    from course.perf import timing\n") == []
