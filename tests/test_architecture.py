"""The shape of course/ and autograder/ (docs/architecture.md): small modules in layers, and one
student-facing API — ``import course``, ``course.checks``, ``course.tools`` — for every notebook
(source and both releases), docs/contract.md, the README and the sample students.

The layers themselves, and that there is no import cycle, are checked by import-linter
(``lint-imports``, contracts in pyproject.toml), which ``make test`` runs.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from course.runtime import exports

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT / "course"
#: a module longer than this does several jobs: split it by job (docs/architecture.md).
MAX_LINES = 400
#: the layers; outside them are only course/__init__.py and the face course/tools.py.
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


def test_every_course_module_is_in_a_layer_or_a_face():
    for path in COURSE.rglob("*.py"):
        parts = path.relative_to(COURSE).parts
        assert parts in (("__init__.py",), ("tools.py",)) or parts[0] in LAYERS, \
            f"{path.relative_to(ROOT)}: code belongs in a layer ({', '.join(LAYERS)})"


# ---------------------------------------------------------------------------------------------
# The student-facing API: `import course`, `course.checks` and `course.tools`, nothing else.

#: the modules a notebook, the contract, the README or a sample student may import.
FACES = {"course.checks": COURSE / "checks" / "__init__.pyi", "course.tools": COURSE / "tools.pyi"}
RELEASES = ("release", "release-ko")
_FENCE = re.compile(r"```python\n(.*?)```", re.S)
#: a dotted name in prose or a comment: `course.tools.run_sweep`, course.checks.gemm …
_DOTTED = re.compile(r"(?<![\w/.])course(?:\.\w+)+")
#: `course.pot`, `course.mo`: files, not names.
_FILE_SUFFIXES = {"po", "pot", "mo", "py", "pyi", "md", "ipynb", "toml"}


@functools.cache
def face_names(module: str) -> set[str]:
    return set(exports.read_stub(FACES[module]))


def _parse(text: str) -> ast.Module | None:
    """A cell or snippet as Python (IPython's %magics and !commands blanked), or None."""
    lines = ["" if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines()]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def import_problems(text: str) -> list[str]:
    """Every `course` import in ``text`` other than ``import course`` and the faces
    ``course.checks`` and ``course.tools`` (``from course.tools import run_sweep``, ``from course
    import tools``), or that names something a face does not have."""
    tree = _parse(text)
    problems: list[str] = []
    for node in ast.walk(tree) if tree else ():
        if isinstance(node, ast.Import):
            problems += [f"import {a.name}" for a in node.names
                         if a.name.split(".")[0] == "course"
                         and a.name not in ("course", *FACES)]
        elif isinstance(node, ast.ImportFrom) and node.module == "course":  # the faces only
            problems += [f"from course import {a.name}" for a in node.names
                         if f"course.{a.name}" not in FACES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "course":
            if node.module not in FACES:
                problems.append(ast.unparse(node))
                continue
            problems += [f"from {node.module} import {a.name} (no such name)" for a in node.names
                         if a.name not in face_names(node.module)]
    return problems


def _names_something(dotted: str) -> bool:
    """True if ``dotted`` is a module of course, or attributes reached from one."""
    parts = dotted.split(".")
    for i in range(len(parts), 1, -1):
        try:
            found = importlib.util.find_spec(".".join(parts[:i])) is not None
        except ModuleNotFoundError:  # a parent package is missing
            found = False
        if found:
            value: object = importlib.import_module(".".join(parts[:i]))
            for attribute in parts[i:]:
                if not hasattr(value, attribute):
                    return False
                value = getattr(value, attribute)
            return True
    return False


def reference_problems(text: str) -> list[str]:
    """Dotted `course.…` names in ``text`` (prose, comments, messages) that name nothing: a
    module that was deleted, or a name its module does not have."""
    return sorted(d for d in set(_DOTTED.findall(text))
                  if d.rsplit(".", 1)[-1] not in _FILE_SUFFIXES and not _names_something(d))


def _notebook_texts(folder: Path) -> dict[str, list[tuple[str, str]]]:
    return {f"{folder.relative_to(ROOT)}/{nb.name}":
            [(c["cell_type"], "".join(c["source"])) for c in json.loads(nb.read_text())["cells"]]
            for nb in sorted(folder.glob("*.ipynb"))}


@functools.cache
def student_facing() -> dict[str, list[tuple[str, str]]]:
    """(kind, text) pieces by file: every cell of the source notebooks and of both releases,
    the Python snippets of docs/contract.md and README.md, the strings of every sample student
    (their cells) and the docs' prose."""
    found = _notebook_texts(ROOT / "source" / "week4")
    for release in RELEASES:
        found.update(_notebook_texts(ROOT / release / "week4"))
    for doc in (ROOT / "docs" / "contract.md", ROOT / "README.md"):
        text = doc.read_text()
        found[doc.name] = [("code", s) for s in _FENCE.findall(text)] + [("markdown", text)]
    for sample in sorted((ROOT / "sample_class" / "students").glob("*.py")):
        strings = [n.value for n in ast.walk(ast.parse(sample.read_text()))
                   if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        found[sample.name] = [("code", s) for s in strings]
    return found


def test_the_student_facing_sources_are_all_read():
    found = student_facing()
    for folder in ("source", *RELEASES):
        assert sum(name.startswith(f"{folder}/") for name in found) >= 10, folder
    assert "contract.md" in found and "README.md" in found and "lou_monkeypatch.py" in found
    code = "\n".join(t for pieces in found.values() for kind, t in pieces if kind == "code")
    assert "from course.checks import" in code and "from course.tools import" in code
    assert "import course.checks" in code  # Lou's tampering


@pytest.mark.parametrize("name", sorted(student_facing()))
def test_student_facing_code_imports_only_the_faces(name):
    pieces = student_facing()[name]
    problems = [p for kind, text in pieces if kind == "code" for p in import_problems(text)]
    assert problems == [], f"{name}: import only course, course.checks and course.tools"
    dangling = sorted({p for _, text in pieces for p in reference_problems(text)})
    assert dangling == [], f"{name} names what course does not have"


def test_the_face_check_refuses_other_paths():
    assert import_problems("import course\nfrom course.checks import check_ai_matmul\n"
                           "from course.tools import run_sweep, backend\n"
                           "import course.checks\nfrom course import tools\n"
                           "%matplotlib inline\n") == []
    assert import_problems("from course.sweep import run_sweep\n") == [
        "from course.sweep import run_sweep"]  # one of the deleted flat paths
    assert import_problems("from course.perf.sweep import run_sweep\n") == [
        "from course.perf.sweep import run_sweep"]  # a layer: fine inside, not for students
    assert import_problems("from course import backend\nimport course.cudac.checks\n") == [
        "from course import backend", "import course.cudac.checks"]
    assert import_problems("from course.tools import check_ai_matmul\n") == [
        "from course.tools import check_ai_matmul (no such name)"]
    assert reference_problems("see course.tools.run_sweep and course.checks.gemm.try_gemm, "
                              "`course.perf.sweep`") == []
    assert reference_problems("(`course.traffic`) and course.tools.nothing") == [
        "course.tools.nothing", "course.traffic"]


# ---------------------------------------------------------------------------------------------
# The faces: lazy, and every name they list exists.


@pytest.mark.parametrize("face", sorted(FACES))
def test_every_name_of_a_face_exists(face):
    module = importlib.import_module(face)
    table = exports.read_stub(FACES[face])
    assert sorted(dir(module)) == sorted(table) == sorted(module.__all__)
    for name, (where, attribute) in table.items():
        assert getattr(module, name) is exports.resolve(where, attribute), name
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = module.no_such_name


def test_a_face_stub_holds_only_imports_of_course(tmp_path):
    stub = tmp_path / "face.pyi"
    stub.write_text('"""Doc."""\nfrom course.perf.sweep import run_sweep as run_sweep\n'
                    "from course.runtime import backend as backend\n")
    assert exports.read_stub(stub) == {"run_sweep": ("course.perf.sweep", "run_sweep"),
                                       "backend": ("course.runtime", "backend")}
    for bad in ("from .sweep import run_sweep\n", "import course.perf\n", "X = 1\n",
                "from numpy import sum as sum\n", "from course.perf.sweep import *\n",
                "from course.a import x\nfrom course.b import x\n"):
        stub.write_text(bad)
        with pytest.raises(exports.StubError):
            exports.read_stub(stub)
    with pytest.raises(exports.StubError, match="missing"):
        exports.read_stub(tmp_path / "absent.pyi")


def test_a_face_name_that_is_also_its_submodule_is_refused(tmp_path, monkeypatch):
    """Importing a submodule sets the package's attribute of that name to the module, so a face
    name defined in a submodule of the same name would turn into the module once a check
    imported it. A stub that does that is refused; the real faces have none (`passed` lives in
    `course.checks.success_lines`), and stay functions after their modules are imported."""
    pkg = tmp_path / "facetest"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from course.runtime.exports import attach_stub\n"
                                     "__getattr__, __dir__, __all__ = attach_stub(__name__, "
                                     "__file__)\n")
    (pkg / "__init__.pyi").write_text("from facetest.passed import passed as passed\n")
    (pkg / "passed.py").write_text("def passed():\n    return 'the function'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        with pytest.raises(exports.StubError, match="`passed` names both"):
            importlib.import_module("facetest")
    finally:
        sys.modules.pop("facetest", None)
    importlib.import_module("course.checks.success_lines")
    from course.checks import passed

    assert callable(passed) and importlib.import_module("course.checks").passed is passed


def test_a_test_cell_import_loads_only_what_it_uses():
    """`from course.checks import check_ai_matmul` (notebook 01) imports the intensity checks,
    not the GEMM machinery, the timing, matplotlib or CuPy."""
    probe = ("import sys\nfrom course.checks import check_ai_matmul\n"
             "print(sorted(m for m in ('course.gemm.launch', 'course.perf.timing', 'matplotlib',"
             " 'cupy', 'course.checks.gemm') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env={**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


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
