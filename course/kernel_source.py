"""Turn a student's kernel (or formula) into plain source that a fresh process can rebuild.

Why: a check that runs in the student's own Python process can be fooled (the student's code
can replace NumPy's comparisons, the checker, or the timer). So graded checks run elsewhere,
from *source*: the definitions a test needs and nothing else, after a whitelist check that
they only use what a GEMM kernel or an arithmetic formula needs — array indexing, arithmetic,
loops, ``cuda.*`` intrinsics, ``math`` — and no imports, attribute assignment, file access or
introspection. The same rules apply to a student's own runs, so a kernel that would be
refused at grading time is refused (with the reason) the first time its check runs.

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


class DisallowedCodeError(ValueError):
    """Student code uses something a graded kernel or formula may not use."""


# ---------------------------------------------------------------------------------------------
# What graded code may use.

ALLOWED_BUILTINS = frozenset(
    {"range", "min", "max", "abs", "int", "float", "bool", "len", "round", "divmod", "pow",
     "print", "ValueError", "TypeError", "IndexError", "NotImplementedError", "True", "False",
     "None"}
)
#: import statements that may appear, as (module, name or None). Aliases are free.
ALLOWED_MODULES = frozenset({"math", "numpy", "numba", "numba.cuda"})
ALLOWED_FROM_IMPORTS = {
    "numba": frozenset({"cuda", "float32", "float64", "int32", "int64", "uint32", "uint64"}),
    "numpy": frozenset({"float32", "float64", "int32", "int64", "uint32", "uint64"}),
    "math": None,  # any public name
}
#: dotted names reachable through a module alias (``cuda.shared.array`` …).
_CUDA = [
    "jit", "grid", "gridsize", "threadIdx", "blockIdx", "blockDim", "gridDim", "shared",
    "local", "const", "syncthreads", "laneid", "warpsize", "fma", "selp", "shared.array",
    "local.array", "const.array_like",
]
_NUMPY = ["float32", "float64", "int32", "int64", "uint32", "uint64", "pi", "e", "inf", "nan",
          "sqrt", "exp", "log", "minimum", "maximum", "where", "asarray"]
ALLOWED_QUALNAMES = frozenset(
    [f"numba.cuda.{n}" for n in _CUDA]
    + ["numba.cuda", "numba.float32", "numba.float64", "numba.int32", "numba.int64",
       "numba.uint32", "numba.uint64"]
    + [f"numpy.{n}" for n in _NUMPY]
)
ANNOTATION_NAMES = frozenset({"int", "float", "bool", "str", "None"})
#: attributes allowed on values (arrays, dim3 triples).
ALLOWED_VALUE_ATTRS = frozenset({"x", "y", "z", "shape", "size", "ndim", "dtype"})
ALLOWED_JIT_KEYWORDS = frozenset({"device", "fastmath", "lineinfo", "max_registers", "opt",
                                  "inline", "launch_bounds"})

_ALLOWED_NODES = (
    ast.FunctionDef, ast.arguments, ast.arg, ast.Return, ast.Assign, ast.AugAssign, ast.AnnAssign,
    ast.For, ast.While, ast.If, ast.Break, ast.Continue, ast.Pass, ast.Expr, ast.Raise, ast.Assert,
    ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Call, ast.keyword, ast.Name,
    ast.Attribute, ast.Subscript, ast.Slice, ast.Tuple, ast.Constant, ast.JoinedStr,
    ast.FormattedValue, ast.Load, ast.Store, ast.operator, ast.unaryop, ast.boolop, ast.cmpop,
    ast.expr_context,
)


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
# Validation.


def _where(node: ast.AST, owner: str) -> str:
    line = getattr(node, "lineno", None)
    return f"{owner} (line {line})" if line else owner


def _qualname(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``cuda.shared.array`` -> ``numba.cuda.shared.array`` when rooted at a module alias."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in aliases:
        return ".".join([aliases[node.id], *reversed(parts)])
    return None


def _qualname_allowed(qual: str) -> bool:
    if qual in ALLOWED_QUALNAMES:
        return True
    head, _, rest = qual.partition(".")
    if head == "math":
        return bool(rest) and "." not in rest and not rest.startswith("_")
    # numba.cuda.threadIdx.x and friends: a whitelisted object, then value attributes.
    return any(
        qual.startswith(allowed + ".")
        and all(t in ALLOWED_VALUE_ATTRS for t in qual[len(allowed) + 1:].split("."))
        for allowed in ALLOWED_QUALNAMES
    )


class _FunctionChecker(ast.NodeVisitor):
    """Checks one top-level definition against the whitelist."""

    def __init__(self, owner: str, aliases: dict[str, str], globals_: set[str]):
        self.owner = owner
        self.aliases = aliases
        self.globals = globals_
        self.locals: set[str] = set()

    def fail(self, node: ast.AST, what: str) -> None:
        raise DisallowedCodeError(
            f"{_where(node, self.owner)} uses {what}, which graded code may not use. "
            "Kernels and formulas may use arithmetic, loops, if, array indexing, "
            "cuda.* (grid, threadIdx, shared.array, syncthreads …), math.* and range/min/max."
        )

    def generic_visit(self, node: ast.AST) -> None:
        if not isinstance(node, _ALLOWED_NODES):
            self.fail(node, f"`{type(node).__name__}` ({ast.unparse(node)[:40]!r})"
                      if isinstance(node, (ast.expr, ast.stmt)) else type(node).__name__)
        super().generic_visit(node)

    def check_function(self, node: ast.FunctionDef) -> None:
        for deco in node.decorator_list:
            self.check_decorator(deco)
        saved = self.locals
        self.locals = set(saved)
        args = node.args
        if args.vararg or args.kwarg:
            self.fail(node, "*args/**kwargs")
        for a in args.posonlyargs + args.args + args.kwonlyargs:
            self.locals.add(a.arg)
            self.check_annotation(a.annotation)
        self.check_annotation(node.returns)
        for default in args.defaults + [d for d in args.kw_defaults if d is not None]:
            self.visit(default)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                self.locals.add(sub.id)
            elif isinstance(sub, ast.FunctionDef) and sub is not node:
                self.locals.add(sub.name)
        for stmt in node.body:
            self.visit(stmt)
        self.locals = saved

    def check_annotation(self, note: ast.expr | None) -> None:
        """Type hints may name simple types only (they could otherwise run code)."""
        if note is None or isinstance(note, ast.Constant) or (
            isinstance(note, ast.Name) and note.id in ANNOTATION_NAMES
        ):
            return
        self.fail(note, f"the type annotation `{ast.unparse(note)}` (use int, float, bool, str)")

    def check_decorator(self, deco: ast.expr) -> None:
        target = deco.func if isinstance(deco, ast.Call) else deco
        root = target
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and root.id in ("cuda", "numba") and \
                root.id not in self.aliases:
            self.fail(deco, f"`{root.id}` without importing it (add `from numba import cuda` "
                      "to your cells)")
        if _qualname(target, self.aliases) != "numba.cuda.jit":
            self.fail(deco, f"the decorator `@{ast.unparse(deco)}` (only @cuda.jit is allowed)")
        if isinstance(deco, ast.Call):
            for arg in deco.args:
                if not isinstance(arg, ast.Constant):
                    self.fail(deco, f"a non-constant @cuda.jit argument `{ast.unparse(arg)}`")
            for kw in deco.keywords:
                if kw.arg not in ALLOWED_JIT_KEYWORDS:
                    self.fail(deco, f"@cuda.jit({kw.arg}=…)")
                self.visit(kw.value)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.check_function(node)

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if isinstance(node.ctx, ast.Store):
            if name.startswith("__"):
                self.fail(node, f"the name `{name}`")
            return
        if name in self.locals or name in self.globals or name in ALLOWED_BUILTINS:
            return
        if name in self.aliases:
            if self.aliases[name] not in ALLOWED_MODULES:
                return  # an imported value such as float32 or sqrt
            self.fail(node, f"the module `{name}` as a value (use its functions, e.g. cuda.grid)")
        self.fail(node, f"`{name}` (not defined in your answer cells)")

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_"):
            self.fail(node, f"the attribute `.{node.attr}`")
        qual = _qualname(node, self.aliases)
        if qual is not None:
            if not _qualname_allowed(qual):
                self.fail(node, f"`{ast.unparse(node)}`")
            return  # the module alias itself is fine as the root of an allowed name
        if isinstance(node.ctx, ast.Store):
            self.fail(node, f"assignment to the attribute `{ast.unparse(node)}`")
        if node.attr not in ALLOWED_VALUE_ATTRS:
            self.fail(node, f"the attribute `.{node.attr}`")
        self.visit(node.value)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and _qualname(func, self.aliases) is None:
            self.fail(node, f"the method call `{ast.unparse(func)}(…)`")
        self.generic_visit(node)


def _import_aliases(node: ast.Import | ast.ImportFrom) -> dict[str, str]:
    """Map names bound by an allowed import to what they are; raise for anything else."""
    bound: dict[str, str] = {}
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.name not in ALLOWED_MODULES:
                raise DisallowedCodeError(f"`import {a.name}` is not allowed in graded code")
            if a.asname is None and "." in a.name:
                bound[a.name.split(".")[0]] = a.name.split(".")[0]
            else:
                bound[a.asname or a.name] = a.name
        return bound
    module = node.module or ""
    allowed = ALLOWED_FROM_IMPORTS.get(module, frozenset())
    for a in node.names:
        public = not a.name.startswith("_") and a.name != "*"
        if node.level or not public or (allowed is not None and a.name not in allowed):
            raise DisallowedCodeError(
                f"`from {module} import {a.name}` is not allowed in graded code"
            )
        bound[a.asname or a.name] = f"{module}.{a.name}"
    return bound


def validate_module(source: str) -> None:
    """Validate a whole bundle: imports, then definitions that use only what came before."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    defined: set[str] = set()
    # A function body runs when it is called, so it may use names defined after it.
    top_level = {t.id for st in tree.body if isinstance(st, (ast.Assign, ast.AnnAssign))
                 for t in (st.targets if isinstance(st, ast.Assign) else [st.target])
                 if isinstance(t, ast.Name)}
    top_level |= {st.name for st in tree.body if isinstance(st, ast.FunctionDef)}
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            aliases.update(_import_aliases(stmt))
        elif isinstance(stmt, ast.FunctionDef):
            defined.add(stmt.name)
            _FunctionChecker(f"`{stmt.name}`", aliases, top_level).check_function(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            if len(targets) != 1 or not isinstance(targets[0], ast.Name):
                raise DisallowedCodeError(f"line {stmt.lineno}: only `NAME = value` is allowed")
            name = targets[0].id
            checker = _FunctionChecker(f"`{name}`", aliases, set(defined))
            if isinstance(stmt, ast.AnnAssign):
                checker.check_annotation(stmt.annotation)
                if stmt.value is None:
                    raise DisallowedCodeError(f"line {stmt.lineno}: `{name}` has no value")
            checker.visit(stmt.value)
            defined.add(name)
        else:
            raise DisallowedCodeError(
                f"line {stmt.lineno}: `{ast.unparse(stmt)[:50]}` is not a definition"
            )


# ---------------------------------------------------------------------------------------------
# Bundles from notebook cells (the grader's way).


def _free_names(node: ast.AST) -> set[str]:
    """Names a statement loads that it does not bind itself."""
    loads, stores = set(), set()
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
        free |= _free_names(stmt) - bound
        for sub in ast.walk(stmt):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                bound.add(sub.id)
            elif isinstance(sub, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).split(".")[0] for a in sub.names}
            elif isinstance(sub, ast.FunctionDef) or (
                isinstance(sub, ast.ExceptHandler) and sub.name
            ):
                bound.add(sub.name)
    return free


@dataclass
class _Definition:
    name: str
    node: ast.stmt | None
    problem: str | None = None


def _definitions(cells: list[str]) -> tuple[dict[str, _Definition], dict[str, ast.stmt]]:
    """Top-level bindings of the cells, last one wins, as notebook execution would leave them."""
    defs: dict[str, _Definition] = {}
    imports: dict[str, ast.stmt] = {}
    for text in cells:
        for stmt in _parse_cell(text):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for a in stmt.names:
                    name = (a.asname or a.name).split(".")[0]
                    single = type(stmt)(names=[a], **({"module": stmt.module, "level": stmt.level}
                                                      if isinstance(stmt, ast.ImportFrom) else {}))
                    imports[name] = single
                    defs.pop(name, None)
            elif isinstance(stmt, ast.FunctionDef):
                defs[stmt.name] = _Definition(stmt.name, stmt)
                imports.pop(stmt.name, None)
            elif isinstance(stmt, (ast.ClassDef, ast.AsyncFunctionDef)):
                defs[stmt.name] = _Definition(stmt.name, None, f"`{stmt.name}` is a class")
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for t in targets:
                    for sub in ast.walk(t):
                        if isinstance(sub, ast.Name):
                            ok = len(targets) == 1 and isinstance(t, ast.Name)
                            defs[sub.id] = _Definition(
                                sub.id, stmt if ok else None,
                                None if ok else f"`{sub.id}` is assigned by unpacking")
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
            raise DisallowedCodeError(f"{d.problem}; graded code must define it with `def`")
        order.append(name)
        todo.extend(_free_names(d.node))
    chosen = [defs[n].node for n in defs if n in order]  # keep notebook order
    module = ast.Module(body=list(needed_imports.values()) + chosen, type_ignores=[])
    source = ast.unparse(ast.fix_missing_locations(module)) + "\n"
    validate_module(source)
    return SourceBundle(source=source, names=tuple(sorted(set(wanted))))


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


def _import_line(name: str, value: types.ModuleType | Any) -> str | None:
    modname = getattr(value, "__name__", "")
    if isinstance(value, types.ModuleType) and modname in ALLOWED_MODULES:
        return f"import {modname} as {name}" if name != modname else f"import {modname}"
    import numba

    for tname in ALLOWED_FROM_IMPORTS["numba"] - {"cuda"}:
        if value is getattr(numba, tname):
            return f"from numba import {tname} as {name}"
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
        for free in sorted(_free_names(node)):
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
