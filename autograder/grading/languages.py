"""Grading a notebook in the language it was handed out in.

A class may hand in notebooks of ``release/week4`` (English) and ``release-ko/week4`` (Korean)
into one gradebook: both have the same cells, grade_ids, points and test code, and differ only
in the read-only markdown (:mod:`autograder.release.translation`). Two steps of autograde put cells
back from what the *instructor* released, and each must use the release the notebook came from, or a
Korean submission's feedback would come back half in English:

* :class:`autograder.grading.restore.RestoreCells` recognises cells and adds back deleted test cells
  from the release notebook of the notebook's language (:func:`release_notebook`);
* :class:`LocalizedOverwriteCells` is nbgrader's ``OverwriteCells`` (which restores every
  read-only cell from the gradebook, that is from the English source) followed by putting the
  release text of the notebook's language back into read-only markdown cells. Code and test
  cells are the same in every language, so the gradebook's source is right for them.

The language is ``metadata.course.language`` (written at release); a notebook that lost it (or
whose metadata names no language the course speaks) is Korean when its markdown is mostly
Hangul, else English. The grader speaks that language too (:func:`grading_language`), unless
the instructor's ``COURSE_LANG`` says otherwise.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import OverwriteCells
from traitlets import Unicode

from autograder.release import translation
from course.runtime import i18n

_HANGUL = re.compile(r"[\uac00-\ud7a3]")
_LATIN = re.compile(r"[A-Za-z]")


def notebook_language(nb: Mapping[str, Any]) -> str:
    """The language a submitted notebook was released in: ``"en"`` or ``"ko"``.

    Its ``metadata.course.language`` where that names a language the course speaks; the
    metadata is the student's to lose or change, so otherwise the language of its prose.
    """
    course = (nb.get("metadata") or {}).get("course")
    stated = course.get("language") if isinstance(course, Mapping) else None
    if stated in i18n.LANGUAGES:
        return str(stated)
    prose = "".join("".join(c.get("source", "")) for c in nb.get("cells", [])
                    if c.get("cell_type") == "markdown")
    return "ko" if len(_HANGUL.findall(prose)) > len(_LATIN.findall(prose)) / 4 else "en"


def grading_language(nb: Mapping[str, Any]) -> str:
    """The language the grader speaks to this student (the sandboxed kernel, the re-checks,
    the notes): the instructor's ``COURSE_LANG`` if set, else :func:`notebook_language`."""
    return i18n.override() or notebook_language(nb)


def release_notebook(root: Path, assignment: str, notebook: str, language: str) -> Path:
    """The release notebook of ``language`` that a submission of ``notebook`` was made from."""
    folder = translation.release_dir(root, language).parent / assignment
    return folder / f"{notebook}.ipynb"


def locked_markdown(path: Path) -> dict[str, str]:
    """grade_id -> source of every read-only markdown cell of a release notebook."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    out = {}
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "markdown" and meta.get("locked") and meta.get("grade_id"):
            src = cell["source"]
            out[meta["grade_id"]] = "".join(src) if isinstance(src, list) else src
    return out


class LocalizedOverwriteCells(OverwriteCells):
    """``OverwriteCells``, then read-only markdown back in the notebook's own language."""

    course_root = Unicode("", help="The course directory (holds the release folders).").tag(
        config=True)

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]):
        info = resources.get("nbgrader", {})
        language = notebook_language(nb)
        self._localized: dict[str, str] = {}
        if language != translation.SOURCE_LANGUAGE:
            path = release_notebook(Path(self.course_root or "."), info.get("assignment", ""),
                                    info.get("notebook", ""), language)
            if not path.exists():
                raise FileNotFoundError(
                    f"LocalizedOverwriteCells: a {language!r} notebook, but no release notebook "
                    f"at {path}; build the releases (`python -m autograder release`)")
            self._localized = locked_markdown(path)
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell: NotebookNode, resources: dict[str, Any], cell_index: int):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        localized = self._localized.get(grade_id) if cell.cell_type == "markdown" else None
        if localized is not None and cell.source == localized:
            # The released translation, untouched: show nbgrader the English it stands for, so
            # that it does not report a changed cell, then put the translation back.
            try:
                english = self.gradebook.find_source_cell(grade_id, self.notebook_id,
                                                          self.assignment_id).source
            except Exception:  # noqa: BLE001 - not in the gradebook: nbgrader says so below
                english = cell.source
            cell.source = english
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        if localized is not None:
            cell.source = localized  # edited or not: the read-only text as released
        return cell, resources
