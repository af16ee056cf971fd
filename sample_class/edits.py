"""What students do to a notebook's structure, as functions: the sample students and the
property test of random edits (``tests/test_edits.py``) make their notebooks with these.

Each function changes a notebook (plain JSON dicts, as read from the ``.ipynb``) in place the
way a student's editor would: JupyterLab's *Duplicate* and copy/paste keep a cell's metadata
(``metadata.nbgrader`` included) and give the copy a new id, right below the original;
*Move* keeps everything; a new cell has no metadata; an older tool writes nbformat 4.4, which
has no cell ids.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

Notebook = dict[str, Any]


def _gid(cell: dict[str, Any]) -> str | None:
    return (cell.get("metadata", {}).get("nbgrader") or {}).get("grade_id")


def index_of(nb: Notebook, grade_id: str) -> int:
    """The position of the cell with ``grade_id``; a clear error if there is none."""
    for i, cell in enumerate(nb["cells"]):
        if _gid(cell) == grade_id:
            return i
    raise KeyError(f"no cell with grade_id {grade_id!r} in this notebook "
                   f"(it has {[g for g in map(_gid, nb['cells']) if g]})")


def has_ids(nb: Notebook) -> bool:
    """nbformat 4.5 and later give every cell an ``id``."""
    return (nb.get("nbformat", 4), nb.get("nbformat_minor", 0)) >= (4, 5)


def new_id(nb: Notebook, seed: int | None = None) -> str:
    """A cell id not used in ``nb`` (JupyterLab writes 8+ characters of a uuid)."""
    used = {c.get("id") for c in nb["cells"]}
    n = 0
    while True:
        cid = (uuid.UUID(int=(seed or 0) * 1000 + n).hex[-12:] if seed is not None
               else uuid.uuid4().hex[:12])
        if cid not in used:
            return cid
        n += 1


def duplicate(nb: Notebook, at: int, to: int | None = None, seed: int | None = None) -> int:
    """Copy cell ``at`` with its metadata, as *Duplicate* or copy/paste does: the copy stands
    right below the original (or at position ``to``) with a new id. Returns its position."""
    cell = copy.deepcopy(nb["cells"][at])
    if "id" in cell:
        cell["id"] = new_id(nb, seed)
    where = at + 1 if to is None else to
    nb["cells"].insert(where, cell)
    return where


def move(nb: Notebook, at: int, to: int) -> None:
    """Move cell ``at`` so that it stands at position ``to`` (of the list without it)."""
    cell = nb["cells"].pop(at)
    nb["cells"].insert(to, cell)


def insert(nb: Notebook, at: int, cell_type: str, source: str, seed: int | None = None) -> None:
    """A new cell of the student's own (no metadata) at position ``at``."""
    cell: dict[str, Any] = {"cell_type": cell_type, "metadata": {}, "source": source}
    if cell_type == "code":
        cell.update(outputs=[], execution_count=None)
    if has_ids(nb):
        cell["id"] = new_id(nb, seed)
    nb["cells"].insert(at, cell)


def retype(nb: Notebook, at: int) -> None:
    """Cell ``at`` turned code <-> markdown (a stray ``y`` or ``m`` in command mode)."""
    cell = nb["cells"][at]
    if cell["cell_type"] == "code":
        cell["cell_type"] = "markdown"
        cell.pop("outputs", None)
        cell.pop("execution_count", None)
    else:
        cell.pop("attachments", None)
        cell.update(cell_type="code", outputs=[], execution_count=None)


def strip_ids(nb: Notebook) -> None:
    """Saved by a tool that writes nbformat 4.4: no cell ids, metadata kept."""
    nb["nbformat_minor"] = 4
    for cell in nb["cells"]:
        cell.pop("id", None)


def set_kernelspec(nb: Notebook, name: str, display_name: str | None = None,
                   language: str = "python") -> None:
    """The student ran the notebook with another kernel, and it was saved so."""
    nb.setdefault("metadata", {})["kernelspec"] = {
        "name": name, "display_name": display_name or name, "language": language}
