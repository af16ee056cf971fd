"""A synthetic class of any size for the similarity report's scale (docs/similarity.md):
``python -m sample_class.similarity.synthetic [STUDENTS] [FOLDER]`` stages STUDENTS students
(default 300) × every released notebook into FOLDER/submitted and times the report there.

Each synthetic student takes each notebook's answers from one of the similarity class's honest
students or the solution, then makes them their own: every name renamed, and statements of
their own (random names and numbers) put between the statements, about one in three — so the
class's answers share the common idioms a real class shares but are not copies. One student in
thirty copies another synthetic student's notebook outright (renamed), as a real class might.
"""

from __future__ import annotations

import ast
import json
import random
import shutil
import sys
import time
from pathlib import Path
from types import SimpleNamespace

from autograder.runner.names import ASSIGNMENT
from autograder.similarity import answers as similarity_answers
from autograder.similarity import command
from sample_class import build_notebook, solutions
from sample_class.similarity import class_students

ROOT = Path(__file__).resolve().parents[2]


class _Own(ast.NodeTransformer):
    """Renames every local name and adds statements of the student's own."""

    KEEP = {"cuda", "np", "float32", "range", "min", "max", "len", "int", "float", "abs",
            "dict", "zip", "sorted", "isinstance", "ValueError", "sm_limits", "math",
            "critical_ai", "predict_blocks_per_sm", "True", "False", "None", "print", "str",
            "repr", "list", "bool", "set", "sum", "any", "all", "enumerate", "divmod", "round"}

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.names: dict[str, str] = {}

    def _new(self, name: str) -> str:
        if name in self.KEEP:
            return name
        return self.names.setdefault(name, f"{name[:2]}_{self.rng.randrange(10**6)}")

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self._new(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self._new(node.arg)
        return node

    def _mix(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for stmt in body:
            out.append(stmt)
            if self.rng.random() < 0.35 and not isinstance(stmt, (ast.Return, ast.Raise)):
                name = f"t_{self.rng.randrange(10**6)}"
                value = self.rng.choice([self.rng.randrange(2, 999), self.rng.random()])
                out.append(ast.parse(f"{name} = {value!r} * {self.rng.randrange(1, 9)}").body[0])
        return out

    def generic_visit(self, node: ast.AST) -> ast.AST:
        super().generic_visit(node)
        for field in ("body", "orelse"):
            body = getattr(node, field, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                setattr(node, field, self._mix(body))
        return node


def _own_cuda(text: str, rng: random.Random) -> str:
    """CUDA C made one's own: declarations of the student's own between the statements."""
    lines = []
    for line in text.split("\n"):
        lines.append(line)
        if line.rstrip().endswith((";", "{")) and rng.random() < 0.35:
            lines.append(f"    int q{rng.randrange(10**6)} = {rng.randrange(2, 999)};")
    return "\n".join(lines)


def make_own(source: str, rng: random.Random) -> str:
    """One answer cell made a synthetic student's own (prose: words of their own between)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        words = source.split()
        return " ".join(w + (f" w{rng.randrange(10**6)}" if rng.random() < 0.3 else "")
                        for w in words)
    tree = _Own(rng).visit(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and "__global__" in node.value:
            node.value = _own_cuda(node.value, rng)
    return ast.unparse(tree)


def _rename_only(source: str, rng: random.Random) -> str:
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    own = _Own(rng)
    own._mix = lambda body: body  # type: ignore[method-assign]
    return ast.unparse(own.visit(tree))


def stage(course: Path, count: int, seed: int = 4) -> list[str]:
    """Stage ``count`` synthetic students in ``course``/submitted."""
    rng = random.Random(seed)
    released = sorted(p.stem for p in (ROOT / "release" / ASSIGNMENT).glob("*.ipynb"))
    honest = [s for sid, s in sorted(class_students().items()) if sid.startswith("honest_")]
    with_answers = similarity_answers.released_notebooks(ROOT)
    ids = [f"student_{n:03d}" for n in range(count)]
    made: dict[tuple[str, str], dict[str, str]] = {}
    for sid in ids:
        folder = course / "submitted" / sid / ASSIGNMENT
        folder.mkdir(parents=True)
        for notebook in released:
            answers: dict[str, str] = {}
            if notebook in with_answers:
                bases = [s.ANSWERS[notebook] for s in honest if notebook in s.ANSWERS]
                base = dict(solutions(ROOT, notebook))
                for gid, text in rng.choice(bases + [base]).items():
                    base[gid] = text
                if made and rng.random() < 1 / 30:  # a copy of a classmate's notebook
                    source = rng.choice([k for k in made if k[1] == notebook] or [None])
                    if source:
                        base = {g: _rename_only(t, rng) for g, t in made[source].items()}
                        answers = base
                answers = answers or {gid: make_own(text, rng) for gid, text in base.items()}
                made[sid, notebook] = answers
            spec = SimpleNamespace(BASE="release", ANSWERS={notebook: answers})
            (folder / f"{notebook}.ipynb").write_text(
                json.dumps(build_notebook(ROOT, notebook, spec)), encoding="utf-8")
    return ids


def main(argv: list[str]) -> int:
    count = int(argv[0]) if argv else 300
    course = Path(argv[1]) if len(argv) > 1 else ROOT / "build" / "similarity-scale"
    shutil.rmtree(course, ignore_errors=True)
    course.mkdir(parents=True)
    for name in ("release", "release-ko", "source"):
        (course / name).symlink_to(ROOT / name)
    print(f"staging {count} synthetic students...", flush=True)
    stage(course, count)
    start = time.perf_counter()
    status = command.main(course)
    print(f"{count} students x {len(list((ROOT / 'release' / ASSIGNMENT).glob('*.ipynb')))} "
          f"notebooks: the report took {time.perf_counter() - start:.1f} s")
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
