"""Which release notebook a handed-in file is: by its name, then by what it holds.

nbgrader grades ``submitted/<student>/week4/<release name>.ipynb`` and nothing else, but
files reach the instructor renamed: Colab's "Save a copy in Drive" gives
``Copy of 03_tiled_gemm.ipynb``, a browser that downloads twice gives ``03_tiled_gemm (1).ipynb``,
some save ``03_tiled_gemm.ipynb.txt``, Windows writes ``03_tiled_gemm - Copy.ipynb`` and
capitals, Canvas adds ``-1`` to a re-upload, and students rename files.

:func:`by_name` strips those marks and compares, ignoring case. When the name says nothing,
:func:`by_content` looks at the cells: nbgrader's ``grade_id`` s, the cells' ids (nbformat's
``id``, or Colab's copy in ``metadata.id``) and the text of the cells students may not edit —
only what belongs to *one* release notebook counts (every notebook opens with the same setup
cell), and the best match must beat the next best, or the file is left unmatched.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autograder.grading.restore import cell_ids, cell_text, nbgrader_meta, normalised

#: the extensions a notebook arrives with: ``.ipynb``, and ``.ipynb.txt`` / ``.json`` from a
#: browser or an LMS that did not know the type.
_SUFFIXES = re.compile(r"(\.ipynb)?(\.txt|\.json)?$", re.I)
#: marks that copies and downloads add to the name, outermost first (repeated until none left).
_MARKS = [
    re.compile(r"^copy of\s+", re.I),           # Colab / Google Drive
    re.compile(r"\s*\(\d+\)$"),                 # a browser's second download
    re.compile(r"\s*-\s*copy(\s*\(\d+\))?$", re.I),  # Windows Explorer
    re.compile(r"-\d+$"),                       # Canvas: a re-upload of the same name
    re.compile(r"\s*copy$", re.I),              # macOS Finder ("X copy")
]


def looks_like_notebook(name: str) -> bool:
    """True for a file name a notebook arrives under (``.ipynb``, ``.ipynb.txt``, ``.json``)."""
    lower = name.lower()
    return lower.endswith((".ipynb", ".ipynb.txt", ".ipynb.json"))


def stem(name: str) -> str:
    """The name without its notebook suffixes and the marks copies add, lower case."""
    base = _SUFFIXES.sub("", Path(name).name).strip()
    changed = True
    while changed:
        changed = False
        for mark in _MARKS:
            new = mark.sub("", base).strip()
            if new != base and new:
                base, changed = new, True
    return base.lower()


def by_name(name: str, released: list[str]) -> str | None:
    """The release notebook (its name without ``.ipynb``) that ``name`` is a copy of, or None."""
    if not looks_like_notebook(name):
        return None
    wanted = stem(name)
    for notebook in released:
        if notebook.lower() == wanted:
            return notebook
    return None


def _keys(nb: dict[str, Any], locked_only: bool) -> set[str]:
    """What identifies a notebook's cells: grade ids, cell ids, the text of locked cells."""
    keys: set[str] = set()
    for cell in nb.get("cells", []):
        if not isinstance(cell, dict):
            continue
        grader = nbgrader_meta(cell)
        if grader.get("grade_id"):
            keys.add(f"grade_id:{grader['grade_id']}")
        keys |= {f"id:{cid}" for cid in cell_ids(cell)}
        if locked_only and not grader.get("locked"):
            continue
        text = normalised(cell_text(cell))
        if len(text) >= 40:  # short cells ("## Part 2") say nothing about which notebook
            keys.add(f"text:{text}")
    return keys


@dataclass
class Release:
    """The release notebooks of the assignment and what distinguishes each from the others."""

    names: list[str]
    fingerprints: dict[str, set[str]]

    @classmethod
    def load(cls, folder: Path) -> Release:
        """Read ``release/<assignment>``; an absent or empty folder is an error that says so."""
        paths = sorted(folder.glob("*.ipynb"))
        if not paths:
            raise FileNotFoundError(f"no release notebooks in {folder}: build the release "
                                    "first (`make release`)")
        keys = {p.stem: _keys(json.loads(p.read_text()), locked_only=True) for p in paths}
        fingerprints = {}
        for name, own in keys.items():
            others = set().union(*(k for n, k in keys.items() if n != name))
            fingerprints[name] = own - others
        return cls([p.stem for p in paths], fingerprints)

    def by_content(self, nb: dict[str, Any]) -> str | None:
        """The release notebook whose own cells this notebook holds most of, or None when none
        or two equally."""
        keys = _keys(nb, locked_only=False)
        scores = sorted(((len(keys & fp), name) for name, fp in self.fingerprints.items()),
                        reverse=True)
        if not scores or scores[0][0] == 0:
            return None
        if len(scores) > 1 and scores[1][0] == scores[0][0]:
            return None
        return scores[0][1]


class NotANotebook(ValueError):
    """A file that cannot be graded; the message says why, in words, and ``kind`` which case:
    ``"not_json"`` (not a notebook at all), ``"too_large"`` or ``"unmatched"`` (a notebook
    of no notebook of the assignment)."""

    def __init__(self, reason: str, kind: str) -> None:
        super().__init__(reason)
        self.kind = kind


def read_notebook(path: Path, limit_bytes: int) -> dict[str, Any]:
    """Parse ``path`` as a notebook, refusing files over ``limit_bytes`` unread."""
    size = path.stat().st_size
    if size > limit_bytes:
        raise NotANotebook(f"too large ({size / 2**20:.0f} MB; the limit is "
                           f"{limit_bytes / 2**20:.0f} MB, COURSE_HANDIN_MAX_MB)", "too_large")
    try:
        nb = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise NotANotebook("not a notebook: not text (binary data)", "not_json") from None
    except json.JSONDecodeError as exc:
        raise NotANotebook(f"not a notebook: not valid JSON ({exc.msg} at line "
                           f"{exc.lineno})", "not_json") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotANotebook("not a notebook: JSON without a list of cells", "not_json")
    return nb


def identify(path: Path, release: Release, limit_bytes: int, name: str | None = None
             ) -> tuple[str, str]:
    """``(notebook, how)`` for a handed-in file: how is ``"name"`` (its name — ``name`` if
    given, e.g. the name an LMS stored it under — as is or with a copy's marks) or
    ``"content"``. Raises :class:`NotANotebook` with the reason otherwise."""
    nb = read_notebook(path, limit_bytes)
    named = by_name(name or path.name, release.names)
    if named is not None:
        return named, "name"
    found = release.by_content(nb)
    if found is None:
        raise NotANotebook("matches no notebook of the assignment (neither by its name nor "
                           "by its cells)", "unmatched")
    return found, "content"


def classify(path: Path, release: Release, limit_bytes: int, name: str | None = None
             ) -> tuple[str, str, str, str]:
    """What becomes of a handed-in file, the same for a student's folder and an LMS's zip:
    ``(outcome, notebook, how, reason)`` with outcome ``"matched"`` (``notebook`` and ``how``
    as :func:`identify` says), ``"ignored"`` (a file that is no notebook and not named like
    one: notes.txt, a PDF), ``"unmatched"`` or ``"rejected"`` (``reason`` says why)."""
    shown = name or path.name
    if not looks_like_notebook(shown) and path.suffix.lower() not in ("", ".txt", ".json"):
        return "ignored", "", "", "not a notebook"
    try:
        notebook, how = identify(path, release, limit_bytes, name)
    except NotANotebook as exc:
        if exc.kind == "not_json" and not looks_like_notebook(shown):
            return "ignored", "", "", "not a notebook"
        return ("unmatched" if exc.kind == "unmatched" else "rejected"), "", "", str(exc)
    return "matched", notebook, how, ""
