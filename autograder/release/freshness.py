"""Is the committed release what the sources make now? Build both releases afresh and compare.

``release/week4`` is nbgrader's ``generate_assignment`` of ``source/week4``, and
``release-ko/week4`` the Korean catalogs' translation of it (:mod:`.translation`). Both are
committed; :func:`stale` rebuilds them in a scratch course directory and names every notebook
that differs, is missing or is extra. ``make publish`` refuses a stale release (a student would
get yesterday's notebooks), and the release tests compare against the same fresh build.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from autograder.release import translation
from autograder.runner.names import ASSIGNMENT
from autograder.runner.nbgrader_cli import nbgrader

LANGUAGES = ("en", "ko")


def fresh_build(root: Path, scratch: Path) -> dict[str, Path]:
    """Build both releases of the course at ``root`` in ``scratch``: {language: folder}."""
    shutil.copytree(root / "source" / ASSIGNMENT, scratch / "source" / ASSIGNMENT,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    for name in ("i18n", "assets"):
        shutil.copytree(root / name, scratch / name)
    shutil.copy(root / "nbgrader_config.py", scratch)
    nbgrader("generate_assignment", ASSIGNMENT, "--force", root=scratch, quiet=True)
    translation.write_release(scratch, "ko")
    return {lang: translation.release_dir(scratch, lang) for lang in LANGUAGES}


def differences(built: Path, committed: Path) -> list[str]:
    """The notebooks of ``committed`` that a fresh build (``built``) would make otherwise."""
    names = {p.name for p in built.glob("*.ipynb")} | {p.name for p in committed.glob("*.ipynb")}
    out = []
    for name in sorted(names):
        fresh, ours = built / name, committed / name
        if not fresh.exists() or not ours.exists() \
                or json.loads(fresh.read_text(encoding="utf-8")) \
                != json.loads(ours.read_text(encoding="utf-8")):
            out.append(f"{committed.parent.name}/{committed.name}/{name}")
    return out


def stale(root: Path) -> list[str]:
    """Every committed release notebook that differs from a fresh build of the sources."""
    with tempfile.TemporaryDirectory() as tmp:
        built = fresh_build(root, Path(tmp))
        return [d for lang, folder in built.items()
                for d in differences(folder, translation.release_dir(root, lang))]
