"""What graded code may do: ordinary Python, minus what reaches outside the student's work.

The grader rebuilds a student's definitions from source in a fresh, locked-down process
(:mod:`course.trust.kernel_source`) and runs the tests there. This module decides which source
it accepts, applying the lists of :mod:`course.trust.policy_rules`. It is a *deny-list*: any
ordinary Python a student might write for a formula or a kernel is fine — ``isinstance``,
comprehensions, dict and set literals, f-strings, ``lambda``, ``assert``, ``try``/``except``,
helper functions, NumPy's numeric API, ``math`` — and only what could reach outside
the student's own definitions or tamper with grading is refused:

* imports other than ``math``, ``cmath``, ``numpy``, ``numba`` (and ``typing`` for hints);
* the built-ins that run or reach code by name (``exec``, ``eval``, ``compile``, ``open``,
  ``getattr``, ``setattr``, ``globals``, ``vars``, ``__import__``, ``breakpoint``, ``input`` …);
* attributes that start with ``_`` (``__class__``, ``__globals__`` …) and the handful of public
  ones that lead to frames or raw memory (``gi_frame``, ``f_globals``, ``ctypes``, ``tofile`` …);
* assigning attributes of anything but an array the function created itself;
* NumPy's file, memory-map, ctypes and testing parts, and Numba's driver internals;
* classes (they can redefine ``==``, ``<`` and ``float()`` and so pass any comparison).

A second, stricter rule applies inside ``@cuda.jit`` functions: Numba compiles those for the
GPU, and the simulator runs them as plain Python. A construct the simulator accepts but the
GPU compiler rejects (a list, a dict, an f-string, ``with`` …) would pass on a laptop and fail
on the grader's GPU, so it is refused on both, with the reason.

Every refusal raises :class:`DisallowedCodeError` with the line, what was found and what to
write instead. The same function runs in the student's notebook (:mod:`course.trust.gate`) and in
the grader, so the message a student sees is the one the grade table records.
"""

from __future__ import annotations

import ast
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass, field

from course.runtime.i18n import _
from course.trust.policy_rules import (
    ALLOWED_JIT_KEYWORDS,
    DENIED_ATTRIBUTES,
    DENIED_BUILTINS,
    KERNEL_BUILTINS,
    KERNEL_NUMPY_CALLS,
    KERNEL_SYNTAX,
    MODULE_LIKE,
    WHAT_IS_FINE,
    builtin_hint,
    import_refusal,
    qualname_refusal,
)


class DisallowedCodeError(ValueError):
    """Student code uses something graded code may not use; the message says what instead."""


# ---------------------------------------------------------------------------------------------
# The checker.


@dataclass
class _Scope:
    """Names a function (or the module) binds, and which of them are its parameters."""

    names: set[str] = field(default_factory=set)
    params: set[str] = field(default_factory=set)
    kernel: str | None = None  # the @cuda.jit function this code is compiled as part of


def _bound_names(node: ast.AST) -> set[str]:
    """Every name a statement or function binds anywhere inside it (a generous over-estimate
    of Python's scoping: its job is to tell defined names from undefined ones, and anything
    undefined still fails with NameError when it runs)."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, (ast.Store, ast.Del)):
            out.add(sub.id)
        elif isinstance(sub, ast.arg):
            out.add(sub.arg)
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef,
                              ast.ExceptHandler)) and sub.name:  # `except E:` binds no name
            out.add(sub.name)
        elif isinstance(sub, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in sub.names}
        elif isinstance(sub, (ast.MatchAs, ast.MatchStar)) and sub.name:
            out.add(sub.name)
        elif isinstance(sub, ast.MatchMapping) and sub.rest:
            out.add(sub.rest)
    return out


def _qualname(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``cuda.shared.array`` -> ``numba.cuda.shared.array`` when rooted at a module alias."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in aliases:
        return ".".join([aliases[node.id], *reversed(parts)])
    return None


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


_FIELD = string.Formatter()


def _format_reaches_attributes(template: str) -> bool:
    """True if a str.format template reads attributes or items of its arguments ({0.x})."""
    try:
        fields = [f for _lit, f, _spec, _conv in _FIELD.parse(template) if f is not None]
    except ValueError:
        return True
    return any(re.search(r"[.\[]", f) for f in fields)


class _Checker(ast.NodeVisitor):
    """Walks one top-level statement of a bundle and raises on the first refused construct."""

    def __init__(self, owner: str, aliases: dict[str, str], module_names: set[str]):
        self.owner = owner
        self.aliases = aliases  # local name -> module or module.attr it stands for
        self.module_names = module_names
        self.scopes: list[_Scope] = []

    # -- reporting -------------------------------------------------------------------------

    def fail(self, node: ast.AST, what: str, instead: str = "") -> None:
        line = getattr(node, "lineno", None)
        where = (_("{owner} (line {line})").format(owner=self.owner, line=line) if line
                 else self.owner)
        scope = self.scopes[-1] if self.scopes else None
        if scope and scope.kernel:
            message = _("{where} uses {what} inside the @cuda.jit function `{kernel}`: Numba "
                        "cannot compile that for the GPU, so it would fail on the grader's GPU "
                        "even where the simulator runs it.").format(
                where=where, what=what, kernel=scope.kernel)
            raise DisallowedCodeError(f"{message} {instead}" if instead else message)
        message = _("{where} uses {what}, which graded code may not use.").format(
            where=where, what=what)
        raise DisallowedCodeError(f"{message} {instead or _(WHAT_IS_FINE)}")

    # -- scopes ----------------------------------------------------------------------------

    def known(self, name: str) -> bool:
        import builtins

        return (any(name in s.names for s in self.scopes) or name in self.module_names
                or name in self.aliases or hasattr(builtins, name))

    def in_kernel(self) -> bool:
        return bool(self.scopes and self.scopes[-1].kernel)

    def run(self, node: ast.stmt) -> None:
        self.scopes.append(_Scope(names=_bound_names(node) if not isinstance(
            node, ast.FunctionDef) else set()))
        try:
            self.visit(node)
        finally:
            self.scopes.pop()

    # -- definitions -----------------------------------------------------------------------

    def _jit_decorator(self, deco: ast.expr) -> bool:
        target = deco.func if isinstance(deco, ast.Call) else deco
        return _qualname(target, self.aliases) == "numba.cuda.jit"

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        kernel = self.scopes[-1].kernel if self.scopes else None
        for deco in node.decorator_list:
            root = deco.func if isinstance(deco, ast.Call) else deco
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in ("cuda", "numba") and \
                    root.id not in self.aliases and not self.known(root.id):
                self.fail(deco, _("`{name}` without importing it").format(name=root.id),
                          _("Add `from numba import cuda` to your cells."))
            if not self._jit_decorator(deco):
                self.fail(deco, _("the decorator `@{decorator}`").format(
                    decorator=ast.unparse(deco)),
                    _("Only @cuda.jit (in any spelling) may decorate a graded function."))
            if isinstance(deco, ast.Call):
                for kw in deco.keywords:
                    if kw.arg not in ALLOWED_JIT_KEYWORDS:
                        self.fail(deco, f"@cuda.jit({kw.arg}=…)",
                                  _("Allowed options: {options}.").format(
                                      options=", ".join(sorted(ALLOWED_JIT_KEYWORDS))))
                self.scan_outside(deco.args + [kw.value for kw in deco.keywords])
            kernel = kernel or node.name
        args = node.args
        defaults = args.defaults + [d for d in args.kw_defaults if d is not None]
        self.scan_outside(defaults)
        notes = [a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs
                 + [args.vararg, args.kwarg] if a is not None and a.annotation is not None]
        self.scan_outside([*notes, *([node.returns] if node.returns else [])])
        params = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        params |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        scope = _Scope(names=_bound_names(node) | params, params=params, kernel=kernel)
        self.scopes.append(scope)
        try:
            for stmt in node.body:
                self.visit(stmt)
        finally:
            self.scopes.pop()

    def scan_outside(self, nodes: Iterable[ast.expr]) -> None:
        """Visit expressions evaluated outside the function body (defaults, decorators)."""
        for n in nodes:
            self.visit(n)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self.fail(node, _("an async function"), _("Use a plain `def`."))

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.fail(node, _("a class (`{name}`)").format(name=node.name),
                  _("A class can redefine ==, < and float(), so graded code uses functions and "
                    "plain values (numbers, tuples, dicts, arrays) instead."))

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.check_kernel_syntax(node)
        params = {a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
        self.scan_outside(node.args.defaults + [d for d in node.args.kw_defaults if d])
        outer = self.scopes[-1]
        self.scopes.append(_Scope(names=_bound_names(node) | params, params=params,
                                  kernel=outer.kernel))
        try:
            self.visit(node.body)
        finally:
            self.scopes.pop()

    # -- imports ---------------------------------------------------------------------------

    def visit_Import(self, node: ast.Import) -> None:
        self.check_kernel_syntax(node)
        for a in node.names:
            why = import_refusal(a.name)
            if why:
                self.fail(node, f"`import {a.name}`", why)
            self.aliases[(a.asname or a.name).split(".")[0]] = \
                a.name if a.asname else a.name.split(".")[0]

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        self.check_kernel_syntax(node)
        module = node.module or ""
        if node.level:
            self.fail(node, _("a relative import"))
        for a in node.names:
            why = import_refusal(module, a.name)
            if why:
                self.fail(node, f"`from {module} import {a.name}`", why)
            self.aliases[a.asname or a.name] = f"{module}.{a.name}"

    # -- names and attributes --------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> None:
        name = node.id
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            if name.startswith("__"):
                self.fail(node, _("the name `{name}`").format(name=name))
            return
        if name in DENIED_BUILTINS and not any(name in s.names for s in self.scopes):
            self.fail(node, f"`{name}`", builtin_hint(name))
        if name == "type":
            self.fail(node, _("`type` other than as type(x)"),
                      _("Use isinstance(x, float) to test a type."))
        if name.startswith("__"):
            self.fail(node, _("the name `{name}`").format(name=name))
        if self.in_kernel() and name in KERNEL_BUILTINS and not self.known_local(name):
            self.fail(node, f"`{name}`")
        if not self.known(name):
            self.fail(node, _("`{name}` (not defined in your answer cells)").format(name=name),
                      _("Define it (or import it) in a cell above, with `def`, `NAME = …` or "
                        "an import."))
        if self.aliases.get(name) in MODULE_LIKE and not self.known_local(name):
            self.fail(node, _("the module `{name}` as a value").format(name=name),
                      _("Use its functions directly, e.g. {name}.something(x).").format(
                          name=name))

    def known_local(self, name: str) -> bool:
        return any(name in s.names for s in self.scopes)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr.startswith("_") or node.attr in DENIED_ATTRIBUTES:
            self.fail(node, _("the attribute `.{name}`").format(name=node.attr),
                      _("Names starting with _ and a few others reach Python's internals."))
        if node.attr == "format":
            receiver = node.value
            if not (isinstance(receiver, ast.Constant) and isinstance(receiver.value, str)
                    and not _format_reaches_attributes(receiver.value)):
                self.fail(node, _("`.format` on a template that is not a plain string"),
                          _("Use an f-string: f\"n must be positive, got {n}\"."))
        qual = _qualname(node, self.aliases)
        if qual is not None and not self.known_local(_root_name(node) or ""):
            why = qualname_refusal(qual)
            if why:
                self.fail(node, f"`{ast.unparse(node)}`", why)
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                self.fail(node, _("assignment to `{target}` (a module's attribute)").format(
                    target=ast.unparse(node)))
            return
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            root = _root_name(node)
            scope = self.scopes[-1] if self.scopes else None
            local = bool(scope and root in scope.names and root not in scope.params
                         and len(self.scopes) > 1)
            if not local:
                self.fail(node, _("assignment to the attribute `{target}`").format(
                    target=ast.unparse(node)),
                    _("Graded code may set attributes only of arrays its function created "
                      "itself."))
        self.visit(node.value)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if self.in_kernel():
            qual = _qualname(func, self.aliases) if isinstance(func, (ast.Attribute, ast.Name)) \
                else None
            if qual and qual.startswith("numpy.") and \
                    qual.split(".")[1] not in KERNEL_NUMPY_CALLS:
                self.fail(node, _("`{call}(…)` (a NumPy function)").format(
                    call=ast.unparse(func)),
                    _("Use math.sqrt, math.exp … for numbers, cuda.local.array for a "
                      "per-thread array, and np.float32(x) for a type."))
        if isinstance(func, ast.Name) and func.id == "type" and not self.known_local("type"):
            if len(node.args) != 1 or node.keywords:
                self.fail(node, _("`type(...)` with more than one argument"),
                          _("Use isinstance(x, float) to test a type."))
            self.visit(node.args[0])
            return
        self.generic_visit(node)

    # -- kernels ---------------------------------------------------------------------------

    def check_kernel_syntax(self, node: ast.AST) -> None:
        if self.in_kernel() and type(node) in KERNEL_SYNTAX:
            what, instead = KERNEL_SYNTAX[type(node)]
            self.fail(node, _(what), _(instead) if instead else "")

    def generic_visit(self, node: ast.AST) -> None:
        self.check_kernel_syntax(node)
        if isinstance(node, (ast.Await, ast.AsyncFor, ast.AsyncWith)):
            self.fail(node, _("async code"), _("Use plain functions."))
        super().generic_visit(node)


# ---------------------------------------------------------------------------------------------
# Whole bundles.


def validate_module(source: str) -> None:
    """Validate a bundle: allowed imports, then definitions that pass the checks above.

    A bundle holds only imports, ``def`` and ``NAME = value`` statements (see
    :func:`course.trust.kernel_source.bundle_from_cells`); anything else is refused too.
    """
    tree = ast.parse(source)
    aliases: dict[str, str] = {}
    # A function body runs when it is called, so it may use names defined after it.
    module_names: set[str] = set()
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            module_names.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                module_names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
    for stmt in tree.body:
        owner = _owner(stmt)
        checker = _Checker(owner, aliases, module_names)
        if isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef)):
            checker.run(stmt)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
                raise DisallowedCodeError(_("{owner} (line {line}) has no value").format(
                    owner=owner, line=stmt.lineno))
            checker.run(stmt)
        elif isinstance(stmt, ast.ClassDef):
            checker.run(stmt)
        else:
            raise DisallowedCodeError(_("line {line}: `{code}` is not a definition").format(
                line=stmt.lineno, code=ast.unparse(stmt)[:50]))


def _owner(stmt: ast.stmt) -> str:
    if isinstance(stmt, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
        return f"`{stmt.name}`"
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        return f"`{', '.join(names)}`" if names else _("an assignment")
    return _("an import")
