"""CUDA C answers as tokens that survive what a copier changes, read by tree-sitter's CUDA
grammar (``tree-sitter-cuda``), never by patterns over the text.

Dropped: comments, formatting, ``#define`` lines (a copier's ``#define TS TILE`` renames the
macro: every name the student chose, macros included, is one token ``V``; CUDA's own names —
``threadIdx``, ``__syncthreads`` … — stay), ``printf`` statements, ``if (0)`` branches and
``#if 0`` blocks, parentheses. Made the same: ``for (init; cond; step) body`` and
``init; while (cond) { body; step; }``; ``++i``, ``i++`` and ``i += 1``; an ``if/else`` that
assigns one target and the conditional expression; ``0``, ``0.0f`` and ``0.f``; and the order
of a run of declarations and expression statements (sorted, as in :mod:`.python_code`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser


@functools.cache
def _parser() -> Parser:
    """tree-sitter's CUDA parser, built when the first CUDA C answer is read (not at import:
    every instructor command imports the similarity command)."""
    import tree_sitter_cuda  # heavy third-party modules: only when comparing
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_cuda.language()))


#: CUDA's and C's own names, kept as themselves; every other identifier is the student's
KEPT_NAMES = frozenset({
    "threadIdx", "blockIdx", "blockDim", "gridDim", "__syncthreads", "__syncwarp", "atomicAdd",
    "min", "max", "fminf", "fmaxf", "fmaf", "__fmaf_rn", "printf", "warpSize"})
_DROPPED = frozenset({"comment", "preproc_def", "preproc_function_def", "preproc_include",
                      "preproc_call"})
_SKIPPED = frozenset({"comment", "preproc_def", "preproc_function_def", "preproc_include",
                      "parenthesized_expression", "compound_statement", "condition_clause",
                      "argument_list", "subscript_argument_list", "translation_unit",
                      "linkage_specification", "string_literal"})
_SIMPLE = frozenset({"declaration", "expression_statement"})

Token = tuple[str, int]


def _number(text: str) -> str:
    body = text.rstrip("fFlLuU") if not text.lower().startswith("0x") else text
    try:
        value = float(int(body, 0)) if body.lower().startswith("0x") else float(body)
    except ValueError:
        return f"N:{text}"
    return f"N:{value!r}"


def _is_printf(node: Node) -> bool:
    call = node.named_children[0] if node.named_children else None
    return bool(call is not None and call.type == "call_expression"
                and call.child_by_field_name("function") is not None
                and _text(call.child_by_field_name("function")) == "printf")


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text else ""


def _false(node: Node | None) -> bool:
    while node is not None and node.type in ("condition_clause", "parenthesized_expression"):
        node = node.named_children[0] if node.named_children else None
    return node is not None and (
        (node.type == "number_literal" and _number(_text(node)) == "N:0.0")
        or node.type == "false")


def _increment(node: Node) -> bool:
    """``i++``, ``++i``, ``i += 1``: one step up."""
    if node.type == "update_expression":
        return "++" in _text(node)
    op = node.child_by_field_name("operator")
    right = node.child_by_field_name("right")
    return bool(node.type == "assignment_expression" and op is not None
                and _text(op) == "+=" and right is not None
                and right.type == "number_literal" and _number(_text(right)) == "N:1.0")


def _steps(stmt: Node, cond: Node | None) -> bool:
    """Whether ``stmt`` is a ``while`` loop's step: ``i++``, ``i += s`` or ``i -= s`` of a name
    the loop's condition reads (a ``for`` loop's update, moved into the body)."""
    if stmt.type != "expression_statement" or not stmt.named_children or cond is None:
        return False
    expr = stmt.named_children[0]
    if expr.type == "update_expression":
        target = expr.named_children[0] if expr.named_children else None
    elif expr.type == "assignment_expression" and _text(
            expr.child_by_field_name("operator")) in ("+=", "-="):
        target = expr.child_by_field_name("left")
    else:
        return False
    names = set(_text(cond).replace("(", " ").replace(")", " ").split())
    return target is not None and target.type == "identifier" and _text(target) in names


def _assign_parts(stmt: Node | None) -> tuple[Node, Node] | None:
    """(target, value) of ``target = value;``, through one pair of braces."""
    while stmt is not None and stmt.type in ("compound_statement", "else_clause") \
            and len(stmt.named_children) == 1:
        stmt = stmt.named_children[0]
    if stmt is None or stmt.type != "expression_statement" or not stmt.named_children:
        return None
    expr = stmt.named_children[0]
    op = expr.child_by_field_name("operator")
    if expr.type != "assignment_expression" or op is None or _text(op) != "=":
        return None
    left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
    return (left, right) if left is not None and right is not None else None


class _Emitter:
    def __init__(self, line_offset: int) -> None:
        self.offset = line_offset

    def line(self, node: Node) -> int:
        return node.start_point[0] + self.offset

    def emit(self, node: Node) -> Iterator[Token]:
        kind = node.type
        if kind in _DROPPED:  # #pragma unroll, a macro defined: nothing the kernel computes
            return
        if kind == "expression_statement" and _is_printf(node):
            return
        if kind in ("if_statement", "while_statement", "preproc_if") \
                and _false(node.child_by_field_name("condition")):
            alt = node.child_by_field_name("alternative")
            if alt is not None:
                yield from self.emit(alt)
            return
        if kind == "if_statement":
            yield from self._if(node)
            return
        if kind in ("for_statement", "while_statement", "do_statement"):
            yield from self._for(node)
            return
        if kind in ("identifier", "type_identifier"):
            name = _text(node)
            yield (f"id:{name if name in KEPT_NAMES else 'V'}", self.line(node))
            return
        if kind == "number_literal":
            yield (_number(_text(node)), self.line(node))
            return
        if _increment(node):
            yield ("INC", self.line(node))
            yield from self.emit(node.named_children[0])
            return
        if kind not in _SKIPPED:
            op = node.child_by_field_name("operator")
            label = kind + (":" + _text(op) if op is not None else "")
            if node.child_count == 0:
                label += ":" + _text(node)
            yield (label, self.line(node))
        if kind == "string_literal":
            return
        yield from self.block(node.named_children)

    def block(self, children: list[Node]) -> Iterator[Token]:
        """A block's statements, each run of simple statements (declarations, expression
        statements, an ``if/else`` that reads as one assignment) in a fixed, sorted order."""
        run: list[list[Token]] = []
        for child in children:
            init = child.child_by_field_name("initializer") \
                if child.type == "for_statement" else None
            if init is not None:  # ``for (int i = 0; …`` is ``int i = 0; while (…``
                run.append(list(self.emit(init)))
            tokens = list(self._for(child) if child.type == "for_statement"
                          else self.emit(child))
            if not tokens:  # a comment, a #define, dead code: no break in the run
                continue
            if tokens[0][0] in _SIMPLE:
                run.append(tokens)
                continue
            for done in sorted(run, key=lambda ts: [t for t, _ in ts]):
                yield from done
            run.clear()
            yield from tokens
        for done in sorted(run, key=lambda ts: [t for t, _ in ts]):
            yield from done

    def _if(self, node: Node) -> Iterator[Token]:
        cond = node.child_by_field_name("condition")
        then, alt = node.child_by_field_name("consequence"), node.child_by_field_name(
            "alternative")
        a, b = _assign_parts(then), _assign_parts(alt)
        if cond is not None and a and b and _text(a[0]) == _text(b[0]):
            line = self.line(node)  # the conditional expression's tokens, in its order
            yield ("expression_statement", line)
            yield ("assignment_expression:=", line)
            yield from self.emit(a[0])
            yield ("conditional_expression", line)
            yield from self.emit(cond)
            yield from self.emit(a[1])
            yield from self.emit(b[1])
            return
        body = list(self.block([c for c in (then, alt) if c is not None]))
        if body:  # an if that only printed is gone with its printf
            yield ("if_statement", self.line(node))
            if cond is not None:
                yield from self.emit(cond)
            yield from body

    def _for(self, node: Node) -> Iterator[Token]:
        """Any loop as one form: the condition, the body, the step last (a ``for``'s
        initialiser is emitted before it, by :meth:`block`)."""
        cond = node.child_by_field_name("condition")
        body = node.child_by_field_name("body")
        children = ([] if body is None else body.named_children
                    if body.type == "compound_statement" else [body])
        step = node.child_by_field_name("update")
        if node.type == "while_statement" and children and _steps(children[-1], cond):
            step, children = children[-1].named_children[0], children[:-1]
        yield ("loop", self.line(node))
        if cond is not None:
            yield from self.emit(cond)
        yield from self.block(children)
        if step is not None:
            yield ("expression_statement", self.line(step))
            yield from self.emit(step)


def tokens(source: str, first_line: int = 1) -> list[Token]:
    """The normalised tokens of a CUDA C source; lines count from ``first_line``."""
    tree = _parser().parse(source.encode("utf-8", "replace"))
    return list(_Emitter(first_line).emit(tree.root_node))
