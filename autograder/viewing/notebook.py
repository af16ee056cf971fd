"""Clean the autograded notebook before it is written, so everyone who opens it gets clean content.

Autograde writes ``autograded/<student>/week4/<notebook>.ipynb``; the formgrader renders it,
the feedback is made from it, and an instructor may open it in JupyterLab. What
:func:`clean_notebook` does to it: first its structure is cut to an allow-list (cells and
outputs of unknown types, unknown fields, output metadata nbconvert would print unchecked:
:mod:`autograder.viewing.structure`), then, cell by cell (the policy:
:mod:`autograder.viewing.policy`):

* **markdown cells** are rendered as nbconvert renders them (attachments included); when that
  HTML holds anything outside the policy, the cell's source becomes the cleaned HTML (a
  markdown cell may hold HTML, so the text, math and tables still show). Otherwise the source
  is left exactly as the student wrote it;
* **raw cells** (which nbconvert pastes into the page as they are) and ``text/html`` and
  ``text/markdown`` outputs are replaced by their cleaned HTML when it removed anything;
* **outputs of other kinds** are kept only when they cannot carry script — plain text, LaTeX,
  PNG, JPEG, GIF; ``application/javascript``, SVG, widget views and anything else are removed,
  with a line in the student's language saying so where nothing else is left to show;
* **attachments** other than PNG, JPEG and GIF (an SVG with a script) are removed;
* **notebook metadata**: the widget state (``metadata.widgets``, which nbconvert hands to the
  widget renderer as HTML) is removed.

Grades never depend on it: it runs after the grades are saved (``autograder.grading.config``),
and test cells keep their errors and verdicts. What it removed is written beside the notebook
(``<notebook>.viewing.json``) for the grade table's notes.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from nbconvert.exporters import HTMLExporter
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool

from autograder.viewing import policy, structure
from course.runtime.i18n import DEFAULT, N_, in_language, language_of, override

#: Output kinds kept as they are: none of them can run script in nbconvert's page.
SAFE_OUTPUTS = frozenset({"text/plain", "text/latex", "image/png", "image/jpeg", "image/gif"})
#: Output kinds kept after cleaning.
CLEANED_OUTPUTS = frozenset({"text/html", "text/markdown"})
SAFE_ATTACHMENTS = frozenset({"image/png", "image/jpeg", "image/gif"})
#: What the grade table reads: ``<notebook>.viewing.json`` beside the autograded notebook.
SUFFIX = ".viewing.json"
REMOVED_OUTPUT = N_("[removed for safe viewing: {kinds} output (it could run script where "
                    "this notebook is shown)]")


@cache
def _exporter() -> HTMLExporter:
    return HTMLExporter()


#: What stands in for an attachment the markdown names but the cell does not hold: an empty
#: GIF (nbconvert itself refuses such a notebook whole, "missing attachment").
EMPTY_GIF = "R0lGODlhAQABAAAAACw="


class _Attachments(dict):
    """A cell's attachments that answer for a missing one with :data:`EMPTY_GIF`, noting it."""

    def __init__(self, attachments: dict[str, Any]) -> None:
        super().__init__(attachments)
        self.missing: list[str] = []

    def __contains__(self, name: object) -> bool:
        if not super().__contains__(name):
            self.missing.append(str(name))
            self[str(name)] = {"image/gif": EMPTY_GIF}
        return True


def render_markdown(cell: NotebookNode) -> tuple[str, list[str]]:
    """The cell's markdown as nbconvert's HTML exporter renders it (attachments inlined), and
    the attachments it names that the cell does not hold."""
    attachments = _Attachments(dict(cell.get("attachments") or {}))
    view = NotebookNode(source=_text(cell.get("source", "")), attachments=attachments)
    html = _exporter().markdown2html({"cell": view, "resources": {}}, view.source)
    return str(html), attachments.missing


def _where(cell: NotebookNode, index: int) -> str:
    grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
    return str(grade_id) if grade_id else f"cell {index + 1}"


def _clean_outputs(cell: NotebookNode, language: str) -> list[str]:
    lost: list[str] = []
    for output in cell.get("outputs", []):
        data = output.get("data")
        if output.get("output_type") not in ("display_data", "execute_result") or data is None:
            continue
        dropped = sorted(kind for kind in data if kind not in SAFE_OUTPUTS | CLEANED_OUTPUTS)
        for kind in dropped:
            del data[kind]
        lost += [f"{kind} output" for kind in dropped]
        if "text/html" in data:
            cleaned, gone = policy.clean_and_report(_text(data["text/html"]))
            if gone:
                data["text/html"] = cleaned
                lost += [f"{item} in text/html" for item in gone]
        if "text/markdown" in data:
            html, missing = render_markdown(NotebookNode(source=_text(data["text/markdown"])))
            cleaned, gone = policy.clean_and_report(html)
            gone += [f"attachment {name} (missing)" for name in missing]
            if gone:
                data["text/markdown"] = cleaned
                lost += [f"{item} in text/markdown" for item in gone]
        if dropped and not data:
            data["text/plain"] = in_language(language, REMOVED_OUTPUT).format(
                kinds=", ".join(dropped))
        if dropped:  # what the removed kinds said of themselves (sizes, widget ids)
            output.get("metadata", {}).clear()
    return lost


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def clean_cell(cell: NotebookNode, language: str) -> list[str]:
    """Clean one cell in place (see the module's docstring); return what was removed."""
    lost: list[str] = []
    if cell.cell_type == "markdown":  # rendered first: what it shows of the attachments counts
        html, missing = render_markdown(cell)
        cleaned, gone = policy.clean_and_report(html)
        gone += [f"attachment {name} (missing)" for name in missing]
        if gone:
            cell.source = cleaned
            cell.pop("attachments", None)  # the cleaned HTML holds the kept images itself
            lost += gone
    attachments = cell.get("attachments") or {}
    for name in list(attachments):
        kinds = set(attachments[name])
        if not kinds <= SAFE_ATTACHMENTS:
            for kind in sorted(kinds - SAFE_ATTACHMENTS):
                del attachments[name][kind]
                lost.append(f"attachment {name} ({kind})")
            if not attachments[name]:
                del attachments[name]
    if cell.cell_type == "raw":
        cleaned, gone = policy.clean_and_report(_text(cell.source))
        if gone:
            cell.source = cleaned
            lost += gone
    lost += _clean_outputs(cell, language)
    return lost


def _language(nb: NotebookNode) -> str:
    """The student's language, as grading chose it; English if the metadata names none."""
    try:
        return override() or language_of(nb)
    except ValueError:  # a notebook's language is the student's to garble
        return DEFAULT


def clean_notebook(nb: NotebookNode) -> dict[str, list[str]]:
    """Cut the notebook to the structure the course writes (:func:`structure.normalise`), then
    clean every cell and the notebook's metadata in place; return {where: what removed}."""
    found = structure.normalise(nb)
    language = _language(nb)
    if nb.metadata.pop("widgets", None) is not None:
        found["notebook metadata"] = ["widget state"]
    for index, cell in enumerate(nb.cells):
        lost = clean_cell(cell, language)
        if lost:
            found.setdefault(_where(cell, index), []).extend(lost)
    return found


class CleanForViewing(Preprocessor):
    """The autograde step that runs :func:`clean_notebook` and writes ``<notebook>.viewing.json``.

    Last in the chain: the grades are saved before it changes anything. On by default
    (nbconvert's preprocessors are off unless enabled; this one must never be).
    """

    enabled = Bool(True).tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]):
        found = clean_notebook(nb)
        folder = Path(resources.get("metadata", {}).get("path") or ".")
        name = resources.get("unique_key", "notebook")
        (folder / f"{name}{SUFFIX}").write_text(json.dumps({"removed": found}, indent=1))
        return nb, resources


def read_removed(folder: Path, notebook: str) -> dict[str, list[str]]:
    """What :class:`CleanForViewing` removed from ``notebook`` in ``folder`` ({} if nothing)."""
    path = folder / f"{notebook}{SUFFIX}"
    try:
        return dict(json.loads(path.read_text())["removed"])
    except (OSError, ValueError, KeyError, TypeError):
        return {}
