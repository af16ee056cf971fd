"""Turn a student's kernel (or formula) into plain source that a fresh process can rebuild.

Why: a check that runs in the student's own Python process can be fooled (the student's code
can replace NumPy's comparisons, the checker, or the timer). So graded checks run elsewhere,
from *source*: the definitions a test needs and nothing else, checked by the code policy of
:mod:`course.trust.code_policy` (ordinary Python is fine; imports beyond math/numpy/numba, file
access, introspection and attribute patching are not). The same rules apply to a student's own
runs (:mod:`course.trust.gate`), so a definition the grader would refuse is refused, with the same
message, the first time a test cell uses it.

Two ways in, one way out (:class:`SourceBundle`):

* :func:`bundle_from_cells` reads notebook cells (the grader: it has the submitted notebook).
* :func:`bundle_from_objects` reads live functions (a notebook check that must run elsewhere).
"""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
import types
from dataclasses import dataclass
from typing import Any

from course.trust.code_policy import DisallowedCodeError, validate_module
from course.trust.policy_rules import ALLOWED_MODULES


@dataclass(frozen=True)
class SourceBundle:
    """Plain module source defining ``names`` (and what they need), already validated."""

    source: str
    names: tuple[str, ...]

    def load(self) -> dict[str, Any]:
        """Execute the bundle in a fresh namespace and return it."""
        namespace: dict[str, Any] = {"__name__": "student_bundle"}
        filename = f"<student definitions {abs(hash(self.source)):x}>"
        # Registered so tracebacks and the simulator can show source lines.
        linecache.cache[filename] = (len(self.source), None, self.source.splitlines(True),
                                     filename)
        code = compile(self.source, filename, "exec")
        exec(code, namespace)  # noqa: S102 - validated source, see module docstring
        return namespace

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "names": list(self.names)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SourceBundle:
        bundle = cls(source=str(data["source"]), names=tuple(data["names"]))
        validate_module(bundle.source)  # never trust a bundle that crossed a process boundary
        return bundle


# ---------------------------------------------------------------------------------------------
# Bundles from notebook cells (the grader's way).


def free_names(node: ast.AST) -> set[str]:
    """Names a statement loads that it does not bind itself."""
    loads: set[str] = set()
    stores: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (stores if isinstance(sub.ctx, ast.Store) else loads).add(sub.id)
        elif isinstance(sub, (ast.FunctionDef, ast.ClassDef)):
            stores.add(sub.name)
        elif isinstance(sub, ast.arg):
            stores.add(sub.arg)
        elif isinstance(sub, ast.ExceptHandler) and sub.name:
            stores.add(sub.name)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            for a in sub.names:
                stores.add((a.asname or a.name).split(".")[0])
    if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
        stores.discard(node.name)
    return loads - stores


_SYNTAX_ERRORS: list[str] = []


def _parse_cell(text: str) -> list[ast.stmt]:
    """Parse a code cell, ignoring IPython magics and shell lines; unparsable cells count as
    empty (they raise at run time in the notebook too) and are remembered for the message."""
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        return ast.parse("\n".join(lines)).body
    except SyntaxError as exc:
        first = next((ln.strip() for ln in lines if ln.strip()), "")
        _SYNTAX_ERRORS.append(f"a cell starting `{first[:40]}` has a syntax error "
                              f"(line {exc.lineno}: {exc.msg})")
        return []


def referenced_names(code: str) -> set[str]:
    """Free names of a (test) cell: what it expects earlier cells to have defined."""
    free: set[str] = set()
    bound: set[str] = set()
    for stmt in _parse_cell(code):
        free |= free_names(stmt) - bound
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                bound.add(sub.id)
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).split(".")[0] for a in sub.names}
            elif isinstance(sub, (ast.FunctionDef, ast.ExceptHandler)) and sub.name:
                bound.add(sub.name)  # (`except E:` binds no name)
    return free


@dataclass
class _Definition:
    name: str
    node: ast.stmt | None
    problem: str | None = None


def _single_import(stmt: ast.Import | ast.ImportFrom, alias: ast.alias) -> ast.stmt:
    if isinstance(stmt, ast.ImportFrom):
        return ast.ImportFrom(module=stmt.module, names=[alias], level=stmt.level)
    return ast.Import(names=[alias])


def _definitions(cells: list[str]) -> tuple[dict[str, _Definition], dict[str, ast.stmt]]:
    """Top-level bindings of the cells, last one wins, as notebook execution would leave them.

    ``def`` and ``NAME = value`` (also ``a, b = …``) bind names the grader can rebuild; a class
    is remembered as a problem, so that asking for it gives a clear refusal. Other statements
    (loops, prints, plots, kernel launches) are effects, not definitions, and are left out.
    """
    defs: dict[str, _Definition] = {}
    imports: dict[str, ast.stmt] = {}
    for text in cells:
        for stmt in _parse_cell(text):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
                    continue
                for a in stmt.names:
                    name = (a.asname or a.name).split(".")[0]
                    imports[name] = _single_import(stmt, a)
                    defs.pop(name, None)
            elif isinstance(stmt, ast.FunctionDef):
                defs[stmt.name] = _Definition(stmt.name, stmt)
                imports.pop(stmt.name, None)
            elif isinstance(stmt, (ast.ClassDef, ast.AsyncFunctionDef)):
                kind = "a class" if isinstance(stmt, ast.ClassDef) else "an async function"
                defs[stmt.name] = _Definition(
                    stmt.name, None,
                    f"`{stmt.name}` is {kind}; graded code must define it with `def` (a class "
                    "can redefine ==, < and float(), so it could pass any comparison)")
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
                    continue
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                plain = all(isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Starred))
                            for t in targets for n in ast.walk(t)
                            if not isinstance(n, (ast.Load, ast.Store, ast.expr_context)))
                for t in targets:
                    for sub in ast.walk(t):
                        if isinstance(sub, ast.Name):
                            defs[sub.id] = _Definition(
                                sub.id, stmt if plain else None,
                                None if plain else f"`{sub.id}` is assigned through an "
                                "attribute or an index; graded code must bind it by name")
                            imports.pop(sub.id, None)
    return defs, imports


def bundle_from_cells(cells: list[str], wanted: set[str] | list[str]) -> SourceBundle:
    """Collect, from notebook cells in order, the definitions that ``wanted`` names need.

    Only top-level ``def``, ``NAME = value`` and allowed imports count; other statements
    (prints, demo calls, plots) are left out, because a check needs definitions, not effects.
    Raises :class:`DisallowedCodeError` if a needed definition breaks the rules, and
    ``NameError`` if a wanted name is never defined.
    """
    _SYNTAX_ERRORS.clear()
    defs, imports = _definitions(cells)
    order: list[str] = []
    needed_imports: dict[str, ast.stmt] = {}
    todo = list(wanted)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in imports:
            needed_imports[name] = imports[name]
            continue
        d = defs.get(name)
        if d is None:
            if name in wanted:
                why = f"; {_SYNTAX_ERRORS[0]}" if _SYNTAX_ERRORS else ""
                raise NameError(f"`{name}` is not defined: run (and fill in) its answer cell{why}")
            continue  # a builtin or an undefined name: validation reports the latter
        if d.node is None:
            raise DisallowedCodeError(d.problem or f"`{name}` cannot be rebuilt by the grader")
        order.append(name)
        todo.extend(free_names(d.node))
    chosen = list({id(d.node): d.node for d in defs.values()
                   if d.name in order and d.node is not None}.values())  # notebook order
    module = ast.Module(body=list(needed_imports.values()) + chosen, type_ignores=[])
    source = ast.unparse(ast.fix_missing_locations(module)) + "\n"
    validate_module(source)
    return SourceBundle(source=source, names=tuple(sorted(set(wanted))))


def bundle_for_test_cell(cells_before: list[str], test_source: str) -> SourceBundle:
    """The bundle a test cell gets: the definitions, from the cells above it, of the names it
    uses and does not bind itself (builtins excluded). One function for the grader
    (``autograder/trusted.py``) and the student's notebook (:mod:`course.trust.gate`), so both
    refuse the same code with the same message."""
    import builtins

    wanted = {n for n in referenced_names(test_source) if not hasattr(builtins, n)}
    return bundle_from_cells(cells_before, wanted)


# ---------------------------------------------------------------------------------------------
# Bundles from live objects (a notebook check that must run in another process).


def _python_function(obj: Any) -> tuple[types.FunctionType, str | None]:
    """The Python function behind a value, and 'kernel'/'device' if it was @cuda.jit-ed."""
    cls = type(obj)
    if cls.__module__.startswith("numba") and hasattr(obj, "py_func"):
        device = getattr(obj, "_device", None)
        if device is None:
            device = getattr(obj, "targetoptions", {}).get("device", False)
        return obj.py_func, "device" if device else "kernel"
    if isinstance(obj, types.FunctionType):
        return obj, None
    raise DisallowedCodeError(f"{obj!r:.60} is a {cls.__name__}, not a function or a kernel")


def _import_line(name: str, value: Any) -> str | None:
    """The import statement that binds ``name`` to ``value``, if it comes from an allowed
    module (``import numpy as np``, ``from numba import float32``, ``from math import sqrt``)."""
    import importlib
    import sys

    modname = getattr(value, "__name__", "")
    if isinstance(value, types.ModuleType):
        if modname in ALLOWED_MODULES:
            return f"import {modname} as {name}" if name != modname else f"import {modname}"
        return None
    for module in sorted(ALLOWED_MODULES):
        if module not in sys.modules:
            continue
        mod = importlib.import_module(module)
        for attr in dict.fromkeys([name, getattr(value, "__name__", None)]):
            if isinstance(attr, str) and not attr.startswith("_") and \
                    getattr(mod, attr, None) is value:
                return (f"from {module} import {attr}" if attr == name
                        else f"from {module} import {attr} as {name}")
    return None


def bundle_from_objects(objects: dict[str, Any]) -> SourceBundle:
    """Rebuild plain source for live functions/kernels and what they reference.

    Used when a notebook check must run in a fresh process (e.g. counting memory traffic on
    the simulator while the notebook runs on a GPU).
    """
    chunks: list[str] = []
    imports: list[str] = ["from numba import cuda"]
    done: set[str] = set()

    def add(name: str, value: Any) -> None:
        if name in done:
            return
        done.add(name)
        line = _import_line(name, value)
        if line is not None:
            imports.append(line)
            return
        if isinstance(value, (bool, int, float, str)) or (
            isinstance(value, tuple) and all(isinstance(v, (int, float)) for v in value)
        ):
            chunks.append(f"{name} = {value!r}")
            return
        fn, jit = _python_function(value)
        try:
            src = textwrap.dedent(inspect.getsource(fn))
        except (OSError, TypeError) as exc:
            raise DisallowedCodeError(
                f"could not read the source of `{name}` ({exc}); define it in a notebook cell"
            ) from exc
        node = ast.parse(src).body[0]
        if not isinstance(node, ast.FunctionDef):
            raise DisallowedCodeError(f"`{name}` must be defined with `def`")
        for free in sorted(free_names(node)):
            if free in fn.__globals__:
                add(free, fn.__globals__[free])
        if jit is not None:
            node.decorator_list = []
            chunks.append(ast.unparse(node))
            flag = ", device=True" if jit == "device" else ""
            chunks.append(f"{name} = cuda.jit({node.name}{flag})")
        else:
            node.name = name if node.name == getattr(fn, "__name__", name) else node.name
            chunks.append(ast.unparse(node))
            if node.name != name:
                chunks.append(f"{name} = {node.name}")

    for name, value in objects.items():
        add(name, value)
    source = "\n".join(dict.fromkeys(imports)) + "\n" + "\n\n".join(chunks) + "\n"
    validate_module(source)
    return SourceBundle(source=source, names=tuple(sorted(objects)))
