"""Every student id in ``submitted/`` follows the one rule for names, whatever put it there.

``make collect`` refuses an LMS id that is not a safe name (:mod:`autograder.handin.lms`), but
``submitted/`` is also written by ``nbgrader collect`` from the exchange — where a student
chooses their own folder name, ``inbound/<img src=x onerror=…>+week4+<time>/``, and nbgrader
only warns — and by an instructor copying folders by hand. A name that is markup would then
become a gradebook row, a formgrader URL and a page title. :func:`settle_ids` runs before
anything else of ``make grade``: each folder of ``submitted/`` whose name breaks
:data:`autograder.viewing.names.SAFE_ID` is renamed to its safe alias
(:func:`autograder.viewing.names.safe_alias`, e.g. ``renamed-img_src_x_onerror-1a2b3c4d``)
and graded under it — never dropped — and the refused name is reported, spelled out
(:func:`autograder.viewing.names.printable`), in the collection summary, ``collection.csv``
(step ``id``) and the student's notes in the grade table. A previous copy under the same
alias (the same student collected again) is moved to ``set_aside/<alias>/`` first.

:func:`unsafe_gradebook_students` lists the gradebook's own refused ids (a student added by
hand, an old gradebook): the formgrader's pages refuse to open them
(:mod:`autograder.viewing.pages`), so the instructor is told which.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from autograder.handin import report
from autograder.viewing import names

STEP = "id"


def _why(name: str, alias: str) -> str:
    return (f"the student id {names.printable(name)} is not a safe name (letters, digits and "
            f". _ @ + - only); graded as {alias}")


def settle_ids(root: Path) -> list[report.Entry]:
    """Rename each unsafe student folder of ``submitted/`` to its safe alias; record and
    return what was done (the rows of earlier runs whose alias is still there are kept)."""
    submitted = root / "submitted"
    entries: list[report.Entry] = []
    for folder in sorted(submitted.iterdir()) if submitted.is_dir() else []:
        if not folder.is_dir() or folder.is_symlink() or names.is_safe(folder.name):
            continue
        alias = names.safe_alias(folder.name)
        target = submitted / alias
        if target.exists():
            aside = root / report.SET_ASIDE / alias / f"previous-{time.strftime('%Y%m%d%H%M%S')}"
            aside.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(target), aside)
        folder.rename(target)
        entries.append(report.Entry(STEP, alias, folder.name, alias, "renamed",
                                    _why(folder.name, alias)))
    if entries or any(e.step == STEP for e in report.read(root)):
        earlier = [e for e in report.read(root) if e.step == STEP
                   and (submitted / e.student).is_dir()
                   and e.handed_in not in {n.handed_in for n in entries}]
        report.write(root, earlier + entries, STEP)
    return entries


def unsafe_gradebook_students(root: Path) -> list[str]:
    """The gradebook's student ids that break the rule for names, spelled out (none if there
    is no gradebook)."""
    if not (root / "gradebook.db").exists():
        return []
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        return [names.printable(s.id) for s in gb.students if not names.is_safe(s.id)]
