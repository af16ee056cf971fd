"""Each student's answers, notebook by notebook, and what every student was given.

An answer is a cell nbgrader marks as the student's to write (``solution``): both tracks'
kernels, the intensity and roofline functions, notebook 6's predictions, the written answer.
A cell whose nbgrader metadata an editor dropped is still found, by the first line of the
release's cell (``def ai_matmul(…``, ``GEMM_TILED_CUDA = r\"\"\"``) it keeps. The instructor's
solution is the source notebook's answer cells, nbgrader's solution markers taken out. A
notebook is known by its name (``Copy of …`` included) or, renamed past recognising, by its
cells (:mod:`autograder.handin.recognise`); the Korean release's code cells are the English
ones, so a Korean submission is compared with everyone else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.handin.recognise import Release, by_name
from autograder.release.translation import LANGUAGES, release_dir
from autograder.runner.cells import cell_text, nbgrader_meta
from autograder.runner.names import ASSIGNMENT

#: the name of the instructor's solution in the report and ``similarity.csv``
SOLUTION = "solution"
#: a notebook larger than this is not read (a handed-in file may be anything)
MAX_BYTES = 20_000_000
_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
#: a fenced code block of a markdown cell (finding it, not reading the code: that is by syntax)
_FENCED = re.compile(r"^```[a-z]*\n(.*?)^```", re.M | re.S)


@dataclass(frozen=True)
class Answer:
    """One answer cell: its ``grade_id``, ``"code"`` or ``"markdown"``, and its text."""

    grade_id: str
    kind: str
    text: str


def _solution_cells(nb: dict[str, Any]) -> list[Answer]:
    cells = nb.get("cells")
    return [Answer(str(nbgrader_meta(c).get("grade_id", "")),
                   "markdown" if c.get("cell_type") == "markdown" else "code", cell_text(c))
            for c in (cells if isinstance(cells, list) else []) if isinstance(c, dict)
            and nbgrader_meta(c).get("solution")]


def _signature(text: str) -> str | None:
    """The first line of a release answer cell that names it (a ``def`` or an assignment)."""
    for line in text.split("\n"):
        line = line.strip()
        if line.startswith("def ") or " = r\"\"\"" in line:
            return line
    return None


@dataclass
class Given:
    """What every student of one notebook was given: its answer cells as released, in every
    language (the starter code and the prompt, which are nobody's own work)."""

    notebook: str
    cells: dict[str, list[Answer]]  # grade_id -> that cell in each release
    #: the notebook's own text, every release: its other code cells, the code blocks of its
    #: markdown (kind "code"), and its markdown (kind "markdown")
    text: list[Answer] = field(default_factory=list)

    def identify(self, cell: dict[str, Any]) -> str | None:
        """The grade_id of the answer ``cell`` is, by its metadata or its first line."""
        gid = nbgrader_meta(cell).get("grade_id")
        if gid in self.cells:
            return str(gid)
        text = cell_text(cell)
        for gid, versions in self.cells.items():
            sig = _signature(versions[0].text)
            if sig and sig in text:
                return gid
        return None


def given(root: Path, notebook: str) -> Given:
    """The answer cells of ``notebook`` in the English release and every translated one."""
    cells: dict[str, list[Answer]] = {}
    text: list[Answer] = []
    for folder in (root / "release" / ASSIGNMENT,
                   *(release_dir(root, lang) for lang in LANGUAGES)):
        path = folder / f"{notebook}.ipynb"
        if not path.exists():
            continue
        nb = json.loads(path.read_text(encoding="utf-8"))
        for answer in _solution_cells(nb):
            cells.setdefault(answer.grade_id, []).append(answer)
        for cell in nb.get("cells", []):
            if nbgrader_meta(cell).get("solution"):
                continue
            source = cell_text(cell)
            if cell.get("cell_type") == "code":
                text.append(Answer("", "code", source))
            elif cell.get("cell_type") == "markdown":
                text.append(Answer("", "markdown", source))
                text.extend(Answer("", "code", block) for block in _FENCED.findall(source))
    return Given(notebook, cells, text)


def released_notebooks(root: Path) -> list[str]:
    """The notebooks of the release that have answer cells, by name."""
    folder = root / "release" / ASSIGNMENT
    return sorted(p.stem for p in folder.glob("*.ipynb")
                  if _solution_cells(json.loads(p.read_text(encoding="utf-8"))))


def solution(root: Path, notebook: str) -> list[Answer]:
    """The instructor's answers: the source notebook's answer cells without the markers."""
    path = root / "source" / ASSIGNMENT / f"{notebook}.ipynb"
    if not path.exists():
        return []
    out = []
    for answer in _solution_cells(json.loads(path.read_text(encoding="utf-8"))):
        text = "\n".join(line for line in answer.text.split("\n")
                         if line.strip() not in _MARKERS)
        out.append(Answer(answer.grade_id, answer.kind, text))
    return out


def student_answers(nb: dict[str, Any], given_cells: Given) -> list[Answer]:
    """A handed-in notebook's answers (the first cell for each grade_id: a duplicate is the
    student's copy of their own cell)."""
    seen: dict[str, Answer] = {}
    cells = nb.get("cells")
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown"):
            continue
        gid = given_cells.identify(cell)
        if gid and gid not in seen:
            seen[gid] = Answer(gid, str(cell["cell_type"]), cell_text(cell))
    return list(seen.values())


def handed_in(root: Path, submitted: Path, notebooks: list[str]
              ) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(student, notebook, notebook JSON) for every notebook in ``submitted/<id>/week4``."""
    release = Release.load(root / "release" / ASSIGNMENT)
    for folder in sorted(p for p in submitted.iterdir() if p.is_dir()):
        files = folder / ASSIGNMENT
        if not files.is_dir():
            continue
        for path in sorted(files.iterdir()):
            if not path.is_file() or path.stat().st_size > MAX_BYTES:
                continue
            try:
                nb = json.loads(path.read_text(encoding="utf-8", errors="replace"))
            except ValueError:
                continue
            if not isinstance(nb, dict):
                continue
            name = by_name(path.name, release.names) or release.by_content(nb)
            if name in notebooks:
                yield folder.name, name, nb
