"""Python answers as tokens that survive what a copier changes, read by Python's own ``ast``.

What is dropped: comments and formatting (the syntax tree has neither), docstrings, ``print``
calls, ``pass``, dead branches (``if False:``) and whatever follows a ``return`` or ``raise``.
What is made the same: every name the student chose (one token, ``V``; the course's and the
language's names stay), ``for`` and the ``while`` loop a copier turns it into, ``if/else`` that
assigns one target and the conditional expression, equal numbers however spelled (``0``, ``0.0``,
``float32(0)``), and the order of a run of simple statements (sorted, so independent statements
moved around read the same). Each token keeps the line it came from, for the report.
"""

from __future__ import annotations

import ast
import builtins

#: names that are the course's or the language's vocabulary, not the student's choice
KEPT_NAMES = frozenset(dir(builtins)) | {
    "cuda", "np", "numpy", "numba", "math", "float32", "float64", "int32", "sm_limits",
    "critical_ai", "predict_blocks_per_sm", "predict_occupancy"}
#: calls that only convert a literal: ``float32(0)`` is the number 0
_CASTS = frozenset({"float32", "float64", "float", "int", "int32"})
_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr)

Token = tuple[str, int]


def _is_print(stmt: ast.stmt) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
            and isinstance(stmt.value.func, ast.Name) and stmt.value.func.id == "print")


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
        and isinstance(stmt.value.value, str)


def _always_false(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and not test.value


class _Canonical(ast.NodeTransformer):
    """Rewrites a tree into the one form of each equivalent spelling listed above."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        func = node.func
        name = func.id if isinstance(func, ast.Name) else \
            func.attr if isinstance(func, ast.Attribute) else ""
        if name in _CASTS and len(node.args) == 1 and not node.keywords \
                and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, int | float):
            return ast.copy_location(ast.Constant(float(node.args[0].value)), node)
        if name == "range":  # range(n) is range(0, n, 1)
            args = list(node.args)
            if len(args) == 1:
                args = [ast.Constant(0), args[0]]
            if len(args) == 2:
                args.append(ast.Constant(1))
            node.args = args
        return node

    def visit_If(self, node: ast.If) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        if _always_false(node.test):
            return node.orelse
        if not node.body and not node.orelse:  # it only printed
            return []
        body, orelse = node.body, node.orelse
        if len(body) == 1 and len(orelse) == 1 and all(
                isinstance(s, ast.Return) and s.value is not None for s in (*body, *orelse)):
            a_ret, b_ret = body[0], orelse[0]  # ``if c: return a`` / ``else: return b``
            assert isinstance(a_ret, ast.Return) and isinstance(b_ret, ast.Return)
            assert a_ret.value is not None and b_ret.value is not None
            value = ast.IfExp(test=node.test, body=a_ret.value, orelse=b_ret.value)
            return ast.copy_location(ast.Return(value=value), node)
        if len(body) == 1 and len(orelse) == 1 and all(
                isinstance(s, ast.Assign) and len(s.targets) == 1 for s in (*body, *orelse)):
            a, b = body[0], orelse[0]
            assert isinstance(a, ast.Assign) and isinstance(b, ast.Assign)
            if ast.dump(a.targets[0]) == ast.dump(b.targets[0]):
                value = ast.IfExp(test=node.test, body=a.value, orelse=b.value)
                return ast.copy_location(ast.Assign(targets=a.targets, value=value), node)
        return node

    def visit_While(self, node: ast.While) -> ast.AST | list[ast.stmt]:
        self.generic_visit(node)
        return [] if _always_false(node.test) else node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        last = node.body[-1] if node.body else None
        if isinstance(last, ast.Return) and last.value is None:  # the end returns anyway
            node.body = node.body[:-1]
        return node

    def _block(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in stmts:
            if _is_print(stmt) or isinstance(stmt, ast.Pass):
                continue
            last = out[-1] if out else None
            if isinstance(stmt, ast.Return) and stmt.value is not None \
                    and isinstance(last, ast.If) and not last.orelse and len(last.body) == 1 \
                    and isinstance(last.body[0], ast.Return) and last.body[0].value is not None:
                value = ast.IfExp(test=last.test, body=last.body[0].value, orelse=stmt.value)
                out[-1] = ast.copy_location(ast.Return(value=value), last)  # an early return
                break
            out.append(stmt)
            if isinstance(stmt, ast.Return | ast.Raise | ast.Continue | ast.Break):
                break  # what follows never runs
        return _while_to_for(out)

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and stmts and isinstance(stmts[0], ast.stmt):
                if field == "body" and _is_docstring(stmts[0]) and isinstance(
                        node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module):
                    stmts = stmts[1:]
                setattr(node, field, stmts)
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list) and (not stmts or isinstance(stmts[0], ast.stmt)):
                setattr(node, field, self._block(stmts))
        return node


def _while_to_for(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """``i = a`` / ``while i < b: …; i += s`` becomes ``for i in range(a, b, s): …``."""
    out: list[ast.stmt] = []
    for stmt in stmts:
        prev = out[-1] if out else None
        if isinstance(stmt, ast.While) and isinstance(prev, ast.Assign) \
                and len(prev.targets) == 1 and isinstance(prev.targets[0], ast.Name) \
                and isinstance(stmt.test, ast.Compare) and len(stmt.test.ops) == 1 \
                and isinstance(stmt.test.ops[0], ast.Lt) \
                and isinstance(stmt.test.left, ast.Name) \
                and stmt.test.left.id == prev.targets[0].id and stmt.body \
                and isinstance(stmt.body[-1], ast.AugAssign) \
                and isinstance(stmt.body[-1].op, ast.Add) \
                and isinstance(stmt.body[-1].target, ast.Name) \
                and stmt.body[-1].target.id == prev.targets[0].id and not stmt.orelse:
            rng = ast.Call(func=ast.Name("range", ast.Load()), keywords=[],
                           args=[prev.value, stmt.test.comparators[0], stmt.body[-1].value])
            out[-1] = ast.copy_location(ast.For(target=prev.targets[0], iter=rng,
                                                body=stmt.body[:-1], orelse=[]), prev)
            continue
        out.append(stmt)
    return out


def _number(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float | complex):
        return f"C:{type(value).__name__}"  # strings: what they say is the student's
    return f"N:{complex(value)!r}"


def _emit(node: ast.AST, line: int, out: list[Token], strings: list[tuple[str, int]]) -> None:
    """Pre-order tokens of ``node``: its kind, and what identifies it beyond its kind."""
    line = getattr(node, "lineno", line)
    kind = type(node).__name__
    if isinstance(node, ast.Name):
        out.append((f"Name:{node.id if node.id in KEPT_NAMES else 'V'}", line))
        return
    if isinstance(node, ast.arg):
        out.append(("arg", line))
        return
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str) and len(node.value) > 40:
            strings.append((node.value, line))  # a CUDA C source, read by its own grammar
        out.append((_number(node.value), line))
        return
    if isinstance(node, ast.Attribute):
        out.append((f"Attr:{node.attr}", line))
        _emit(node.value, line, out, strings)
        return
    if isinstance(node, ast.BinOp | ast.AugAssign | ast.UnaryOp | ast.BoolOp):
        kind += ":" + type(node.op).__name__
    if isinstance(node, ast.Compare):
        kind += ":" + ",".join(type(op).__name__ for op in node.ops)
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        kind = "def"  # the function's name is the release's, or the student's own helper's
    if isinstance(node, ast.expr_context | ast.operator | ast.cmpop | ast.unaryop | ast.boolop):
        return
    out.append((kind, line))
    for _, value in ast.iter_fields(node):
        if isinstance(value, list):
            blocks = [v for v in value if isinstance(v, ast.AST)]
            stmts = [v for v in blocks if isinstance(v, ast.stmt)]
            if blocks and len(stmts) == len(blocks):
                _emit_block(stmts, line, out, strings)
            else:
                for v in blocks:
                    _emit(v, line, out, strings)
        elif isinstance(value, ast.AST):
            _emit(value, line, out, strings)


def _emit_block(stmts: list[ast.stmt], line: int, out: list[Token],
                strings: list[tuple[str, int]]) -> None:
    """A block's statements, each run of simple statements in a fixed (sorted) order."""
    run: list[list[Token]] = []

    def flush() -> None:
        for tokens in sorted(run, key=lambda ts: [t for t, _ in ts]):
            out.extend(tokens)
        run.clear()

    for stmt in stmts:
        tokens: list[Token] = []
        _emit(stmt, line, tokens, strings)
        if isinstance(stmt, _SIMPLE):
            run.append(tokens)
        else:
            flush()
            out.extend(tokens)
    flush()


def tokens(source: str) -> tuple[list[Token], list[tuple[str, int]]] | None:
    """The normalised tokens of a Python cell and its long string constants (CUDA C sources,
    with the line each starts on), or None when the cell is not Python that parses."""
    lines = [("" if ln.lstrip().startswith(("%", "!")) else ln) for ln in source.split("\n")]
    try:
        tree = ast.parse("\n".join(lines))
    except (SyntaxError, ValueError, RecursionError):
        return None
    tree = _Canonical().visit(tree)
    out: list[Token] = []
    strings: list[tuple[str, int]] = []
    _emit_block(list(tree.body), 1, out, strings)
    return out, strings
