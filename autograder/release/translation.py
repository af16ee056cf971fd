"""The week in other languages: notebook prose through gettext PO catalogs, one per notebook.

The English source notebooks (``source/week4``) are the one source. Code cells, test cells,
grade_ids and points exist there only; a translated release differs from ``release/week4`` in
its prose alone. Prose is translated paragraph by paragraph in standard gettext catalogs,
``i18n/<language>/week4/<notebook>.po``, read and merged with Babel:

* a *message* is one markdown block of a read-only markdown cell (blocks are separated by a
  blank line; a fenced code block is one block, never split, and is copied as it is, so is a
  block holding only display math; an image's alt text is translated); its ``msgctxt`` is the
  cell's id, so the same sentence in two cells is two messages;
* ``python -m autograder translation update`` merges the catalogs with the source as gettext's
  ``msgmerge`` does (:meth:`babel.messages.catalog.Catalog.update`): a new paragraph arrives
  untranslated, a changed one ``fuzzy`` with its old translation and previous English
  (``#| msgid``) to compare, a removed one obsolete (``#~``);
* ``python -m autograder translation check`` (and tests/test_translation.py) fails while any
  paragraph of the source is untranslated or fuzzy, or a catalog holds a message the source no
  longer has, or a translation lost a number, a code span, a formula or a link of its English;
* :func:`write_release` writes ``release-<language>/week4`` from ``release/week4`` (what
  nbgrader generated): every read-only markdown cell translated, its nbgrader checksum
  recomputed, and ``metadata.course.language`` set. Answer cells keep nbgrader's stub, so an
  untouched written answer is recognised as untouched in every language.

Why a folder per language rather than a setting: a student (or Colab link) opens a folder of
notebooks, and the language must be there with no step by the student; both folders are
committed and graded into one gradebook, since everything graded is identical.
"""

from __future__ import annotations

import argparse
import base64
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po
from nbformat.notebooknode import from_dict
from nbgrader.utils import compute_checksum

from autograder.runner.names import ASSIGNMENT
from autograder.runner.cells import cell_text, nbgrader_meta
from course.runtime import i18n

ROOT = Path(__file__).resolve().parents[2]
SOURCE_LANGUAGE = i18n.DEFAULT
#: the languages the week is released in, besides English (the course's messages speak each).
LANGUAGES = tuple(lang for lang in i18n.LANGUAGES if lang != SOURCE_LANGUAGE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_ONLY_IMAGE = re.compile(r"^\s*(!\[[^\]]*\]\([^)]*\)\s*)+$")
_ONLY_MATH = re.compile(r"^\s*\$\$.*\$\$\s*$", re.S)
#: what a translation must carry over from its English unchanged.
_CODE = re.compile(r"`[^`\n]+`")
_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)
_LINK_TARGET = re.compile(r"\]\(([^)\s]+)")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*")


class TranslationError(ValueError):
    """A catalog is missing, incomplete or stale (the message lists every problem)."""


def catalog_path(root: Path, language: str, notebook: str) -> Path:
    """Where the ``language`` catalog of ``notebook`` (a stem such as ``05_roofline``) lives."""
    return root / "i18n" / language / ASSIGNMENT / f"{notebook}.po"


def release_dir(root: Path, language: str) -> Path:
    """The release folder of ``language``: ``release/week4`` for English, else
    ``release-<language>/week4``."""
    if language == SOURCE_LANGUAGE:
        return root / "release" / ASSIGNMENT
    if language not in LANGUAGES:
        raise ValueError(f"no release in {language!r}: the languages are "
                         f"{', '.join((SOURCE_LANGUAGE, *LANGUAGES))}")
    return root / f"release-{language}" / ASSIGNMENT


def is_prose(cell: dict[str, Any]) -> bool:
    """A markdown cell the course wrote (not a student's written answer)."""
    return cell.get("cell_type") == "markdown" and not nbgrader_meta(cell).get("solution")


def blocks(markdown: str) -> list[str]:
    """The blocks of a markdown text: split at blank lines, fenced code kept whole."""
    out: list[str] = []
    current: list[str] = []
    fenced = False
    for line in markdown.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced and not line.strip():
            if current:
                out.append("\n".join(current))
                current = []
            continue
        current.append(line)
    if current:
        out.append("\n".join(current))
    return out


def translatable(block: str) -> bool:
    """False for a block that is copied as it is: fenced code, display math, an image without
    alt text (an image's alt text is prose: screen readers say it)."""
    if _ONLY_IMAGE.match(block):
        return bool(re.search(r"!\[[^\]]*[A-Za-z][^\]]*\]", block))
    return not (_FENCE.match(block) or _ONLY_MATH.match(block))


def _context(cell: dict[str, Any], index: int) -> str:
    return str(cell.get("id") or nbgrader_meta(cell).get("grade_id") or f"cell-{index}")


def template(notebook_path: Path) -> Catalog:
    """The messages of one source notebook (gettext's POT), in the order they appear."""
    nb = json.loads(notebook_path.read_text(encoding="utf-8"))
    catalog = Catalog(project=f"{ASSIGNMENT} {notebook_path.stem}", fuzzy=False)
    for index, cell in enumerate(nb["cells"]):
        if not is_prose(cell):
            continue
        for block in blocks(cell_text(cell)):
            if translatable(block):
                catalog.add(block, context=_context(cell, index),
                            locations=[(notebook_path.name, index)])
    return catalog


def read_catalog(path: Path) -> Catalog:
    """A PO file, read with Babel (a missing file is a clear error)."""
    if not path.is_file():
        raise TranslationError(f"{path}: no catalog; run `python -m autograder translation "
                               "update` and translate it")
    with path.open("rb") as fh:
        return read_po(fh, abort_invalid=True)


def write_catalog(path: Path, catalog: Catalog) -> None:
    """Write a PO file the way gettext's tools do (previous msgids of fuzzy entries kept)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as fh:
        write_po(fh, catalog, include_previous=True, sort_output=False)


def _set_header(catalog: Catalog, notebook: str, language: str) -> None:
    """The header every catalog of the course carries (what it is, how to work on it)."""
    catalog.project = f"{ASSIGNMENT} {notebook}"
    catalog.version = ASSIGNMENT
    catalog.msgid_bugs_address = "the course's issue tracker"
    catalog.last_translator = "the course team"
    catalog.language_team = f"{language} <the course's issue tracker>"
    catalog.header_comment = "\n".join([
        f"# The prose of {ASSIGNMENT}/{notebook}.ipynb in the language {language!r}.",
        "# One message per markdown block of a read-only cell; msgctxt is the cell's id.",
        "# After editing the English source: python -m autograder translation update, then",
        "# translate every empty or fuzzy entry (and drop its fuzzy flag) and run",
        "# python -m autograder translation check. Terms and register: docs/glossary-ko.md.",
    ])


def update(root: Path, language: str) -> list[str]:
    """Merge every source notebook into its ``language`` catalog (``msgmerge``); return the
    catalogs written."""
    written = []
    for path in sorted((root / "source" / ASSIGNMENT).glob("*.ipynb")):
        target = catalog_path(root, language, path.stem)
        pot = template(path)
        catalog = (read_catalog(target) if target.is_file()
                   else Catalog(locale=language, fuzzy=False))
        created = catalog.creation_date if target.is_file() else pot.creation_date
        catalog.update(pot, update_header_comment=False)
        catalog.creation_date = created  # no diff in a catalog whose messages did not change
        _set_header(catalog, path.stem, language)
        write_catalog(target, catalog)
        written.append(str(target.relative_to(root)))
    return written


def carried_over(english: str, translation: str) -> list[str]:
    """What ``translation`` lost of its English: numbers, code spans, formulas, link targets."""
    lost = []
    for kind, pattern in (("code", _CODE), ("formula", _MATH), ("link", _LINK_TARGET)):
        for item in pattern.findall(english):
            if item not in translation:
                lost.append(f"{kind} {item!r}")
    bare = _LINK_TARGET.sub("", _MATH.sub("", _CODE.sub("", english)))
    for number in _NUMBER.findall(bare):
        if number not in translation:
            lost.append(f"number {number}")
    return lost


@dataclass
class CatalogReport:
    """What is wrong with one notebook's catalog (empty lists: complete and current)."""

    untranslated: list[str]
    fuzzy: list[str]
    stale: list[str]
    lost: list[str]

    def problems(self) -> list[str]:
        return ([f"untranslated: {m}" for m in self.untranslated]
                + [f"fuzzy (the English changed; check and drop the fuzzy flag): {m}"
                   for m in self.fuzzy]
                + [f"stale (not in the source any more; run update): {m}" for m in self.stale]
                + [f"lost in translation: {m}" for m in self.lost])


def _short(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return repr(line[:70] + ("…" if len(line) > 70 or "\n" in text.strip() else ""))


def check_catalog(source_notebook: Path, catalog: Catalog) -> CatalogReport:
    """Compare one catalog with its source notebook."""
    pot = template(source_notebook)
    report = CatalogReport([], [], [], [])
    wanted = {(m.id, m.context) for m in pot if m.id}
    for message in pot:
        if not message.id:
            continue
        where = f"[{message.context}] {_short(str(message.id))}"
        found = catalog.get(message.id, context=message.context)
        if found is None or not found.string:
            report.untranslated.append(where)
        elif found.fuzzy:
            report.fuzzy.append(where)
        else:
            lost = carried_over(str(message.id), str(found.string))
            if lost:
                report.lost.append(f"{where}: {', '.join(lost)}")
    for message in catalog:
        if message.id and (message.id, message.context) not in wanted:
            report.stale.append(f"[{message.context}] {_short(str(message.id))}")
    return report


def check(root: Path, language: str) -> list[str]:
    """Every problem of the ``language`` catalogs against the source notebooks."""
    problems = []
    for path in sorted((root / "source" / ASSIGNMENT).glob("*.ipynb")):
        target = catalog_path(root, language, path.stem)
        try:
            catalog = read_catalog(target)
        except TranslationError as exc:
            problems.append(str(exc))
            continue
        rel = target.relative_to(root)
        problems += [f"{rel}: {p}" for p in check_catalog(path, catalog).problems()]
    return problems


def translate_markdown(text: str, context: str, catalog: Catalog) -> tuple[str, list[str]]:
    """``text`` with every translatable block replaced by its translation; and the blocks
    that have none (untranslated or fuzzy)."""
    out, missing = [], []
    for block in blocks(text):
        if not translatable(block):
            out.append(block)
            continue
        found = catalog.get(block, context=context)
        if found is None or not found.string or found.fuzzy:
            missing.append(f"[{context}] {_short(block)}")
            out.append(block)
        else:
            out.append(str(found.string))
    return "\n\n".join(out), missing


def translate_notebook(nb: dict[str, Any], catalog: Catalog, language: str
                       ) -> tuple[dict[str, Any], list[str]]:
    """A translated copy of a release notebook, and what could not be translated."""
    nb = json.loads(json.dumps(nb))
    missing: list[str] = []
    for index, cell in enumerate(nb["cells"]):
        if not is_prose(cell):
            continue
        text, lost = translate_markdown(cell_text(cell), _context(cell, index), catalog)
        missing += lost
        cell["source"] = text
        if "checksum" in nbgrader_meta(cell):
            cell["metadata"]["nbgrader"]["checksum"] = compute_checksum(from_dict(cell))
    nb.setdefault("metadata", {}).setdefault("course", {})["language"] = language
    return nb, missing


def localize_figures(nb: dict[str, Any], assets: Path) -> None:
    """Swap each figure attached to a markdown cell for its copy drawn in the release's
    language (``assets/<language>/NAME.png``, ``scripts/build/make_figures.py --lang``), where one
    exists; a figure without a copy keeps the English drawing."""
    for cell in nb["cells"]:
        for name, data in cell.get("attachments", {}).items():
            drawn = assets / name
            if "image/png" in data and drawn.is_file():
                data["image/png"] = base64.b64encode(drawn.read_bytes()).decode("ascii")


def write_release(root: Path, language: str) -> list[str]:
    """Write ``release-<language>/week4`` from ``release/week4``; return the notebooks written.

    Raises :class:`TranslationError` listing every paragraph without a translation (nothing
    is written then: a release half in English is not a release).
    """
    english = sorted(release_dir(root, SOURCE_LANGUAGE).glob("*.ipynb"))
    if not english:
        raise TranslationError(f"no notebooks in {release_dir(root, SOURCE_LANGUAGE)}: "
                               "generate the English release first")
    built, missing = {}, []
    for path in english:
        catalog = read_catalog(catalog_path(root, language, path.stem))
        nb, lost = translate_notebook(json.loads(path.read_text(encoding="utf-8")), catalog,
                                      language)
        localize_figures(nb, root / "assets" / language)
        built[path.name] = nb
        missing += [f"{path.stem}: {m}" for m in lost]
    if missing:
        raise TranslationError(
            f"the {language} release was not written: {len(missing)} paragraph(s) have no "
            f"translation (run `python -m autograder translation update`, translate the "
            f"entries in i18n/{language}/, drop their fuzzy flags):\n  " + "\n  ".join(missing))
    folder = release_dir(root, language)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in set(p.name for p in folder.glob("*.ipynb")) - set(built):
        (folder / stale).unlink()
    for name, nb in built.items():
        nbformat.write(from_dict(nb), folder / name)  # as nbgrader writes release/week4
    return sorted(built)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder translation",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["update", "check", "release"],
                        help="update: merge the source into the catalogs (new paragraphs "
                        "untranslated, changed ones fuzzy); check: exit 1 while a catalog is "
                        "incomplete or stale; release: write the translated release folders "
                        "from release/week4")
    parser.add_argument("--language", choices=LANGUAGES, action="append",
                        help="only this language (default: all)")
    parser.add_argument("--root", type=Path, default=ROOT, help="course directory")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    status = 0
    for language in args.language or LANGUAGES:
        if args.command == "update":
            for name in update(root, language):
                print(f"updated {name}")
        elif args.command == "check":
            problems = check(root, language)
            for problem in problems:
                print(problem)
            print(f"{language}: " + (f"{len(problems)} problem(s)" if problems
                                     else "every paragraph translated and current"))
            status |= bool(problems)
        else:
            try:
                written = write_release(root, language)
            except TranslationError as exc:
                print(exc, file=sys.stderr)
                status = 1
            else:
                print(f"wrote {len(written)} notebooks to "
                      f"{release_dir(root, language).relative_to(root)}")
    return status
