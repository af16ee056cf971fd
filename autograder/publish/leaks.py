"""The leak check: does a student distribution (its folder, its wheel) hold any answer?

It checks by *content*, so a renamed or copied file is caught as surely as one left in place.
From the instructor's repository it collects what students must never get:

* every meaningful line of every solution — in a code cell the lines between ``BEGIN SOLUTION``
  and ``END SOLUTION``, in a written-answer cell the whole answer — and the stored outputs of
  solution cells;
* every line of every hidden-test block;
* every line of the sample class (``sample_class/``: correct answers in sixteen styles), of the
  grader (``autograder/``) and of the instructor's tests (``tests/``);
* the gradebook: any SQLite database, nbgrader's grade export, the course's ``gradebook.db``.

A line is *meaningful* when, with its whitespace collapsed, it has at least
:data:`MIN_CHARS` characters and is not one of nbgrader's markers or stubs; a line that the
student's material legitimately holds too (the starter code and prose of the source notebooks
outside solutions and hidden tests, and the few reviewed lines of ``templates/shared_lines.txt``
that a solution and the course package's own code share, each with its reason; for the grader,
the sample class and the tests also the ``course`` package, which they share boilerplate with,
but for the answer rules of ``autograder/answers/``, and the student README's templates) is not
a secret; nor is an import or a decorator. Then every text line of every file of the
distribution — every cell and stored output of a notebook, every line of the package, inside
the wheel's zip too — is looked up among the secrets, and every solution cell of a distributed
notebook must have no stored output. A compiled file (``.pyc``, ``.so``) is refused: it cannot
be checked by content.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from autograder.answers.table import HIDDEN_BLOCK
from autograder.runner.cells import cell_text, nbgrader_meta

#: the shortest line (whitespace collapsed) that counts as a fingerprint: long enough that
#: ``return out`` or ``else:`` never does, short enough that ``flops = 2 * M * N * K`` does.
MIN_CHARS = 12
#: nbgrader's markers and the stubs it puts in place of a solution (in every release).
MARKERS = re.compile(r"^((BEGIN|END) (SOLUTION|HIDDEN TESTS)|YOUR CODE HERE|"
                     r"raise NotImplementedError\(\)|YOUR ANSWER HERE)")
#: lines too plain to be anyone's answer, however long: imports and decorators.
PLAIN = re.compile(r"^(import |from \S+ import |@\w)")
#: what may stand around a pasted line: comment and quote marks, list bullets, a trailing comma.
_WRAPPING = "#/>*-`'\" ,;"
SQLITE_HEADER = b"SQLite format 3\x00"
#: nbgrader export's header (grades.csv) holds both.
EXPORT_COLUMNS = ("student_id", "max_score")
COMPILED = (".pyc", ".pyo", ".so", ".pyd")
SOLUTION_BLOCK = re.compile(r"^[ \t]*### BEGIN SOLUTION[^\n]*\n(.*?)^[ \t]*### END SOLUTION",
                            re.M | re.S)
TEMPLATES = Path(__file__).with_name("templates")
#: the reviewed lines that solutions and the course package both hold (each with its reason).
SHARED_LINES = TEMPLATES / "shared_lines.txt"


def shared_lines() -> dict[str, str]:
    """The reviewed overlaps: line -> why it is no answer."""
    out: dict[str, str] = {}
    for raw in SHARED_LINES.read_text(encoding="utf-8").splitlines():
        if raw.strip() and not raw.startswith("#"):
            line, _, why = raw.partition("\t")
            out[normalise(line)] = why.strip()
    return out


def normalise(line: str) -> str:
    """A line as it is compared: whitespace collapsed, and unwrapped of what pasting it as a
    comment, a string or a list item puts around it (``# …``, ``"…",``, ``- …``)."""
    return " ".join(line.split()).strip(_WRAPPING)


def meaningful(line: str) -> str | None:
    """The line as a fingerprint (whitespace collapsed), or None if it is too plain to be one."""
    text = normalise(line)
    if len(text) < MIN_CHARS or MARKERS.match(text) or PLAIN.match(text):
        return None
    return text


def _lines(text: str) -> Iterator[str]:
    for line in text.splitlines():
        found = meaningful(line)
        if found:
            yield found


@dataclass(frozen=True)
class Leak:
    """One answer found in the distribution: what it is and where it was found."""

    what: str
    where: str
    line: str = ""

    def __str__(self) -> str:
        return f"{self.where}: {self.what}" + (f"\n    {self.line[:160]}" if self.line else "")


@dataclass
class Secrets:
    """What a student distribution must not hold, by content."""

    lines: dict[str, str] = field(default_factory=dict)  # fingerprint -> what it is
    blobs: dict[str, str] = field(default_factory=dict)  # sha256 of a whole file -> what

    def add(self, text: str, what: str, public: set[str]) -> None:
        for line in _lines(text):
            if line not in public:
                self.lines.setdefault(line, what)


def _notebook(path: Path) -> dict:
    data: dict = json.loads(path.read_text(encoding="utf-8"))
    return data


def _output_texts(cell: dict) -> Iterator[str]:
    for out in cell.get("outputs", []) or []:
        if "text" in out:
            yield "".join(out["text"]) if isinstance(out["text"], list) else str(out["text"])
        for mime, value in (out.get("data") or {}).items():
            if mime.startswith("text/") or mime.endswith("json"):
                yield "".join(value) if isinstance(value, list) else str(value)
        if out.get("traceback"):
            yield "\n".join(out["traceback"])


def _split_source_cell(cell: dict) -> tuple[list[str], list[str]]:
    """(the secret parts, the public rest) of one source-notebook cell."""
    src = cell_text(cell)
    meta = nbgrader_meta(cell)
    secret: list[str] = []
    if meta.get("solution"):
        blocks = SOLUTION_BLOCK.findall(src)
        if blocks:
            secret += blocks
            public = SOLUTION_BLOCK.sub("", src)
        else:  # a written answer, or a solution cell nbgrader replaces whole: all of it
            secret.append(src)
            public = ""
    else:
        public = src
    hidden = HIDDEN_BLOCK.findall(public)
    secret += hidden
    return secret, [HIDDEN_BLOCK.sub("", public)]


def _py_files(folder: Path) -> Iterator[Path]:
    for path in sorted(folder.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix in (
                ".py", ".pyi", ".txt", ".toml", ".json", ".md", ".cfg", ".sh", ".h", ".cpp"):
            yield path


def collect(root: Path) -> Secrets:
    """Everything of the instructor's repository at ``root`` that no student may get."""
    source = root / "source" / "week4"
    public: set[str] = set()
    parts: list[tuple[str, str]] = []  # (secret text, what)
    for path in sorted(source.glob("*.ipynb")):
        for cell in _notebook(path)["cells"]:
            meta = nbgrader_meta(cell)
            secret, rest = _split_source_cell(cell)
            where = f"{path.stem}/{meta.get('grade_id') or cell.get('id', '?')}"
            for text in secret:
                kind = "hidden test" if "HIDDEN TESTS" in text else "solution"
                parts.append((text, f"{kind} of {where}"))
            for text in rest:
                public.update(_lines(text))
            if meta.get("solution"):
                for text in _output_texts(cell):
                    parts.append((text, f"stored output of the solution cell {where}"))
    secrets = Secrets()
    reviewed = public | set(shared_lines())
    for text, what in parts:
        secrets.add(text, what, reviewed)
    # The grader, the sample class and the tests share boilerplate with the course package
    # and the README's templates: only what is theirs alone is secret. Not so the answer
    # rules (autograder/answers/): a line of theirs in the course package is a leak unless it
    # is reviewed (shared_lines.txt), so rules copied into `course` are caught.
    for path in _py_files(TEMPLATES):
        reviewed |= set(_lines(path.read_text(encoding="utf-8", errors="replace")))
    shared = set(reviewed)
    for path in _py_files(root / "course"):
        shared.update(_lines(path.read_text(encoding="utf-8", errors="replace")))
    for folder, what in (("sample_class", "the sample class"), ("autograder", "the grader"),
                         ("tests", "the instructor's tests")):
        for path in _py_files(root / folder):
            if path.is_relative_to(TEMPLATES):
                continue
            rules = path.is_relative_to(root / "autograder" / "answers")
            secrets.add(path.read_text(encoding="utf-8", errors="replace"),
                        f"{what} ({path.relative_to(root)})", reviewed if rules else shared)
    gradebook = root / "gradebook.db"
    if gradebook.is_file():
        secrets.blobs[hashlib.sha256(gradebook.read_bytes()).hexdigest()] = "the gradebook"
    return secrets


def _scan_text(text: str, where: str, secrets: Secrets) -> Iterator[Leak]:
    for line in _lines(text):
        what = secrets.lines.get(line)
        if what:
            yield Leak(what, where, line)
    first = text.split("\n", 1)[0]
    if all(column in first for column in EXPORT_COLUMNS):
        yield Leak("a grade export (nbgrader's grades.csv)", where, first)


def _scan_notebook(data: dict, where: str, secrets: Secrets) -> Iterator[Leak]:
    for i, cell in enumerate(data.get("cells", [])):
        at = f"{where}, cell {i} ({nbgrader_meta(cell).get('grade_id') or cell.get('id', '?')})"
        yield from _scan_text(cell_text(cell), at, secrets)
        for text in _output_texts(cell):
            yield from _scan_text(text, f"{at}, stored output", secrets)
        if nbgrader_meta(cell).get("solution") and cell.get("outputs"):
            yield Leak("a stored output of a solution cell", at)


def scan_file(name: str, data: bytes, secrets: Secrets) -> Iterator[Leak]:
    """The leaks in one file of the distribution (``name`` says where it is)."""
    if name.endswith(COMPILED):
        yield Leak("a compiled file (it cannot be checked by content)", name)
        return
    if data.startswith(SQLITE_HEADER):
        yield Leak("an SQLite database (a gradebook?)", name)
        return
    what = secrets.blobs.get(hashlib.sha256(data).hexdigest())
    if what:
        yield Leak(what, name)
        return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return  # an image, a compiled catalog: no text lines to hold an answer
    if name.endswith(".ipynb"):
        try:
            notebook = json.loads(text)
        except json.JSONDecodeError:
            notebook = None
        if isinstance(notebook, dict):
            yield from _scan_notebook(notebook, name, secrets)
            return
    yield from _scan_text(text, name, secrets)


def scan_tree(folder: Path, secrets: Secrets) -> list[Leak]:
    """Every leak in the files under ``folder`` (a ``.git`` folder is not looked into)."""
    leaks: list[Leak] = []
    for path in sorted(folder.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(folder).parts:
            leaks += scan_file(str(path.relative_to(folder)), path.read_bytes(), secrets)
    return leaks


def scan_wheel(wheel: Path, secrets: Secrets, packages: Iterable[str] = ("course",)
               ) -> list[Leak]:
    """Every leak among the wheel's files, and every file outside ``packages`` and its
    metadata (a wheel of the student distribution installs ``course`` and nothing else)."""
    leaks: list[Leak] = []
    allowed = tuple(f"{p}/" for p in packages)
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            name = f"{wheel.name}!{info.filename}"
            top = info.filename.split("/", 1)[0]
            if not (info.filename.startswith(allowed) or top.endswith(".dist-info")):
                leaks.append(Leak("a file outside the course package", name))
            leaks += scan_file(name, zf.read(info), secrets)
    return leaks
