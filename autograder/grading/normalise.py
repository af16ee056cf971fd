"""Copies of cells never cost a notebook: settle them before nbgrader sees them.

Students copy cells — to keep a working version of an answer, to run a test again beside a
change, or by accident. JupyterLab's *Duplicate* and copy/paste keep the cell's metadata, so
the copy carries the original's ``grade_id``. nbgrader's ``DeduplicateIds`` then empties the
metadata of every occurrence but the last, and ``CheckCellMetadata`` rejects the emptied cell
(``SchemaTooOldError``): the student's whole notebook is lost for a copy-paste.

:class:`NormaliseCells` runs in autograde's sanitize step in place of ``DeduplicateIds`` and
:class:`autograder.grading.restore.RestoreCells` (it is one, with two steps around it):

1. **Copies.** For a ``grade_id`` that appears more than once, one occurrence is graded:

   * an **answer** cell: the last copy that stands above the answer's first test (the first
     test below it in the release that uses a name it defines), among the copies the student
     wrote in (a copy still holding the release's stub never displaces written work); with no
     test below any copy, the last copy.
     That is the copy Run All leaves in effect when the student's own test runs — what the
     visible test printed is what the grader records — and, since *Duplicate* puts the copy
     below the original, the copy the student worked on last. nbgrader's ``DeduplicateIds``
     keeps the last occurrence too, but fails the notebook over the others. The other copies
     lose their nbgrader metadata and run as the student's own, ungraded cells.
   * a **test** or **read-only** cell: the instructor's source comes back from the gradebook
     whatever the copy holds, so only its place matters: the occurrence that keeps the
     release's cell id (*Duplicate* gives the copy a new one, moving a cell keeps it), else —
     nbformat 4.4 has no ids — the first (the copy goes below the original). The other copies
     are dropped: a test runs once, where the release put it.

   A cell whose ``grade_id`` the release does not know, or one of another type or checksum
   than the release's cell beside a true copy (pasted from another notebook, where the same
   grade_id names another cell), is kept as the student's own cell. Own cells are set aside
   while the cells are recognised against the release (:func:`autograder.grading.restore.restore`),
   so that a copy is never taken for a cell the student deleted, and put back after the cell
   they followed.
2. **Type and figures.** A cell turned code <-> markdown gets the release's type back, and a
   read-only cell the release's figures (cell attachments): nbgrader's ``OverwriteCells``
   changes the type itself but then fails validation (a markdown attachment on a code cell, a
   4.4 cell without an id), and puts a read-only cell's text back without its figures, on
   which the feedback fails. (Read-only code cells the student deleted are put back by
   :func:`autograder.grading.restore.restore`: tests may need their imports.)
3. **Order.** An answer cell that stands below a test that uses it (a name it defines appears
   in the test) gets a note naming both: the grader runs top to bottom, as Run All does, so
   the test fails in the student's own run too, and the lost points need a reason.

What was done goes into the notebook's :data:`autograder.grading.restore.RESTORED_KEY` metadata
(``copies`` and ``order``, beside RestoreCells' own keys); the trusted re-check copies it into
its summary, and :func:`table_notes` words it for the grade table. The feedback notebook gets
the same sentences in a last markdown cell.
"""

from __future__ import annotations

import ast
import copy
import re
from typing import Any

from autograder.grading.restore import (
    RestoreCells,
    cell_ids,
    cell_text,
    nbgrader_meta,
    normalised,
    restore,
)
from course.runtime.i18n import DEFAULT, in_language

Cell = dict[str, Any]
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _gid(cell: Cell) -> str | None:
    return nbgrader_meta(cell).get("grade_id")


def _is_answer(meta: dict[str, Any]) -> bool:
    return bool(meta.get("solution"))


def _is_test(meta: dict[str, Any]) -> bool:
    return bool(meta.get("grade")) and not meta.get("solution")


def _own(cell: Cell) -> Cell:
    """The cell as the student's own: no nbgrader metadata, no locks."""
    meta = cell.setdefault("metadata", {})
    for key in ("nbgrader", "deletable", "editable"):
        meta.pop(key, None)
    return cell


def _next_test(release: list[Cell], j: int) -> str | None:
    """The grade_id of the first test cell after release cell ``j``."""
    for cell in release[j + 1:]:
        if _is_test(nbgrader_meta(cell)):
            return _gid(cell)
    return None


def first_test(release: list[Cell], j: int, names: set[str]) -> str | None:
    """The first test after release cell ``j`` that uses one of ``names`` (the answer's
    definitions); the next test if none does (or the answer defines nothing)."""
    for cell in release[j + 1:]:
        if _is_test(nbgrader_meta(cell)) and set(_IDENT.findall(cell_text(cell))) & names:
            return _gid(cell)
    return _next_test(release, j)


def _alike(cell: Cell, rel_cell: Cell) -> bool:
    """The cell may be a copy of the release cell: the same type, and the same checksum when
    both have one (a cell pasted from another notebook can share a grade_id, not both)."""
    mine, theirs = nbgrader_meta(cell).get("checksum"), nbgrader_meta(rel_cell).get("checksum")
    return cell.get("cell_type") == rel_cell.get("cell_type") and (
        not mine or not theirs or mine == theirs)


def _keep_locked(cells: list[Cell], where: list[int], rel_cell: Cell) -> int:
    original = [i for i in where if cell_ids(cells[i]) & cell_ids(rel_cell)]
    return original[0] if len(original) == 1 else where[0]


def _keep_answer(cells: list[Cell], where: list[int], rel_cell: Cell,
                 test_at: int | None) -> tuple[int, bool]:
    """The copy graded, and whether it stands above the test."""
    stub = normalised(cell_text(rel_cell))
    written = [i for i in where if normalised(cell_text(cells[i])) != stub] or where
    above = [i for i in written if test_at is not None and i < test_at]
    return (above or written)[-1], bool(above)


def settle_copies(nb: dict[str, Any], release: dict[str, Any]
                  ) -> tuple[list[dict[str, str]], list[tuple[Cell, Cell | None]]]:
    """Keep one occurrence of every ``grade_id`` in ``nb`` (in place; see the module docstring).

    Returns what was done (one record per copy: ``grade_id``, ``kind``, ``action``) and the
    cells set aside as the student's own, each with the cell it followed (None: the first).
    """
    cells, rel = nb["cells"], release["cells"]
    rel_at = {_gid(c): j for j, c in enumerate(rel) if _gid(c)}
    where: dict[str, list[int]] = {}
    for i, cell in enumerate(cells):
        gid = _gid(cell)
        if gid:
            where.setdefault(gid, []).append(i)
    records: list[dict[str, str]] = []
    drop: set[int] = set()
    own: set[int] = set()
    kept: dict[str, int] = {}
    for gid, at in list(where.items()):
        alike = [i for i in at if gid in rel_at and _alike(cells[i], rel[rel_at[gid]])]
        if gid not in rel_at or (len(at) > 1 and alike):
            strange = [i for i in at if i not in alike]  # pasted from another notebook
            own.update(strange)
            records += [{"grade_id": gid, "kind": "unknown", "action": "kept"}] * len(strange)
            at = where[gid] = alike
        if not at:
            continue
        if len(at) == 1:
            kept[gid] = at[0]
        elif not _is_answer(nbgrader_meta(rel[rel_at[gid]])):
            keep = kept[gid] = _keep_locked(cells, at, rel[rel_at[gid]])
            kind = "test" if _is_test(nbgrader_meta(rel[rel_at[gid]])) else "read-only"
            drop.update(i for i in at if i != keep)
            records += [{"grade_id": gid, "kind": kind, "action": "dropped"}] * (len(at) - 1)
    for gid, at in where.items():  # answers last: they look for their test's kept place
        if gid not in rel_at or len(at) < 2 or not _is_answer(nbgrader_meta(rel[rel_at[gid]])):
            continue
        test = first_test(rel, rel_at[gid], defined_names(cell_text(rel[rel_at[gid]])))
        test_at = kept.get(test) if test else None
        keep, above = _keep_answer(cells, at, rel[rel_at[gid]], test_at)
        kept[gid] = keep
        own.update(i for i in at if i != keep)
        records += [{"grade_id": gid, "kind": "answer", "action": "kept",
                     "test": test if test and above else ""}] * (len(at) - 1)
    records.sort(key=lambda r: rel_at.get(r["grade_id"], len(rel)))
    aside: list[tuple[Cell, Cell | None]] = []
    remaining: list[Cell] = []
    for i, cell in enumerate(cells):
        if i in drop:
            continue
        if i in own:
            aside.append((_own(cell), remaining[-1] if remaining else None))
        else:
            remaining.append(cell)
    nb["cells"] = remaining
    return records, aside


def put_back(nb: dict[str, Any], aside: list[tuple[Cell, Cell | None]]) -> None:
    """Insert the cells set aside right after the cell each followed (in their order)."""
    cells = nb["cells"]
    last_after: dict[int, int] = {}
    for cell, after in aside:
        key = id(after)
        if key in last_after:
            at = last_after[key] + 1
        else:
            at = 0 if after is None else next(
                i for i, c in enumerate(cells) if c is after) + 1
        cells.insert(at, cell)
        last_after = {k: (p + 1 if p >= at else p) for k, p in last_after.items()}
        last_after[key] = at


def defined_names(source: str) -> set[str]:
    """Top-level names a cell defines (``def``, ``class``, assignments); by pattern if the
    cell does not parse."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        pairs = re.findall(r"^(?:def|class)\s+(\w+)|^(\w+)\s*=", source, re.M)
        return {name for pair in pairs for name in pair if name}
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
    return names


def order_problems(nb: dict[str, Any], release: dict[str, Any]) -> list[dict[str, str]]:
    """Answer cells standing below a test that uses them: ``{"answer", "test"}`` each (the
    first such test of every answer)."""
    cells, rel = nb["cells"], release["cells"]
    at = {_gid(c): i for i, c in enumerate(cells) if _gid(c)}
    rel_text = {_gid(c): cell_text(c) for c in rel if _gid(c)}
    problems: list[dict[str, str]] = []
    for j, cell in enumerate(rel):
        gid = _gid(cell)
        if not gid or not _is_answer(nbgrader_meta(cell)) or gid not in at \
                or cell["cell_type"] != "code":
            continue
        names = defined_names(cell_text(cells[at[gid]])) | defined_names(rel_text[gid])
        for later in rel[j + 1:]:
            test = _gid(later)
            if (not test or not _is_test(nbgrader_meta(later)) or test not in at
                    or at[test] > at[gid]):
                continue
            used = set(_IDENT.findall(rel_text[test]))
            if (used & names) if names else test == _next_test(rel, j):
                problems.append({"answer": gid, "test": test})
                break
    return problems


def sentences(restored: dict[str, Any], language: str = DEFAULT) -> list[str]:
    """What :class:`NormaliseCells` did, one sentence each (grade table, feedback), in the
    notebook's language."""
    out = []
    if restored.get("read_only_added"):
        out.append(in_language(language, "read-only cell(s) you deleted were put back: {cells}")
                   .format(cells=", ".join(f"`{g}`" for g in restored["read_only_added"])))
    for rec in restored.get("copies", []):
        gid, kind = rec["grade_id"], rec["kind"]
        if kind == "answer" and rec.get("test"):
            out.append(in_language(
                language, "a copy of `{cell}` was kept as your own cell: it runs but is not "
                "graded (the one graded is the last copy above its test `{test}`)"
            ).format(cell=gid, test=rec["test"]))
        elif kind == "answer":
            out.append(in_language(
                language, "a copy of `{cell}` was kept as your own cell: it runs but is not "
                "graded (the one graded is the last copy you wrote in)").format(cell=gid))
        elif kind == "test":
            out.append(in_language(
                language, "a copy of the test `{cell}` was dropped: a test runs once, where "
                "the release put it").format(cell=gid))
        elif kind == "read-only":
            out.append(in_language(language, "a copy of the read-only cell `{cell}` was dropped"
                                   ).format(cell=gid))
        else:
            out.append(in_language(
                language, "a cell marked `{cell}` that is not this notebook's (pasted from "
                "another notebook?) was kept as your own cell, not graded").format(cell=gid))
    for rec in restored.get("order", []):
        out.append(in_language(
            language, "`{answer}` stands after its test `{test}`; the grader runs top to "
            "bottom, as Run All does").format(answer=rec["answer"], test=rec["test"]))
    return out


def table_notes(notebook: str, restored: dict[str, Any], language: str = DEFAULT) -> list[str]:
    """The grade table's notes for one notebook."""
    return [f"{notebook}: {s}" for s in sentences(restored, language)]


def retype(cell: Cell, cell_type: str) -> None:
    """Give a cell the release's type, as OverwriteCells would: there, a markdown cell with an
    attachment, or a cell without an id in a 4.4 notebook, fails validation and the notebook."""
    cell["cell_type"] = cell_type
    if cell_type == "code":
        cell.pop("attachments", None)
        cell["outputs"], cell["execution_count"] = [], None
    else:
        cell.pop("outputs", None)
        cell.pop("execution_count", None)


def _note_cell(lines: list[str], language: str) -> Cell:
    heading = in_language(language, "**Grader's note on this notebook's cells**")
    return {"cell_type": "markdown", "metadata": {},
            "source": heading + "\n\n" + "\n".join(f"* {s}" for s in lines)}


class NormaliseCells(RestoreCells):
    """nbgrader sanitize step: settle copies, recognise and restore cells, note the order."""

    def restore_cells(self, raw: dict[str, Any], release: dict[str, Any]) -> dict[str, Any]:
        copies, aside = settle_copies(raw, release)
        done: dict[str, Any] = dict(restore(raw, release))
        put_back(raw, aside)
        rel = {_gid(c): c for c in release["cells"] if _gid(c)}
        for cell in raw["cells"]:
            gid = _gid(cell)
            if "nbgrader" in cell.get("metadata", {}) and not gid:
                _own(cell)  # nbgrader metadata that names no cell (e.g. emptied)
                continue
            if gid not in rel:
                continue
            if rel[gid]["cell_type"] != cell["cell_type"]:
                retype(cell, rel[gid]["cell_type"])
            if rel[gid].get("attachments") and not _is_answer(nbgrader_meta(rel[gid])):
                # OverwriteCells puts a read-only cell's text back, not its figures: without
                # them the feedback (nbconvert) fails on the cell's `attachment:` link.
                cell["attachments"] = copy.deepcopy(rel[gid]["attachments"])
        done["copies"] = copies
        done["order"] = order_problems(raw, release)
        language = (release.get("metadata", {}).get("course") or {}).get("language", DEFAULT)
        lines = sentences(done, language)
        if lines:
            note = _note_cell(lines, language)
            if (raw.get("nbformat", 4), raw.get("nbformat_minor", 0)) >= (4, 5):
                used = {c.get("id") for c in raw["cells"]}
                note["id"] = next(f"grader-note-{n}" for n in range(len(used) + 1)
                                  if f"grader-note-{n}" not in used)
            raw["cells"].append(note)
        return done

