"""A submitted notebook's shape, cut to what the course writes before anything renders it.

nbformat reads a notebook that declares a newer format (``"nbformat_minor": 99``) without
validating it against a schema it knows, so such a notebook may hold cells and outputs of any
type and any field; nbconvert's templates then print what they find — an unknown cell's source
goes into the page as it is, an image's ``width`` unquoted into its ``<img>`` tag, a cell tag
into a class. Cleaning HTML by what it looks like (:mod:`autograder.viewing.policy`) cannot
see those: :func:`normalise` therefore keeps a notebook to an allow-list of its *structure*,
first, and says what it removed:

* the format version becomes the one the course writes (:data:`FORMAT`);
* a cell of a type other than code, markdown and raw is removed; an output of a type other
  than stream, display data, execute result and error is removed;
* every cell, output and notebook keeps only the fields nbformat 4.5 defines, each of the type
  it defines (``execution_count`` a number or nothing, a stream's ``name`` ``stdout`` or
  ``stderr``, a cell ``id`` a safe name);
* cell metadata keeps only the keys the course and nbgrader use (:data:`CELL_METADATA`),
  each checked: cell tags and grade ids are safe names, points are numbers (other keys —
  Colab's, nbclient's timings — are dropped without a note: no template reads them);
* output metadata keeps only what nbconvert's templates read and may safely print: per image
  type ``width`` and ``height`` (a number), ``unconfined`` (true or false),
  ``needs_background`` (light or dark) and ``alt`` (text, which the templates escape);
  ``filenames`` (an ``<img src>`` nbconvert writes unchecked) and ``isolated`` (an iframe)
  are removed, and anything else.

What was removed that a template would have printed is reported, for the grade table's notes;
what no template reads, and an older 4.x format (upgraded: ids added), is not — an honest
notebook from Colab or an older JupyterLab reports nothing.

Only the page a person sees changes; grading read the notebook before (it runs as the first
step of :class:`autograder.viewing.notebook.CleanForViewing`, after the grades are saved).
"""

from __future__ import annotations

import math
import re
import uuid
from typing import Any

#: The notebook format the course's releases are written in (nbformat 4.5: cells have ids).
FORMAT = (4, 5)
CELL_TYPES = frozenset({"code", "markdown", "raw"})
OUTPUT_TYPES = frozenset({"stream", "display_data", "execute_result", "error"})
#: nbformat 4.5's fields, by cell type and output type; anything else is removed.
CELL_FIELDS = {
    "code": frozenset({"id", "cell_type", "metadata", "source", "outputs", "execution_count"}),
    "markdown": frozenset({"id", "cell_type", "metadata", "source", "attachments"}),
    "raw": frozenset({"id", "cell_type", "metadata", "source", "attachments"}),
}
OUTPUT_FIELDS = {
    "stream": frozenset({"output_type", "name", "text"}),
    "display_data": frozenset({"output_type", "data", "metadata"}),
    "execute_result": frozenset({"output_type", "data", "metadata", "execution_count"}),
    "error": frozenset({"output_type", "ename", "evalue", "traceback"}),
}
NOTEBOOK_FIELDS = frozenset({"nbformat", "nbformat_minor", "metadata", "cells"})
#: Cell metadata the course, nbgrader and JupyterLab use; each value is checked by type.
CELL_METADATA = frozenset({"nbgrader", "tags", "editable", "deletable", "collapsed",
                           "scrolled", "jupyter", "trusted", "raw_mimetype"})
#: nbgrader's own rule for a grade id (``CheckCellMetadata``), and a cell tag's or id's.
SAFE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
#: Output metadata nbconvert reads, per image type, with its check.
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif")
NEEDS_BACKGROUND = frozenset({"light", "dark"})


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) and 0 <= value <= 100_000


#: Output metadata keys nbconvert reads: a value that fails its check is removed and reported.
CHECKED = {
    "width": lambda v: _number(v), "height": lambda v: _number(v),
    "unconfined": lambda v: isinstance(v, bool),
    "needs_background": lambda v: v in NEEDS_BACKGROUND,
    "alt": lambda v: isinstance(v, str),
}
#: Output metadata keys nbconvert turns into a link or a frame: always removed, reported.
REFUSED = frozenset({"filenames", "isolated"})


def _image_metadata(found: dict[str, Any], where: str, lost: list[str]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, value in found.items():
        if key in CHECKED and CHECKED[key](value):
            kept[key] = value
        elif key in CHECKED or key in REFUSED:
            lost.append(f"output metadata {where}{key}")
        # anything else nbconvert never reads: dropped without a word (a kernel's own keys)
    return kept


def output_metadata(metadata: Any) -> tuple[dict[str, Any], list[str]]:
    """(the output metadata nbconvert may read, cut to the allow-list; what was removed that
    nbconvert would have printed)."""
    lost: list[str] = []
    if not isinstance(metadata, dict):
        return {}, ["output metadata"] if metadata else []
    kept = _image_metadata({k: v for k, v in metadata.items() if "/" not in k}, "", lost)
    for kind, value in metadata.items():
        if "/" not in kind:
            continue
        if kind in IMAGE_TYPES and isinstance(value, dict):
            kept[kind] = _image_metadata(value, f"{kind} ", lost)
        elif isinstance(value, dict) and REFUSED & set(value):
            lost += [f"output metadata {kind} {key}" for key in sorted(REFUSED & set(value))]
    return kept, lost


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 \
        else None


def _text(value: Any) -> str | list[str]:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return value if isinstance(value, str) else ""


def _nbgrader(value: Any) -> bool:
    if not isinstance(value, dict):
        return False
    grade_id = value.get("grade_id")
    points = value.get("points", 0)
    return (grade_id is None or isinstance(grade_id, str) and bool(SAFE_NAME.match(grade_id))) \
        and (points is None or _number(points))


def _cell_metadata(metadata: Any, lost: list[str]) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for key, value in (metadata.items() if isinstance(metadata, dict) else ()):
        ok = key in CELL_METADATA and (
            key == "nbgrader" and _nbgrader(value)
            or key == "tags" and isinstance(value, list)
            and all(isinstance(t, str) and SAFE_NAME.match(t) for t in value)
            or key == "jupyter" and isinstance(value, dict)
            and all(isinstance(v, bool) for v in value.values())
            or key == "raw_mimetype" and isinstance(value, str)
            or key in ("editable", "deletable", "collapsed", "trusted", "scrolled")
            and isinstance(value, (bool, str)))
        if ok:
            kept[key] = value
        elif key in CELL_METADATA:  # a key nbconvert or nbgrader reads, with a bad value
            lost.append(f"cell metadata {key}")
    return kept


def _output(output: Any) -> tuple[dict[str, Any] | None, list[str]]:
    kind = output.get("output_type") if isinstance(output, dict) else None
    if kind not in OUTPUT_TYPES:
        return None, [f"an output of unknown type {str(kind)[:40]!r}"]
    lost = [f"output field {key}" for key in output if key not in OUTPUT_FIELDS[kind]]
    kept = {key: output[key] for key in output if key in OUTPUT_FIELDS[kind]}
    if kind == "stream":
        if output.get("name") not in ("stdout", "stderr"):
            lost.append("stream name")
        kept["name"] = "stderr" if output.get("name") == "stderr" else "stdout"
        kept["text"] = _text(output.get("text"))
    elif kind == "error":
        kept["ename"] = str(output.get("ename", ""))
        kept["evalue"] = str(output.get("evalue", ""))
        trace = output.get("traceback")
        kept["traceback"] = [str(line) for line in trace] if isinstance(trace, list) else []
    else:
        data = output.get("data")
        kept["data"] = {k: v for k, v in data.items() if isinstance(k, str)
                        and isinstance(v, (str, list, dict))} if isinstance(data, dict) else {}
        kept["metadata"], gone = output_metadata(output.get("metadata", {}))
        lost += gone
        if kind == "execute_result":
            kept["execution_count"] = _count(output.get("execution_count"))
            if kept["execution_count"] != output.get("execution_count"):
                lost.append("execution count")
    return kept, lost


def _cell(cell: Any, index: int) -> tuple[dict[str, Any] | None, list[str]]:
    kind = cell.get("cell_type") if isinstance(cell, dict) else None
    if kind not in CELL_TYPES:
        return None, [f"a cell of unknown type {str(kind)[:40]!r}"]
    lost = [f"cell field {key}" for key in cell if key not in CELL_FIELDS[kind]]
    kept = {key: cell[key] for key in cell if key in CELL_FIELDS[kind]}
    cell_id = cell.get("id")
    if isinstance(cell_id, str) and SAFE_NAME.match(cell_id):
        kept["id"] = cell_id
    else:  # nbformat 4.4 has none; 4.5 needs one
        kept["id"] = uuid.uuid5(uuid.NAMESPACE_URL, f"cell-{index}-{cell_id!r}").hex[:16]
        if cell_id is not None:
            lost.append("cell id")
    kept["source"] = _text(cell.get("source"))
    kept["metadata"] = _cell_metadata(cell.get("metadata", {}), lost)
    if "attachments" in kept and not isinstance(kept["attachments"], dict):
        kept.pop("attachments")
        lost.append("attachments")
    if kind == "code":
        kept["execution_count"] = _count(cell.get("execution_count"))
        if kept["execution_count"] != cell.get("execution_count"):
            lost.append("execution count")
        outputs = []
        for output in cell.get("outputs") or []:
            clean, gone = _output(output)
            lost += gone
            if clean is not None:
                outputs.append(clean)
        kept["outputs"] = outputs
    return kept, lost


def _where(cell: Any, index: int) -> str:
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    grade_id = meta.get("nbgrader", {}).get("grade_id") if isinstance(meta, dict) \
        and isinstance(meta.get("nbgrader"), dict) else None
    return grade_id if isinstance(grade_id, str) and SAFE_NAME.match(grade_id) \
        else f"cell {index + 1}"


def normalise(nb: dict[str, Any]) -> dict[str, list[str]]:
    """Cut ``nb`` (a notebook node or dict) to the allow-list in place; {where: what removed}."""
    from nbformat import from_dict

    found: dict[str, list[str]] = {}
    declared = (nb.get("nbformat"), nb.get("nbformat_minor"))
    if declared != FORMAT and not (declared[0] == 4 and isinstance(declared[1], int)
                                   and 0 <= declared[1] < FORMAT[1]):  # older: upgraded
        found["notebook"] = [f"format {nb.get('nbformat')!s:.8}.{nb.get('nbformat_minor')!s:.8} "
                             f"(read as {FORMAT[0]}.{FORMAT[1]})"]
    nb["nbformat"], nb["nbformat_minor"] = FORMAT
    for key in [k for k in nb if k not in NOTEBOOK_FIELDS]:
        del nb[key]
        found.setdefault("notebook", []).append(f"notebook field {key}")
    if not isinstance(nb.get("metadata"), dict):
        nb["metadata"] = from_dict({})
    title = nb["metadata"].get("title")
    if title is not None and not isinstance(title, str):
        del nb["metadata"]["title"]
        found.setdefault("notebook", []).append("notebook metadata title")
    cells = []
    given = nb.get("cells")
    for index, cell in enumerate(given if isinstance(given, list) else []):
        clean, lost = _cell(cell, index)
        if lost:
            found.setdefault(_where(cell, index), []).extend(lost)
        if clean is not None:
            cells.append(from_dict(clean))
    nb["cells"] = cells
    return found
