"""A notebook's cells as nbformat stores them, read safely: a handed-in file may hold anything.

One reading for every layer that looks into a notebook (grading's restore and recognise, the
release's translation, the publish leak check): the source as one string, and the metadata
and nbgrader metadata as mappings even where a file has none or garbage.
"""

from __future__ import annotations

from typing import Any


def metadata(cell: dict[str, Any]) -> dict[str, Any]:
    """A cell's metadata, or an empty one where a handed-in file has none or garbage."""
    meta = cell.get("metadata")
    return meta if isinstance(meta, dict) else {}


def nbgrader_meta(cell: dict[str, Any]) -> dict[str, Any]:
    """A cell's ``metadata.nbgrader`` (empty if it has none, or not a mapping)."""
    grader = metadata(cell).get("nbgrader")
    return grader if isinstance(grader, dict) else {}


def cell_text(cell: dict[str, Any]) -> str:
    """A cell's source as one string (nbformat stores it as a string or a list of lines)."""
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)
