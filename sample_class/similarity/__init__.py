"""The similarity class: students who wrote their answers themselves and students who copied,
to measure the similarity report's threshold (``autograder/similarity/``, docs/similarity.md).

Not part of the graded sample class (``sample_class.students``): these students are never
graded; the similarity tests and ``python -m sample_class.similarity`` stage them into a
``submitted/`` folder of their own. Each file in ``students/`` is a student in the sample
class's format (``NOTEBOOKS``, ``BASE``, ``ANSWERS``, ``LANGUAGE``), and a copier also says
whom they copied, notebook by notebook: ``COPIED = {notebook: "honest_…" or "solution"}``.

``honest_*`` wrote each answer independently, in their own style. ``copier_*`` took a classmate's
or the course's solution and changed it as copiers do: names, order, comments, formatting,
``for``/``while``, ``if``/ternary, dead code and debug prints, a renamed TILE macro, literals.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from pathlib import Path
from types import ModuleType

from autograder.runner.names import ASSIGNMENT
from sample_class import build_notebook

SOLUTION = "solution"


def class_students() -> dict[str, ModuleType]:
    """Every student of the similarity class, by id (not called `students`: importing the
    subpackage `students` rebinds that name on this package)."""
    pkg = importlib.import_module(f"{__name__}.students")
    return {m.name: importlib.import_module(f"{pkg.__name__}.{m.name}")
            for m in pkgutil.iter_modules(pkg.__path__)}


def copied_pairs() -> set[tuple[str, str]]:
    """(copier, source) for every pair that must be flagged; the source may be ``solution``."""
    return {(sid, source) for sid, spec in class_students().items()
            for source in getattr(spec, "COPIED", {}).values()}


def honest_pairs() -> set[tuple[str, str]]:
    """Every pair no one copied within: two honest students, or an honest one and the
    solution, or a copier and someone they did not copy."""
    everyone = sorted(class_students()) + [SOLUTION]
    copied = copied_pairs()
    return {(a, b) for i, a in enumerate(everyone) for b in everyone[i + 1:]
            if (a, b) not in copied and (b, a) not in copied
            and not _share_source(a, b)}


def _share_source(a: str, b: str) -> bool:
    """Two copiers of the same source: alike through it, neither honest nor a copy of the
    other (left out of both groups)."""
    specs = class_students()
    sources_a = set(getattr(specs.get(a), "COPIED", {}).values())
    sources_b = set(getattr(specs.get(b), "COPIED", {}).values())
    return bool(sources_a & sources_b)


def stage(root: Path, submitted: Path) -> list[str]:
    """Write every student's notebooks under ``submitted/<id>/week4`` (built from the release
    of the student's language, as the sample class's are); returns the ids."""
    ids = []
    for sid, spec in sorted(class_students().items()):
        folder = submitted / sid / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        for notebook in spec.NOTEBOOKS:
            nb = build_notebook(root, notebook, spec)
            (folder / f"{notebook}.ipynb").write_text(
                json.dumps(nb, indent=1, ensure_ascii=False), encoding="utf-8")
        ids.append(sid)
    return ids
