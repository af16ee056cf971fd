"""What ``make grade`` does before the first student is graded.

1. **The gradebook knows the assignment.** ``nbgrader autograde`` needs the assignment, its
   notebooks and their graded cells in ``gradebook.db``, which ``nbgrader generate_assignment``
   writes. In a fresh course directory (a clone, a new term, a deleted gradebook) there is
   none: it is added from ``source/`` — into a scratch release folder when ``release/`` is
   already there, so the release students were given is not rewritten — or, without
   ``source/``, grading stops with one line saying what to run first.
2. **Every student id is a safe name** (:func:`autograder.handin.ids.settle_ids`): a folder
   that ``nbgrader collect`` or a hand copy named with markup is graded under a safe alias.
3. **``submitted/`` holds what nbgrader grades** (:func:`autograder.handin.tidy.tidy`), and the
   collection summary is printed and written to ``collection.csv``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from autograder.handin import ids, report, tidy
from autograder.runner.names import ASSIGNMENT, submitted_students

SCRATCH_RELEASE = ".gradebook-release"


def has_assignment(root: Path) -> bool:
    """True when ``gradebook.db`` has the assignment with its notebooks."""
    from nbgrader.api import Gradebook, MissingEntry

    if not (root / "gradebook.db").exists():
        return False
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        try:
            return bool(gb.find_assignment(ASSIGNMENT).notebooks)
        except MissingEntry:
            return False


def ensure_assignment(root: Path, run: Callable[..., bool]) -> None:
    """Add the assignment to the gradebook if it is not there (see the module's docstring)."""
    if has_assignment(root):
        return
    if not any((root / "source" / ASSIGNMENT).glob("*.ipynb")):
        raise SystemExit(f"gradebook.db has no assignment {ASSIGNMENT} and there is no "
                         f"source/{ASSIGNMENT} to add it from: run `make release` in the "
                         "course's folder first")
    print(f"the gradebook has no assignment {ASSIGNMENT} yet: adding it from "
          f"source/{ASSIGNMENT}", flush=True)
    if any((root / "release" / ASSIGNMENT).glob("*.ipynb")):
        scratch = root / SCRATCH_RELEASE
        try:
            run("generate_assignment", ASSIGNMENT, "--force",
                f"--CourseDirectory.release_directory={SCRATCH_RELEASE}", root=root)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    else:
        run("generate_assignment", ASSIGNMENT, "--force", root=root)


def alias_feedback(root: Path) -> list[Path]:
    """Give the feedback of a renamed notebook its handed-in name too; return the copies.

    ``nbgrader release_feedback`` files each feedback page under a hash of the notebook's
    name, and ``fetch_feedback`` looks for the name the student submitted: a student whose
    ``Copy of 01_….ipynb`` was graded as ``01_…`` would otherwise find no feedback.
    """
    copies = []
    for entry in report.read(root):
        if entry.step != "folder" or entry.outcome != "renamed" \
                or not entry.handed_in.endswith(".ipynb") or "/" in entry.handed_in:
            continue
        folder = root / "feedback" / entry.student / ASSIGNMENT
        page = folder / f"{entry.notebook}.html"
        if page.exists():
            alias = folder / f"{entry.handed_in[:-len('.ipynb')]}.html"
            shutil.copy2(page, alias)
            copies.append(alias)
    return copies


def register(root: Path, students: list[str]) -> None:
    """Put ``students`` in the gradebook without a submission: each keeps a row of zeros."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        for student in students:
            gb.update_or_create_student(student)


def ready_to_grade(root: Path, run: Callable[..., bool], students: list[str] | None = None
                   ) -> list[str]:
    """Make the gradebook and ``submitted/`` ready; print the collection summary; return the
    students (of ``students``, default everyone in ``submitted/``) with a notebook to grade.

    A student left with none (every file set aside) is not sent to nbgrader, which would
    fail on an empty folder: they are put in the gradebook, so their row, all zeros, says why.
    """
    submitted = root / "submitted"
    for entry in ids.settle_ids(root):
        print(f"  student id refused: {entry.detail}", flush=True)
    for name in ids.unsafe_gradebook_students(root):
        print(f"  the gradebook holds the student id {name}, which is not a safe name: the "
              "formgrader will not open its pages (remove it with `nbgrader db student "
              "remove`, and hand its work in under a safe id)", flush=True)
    everyone = submitted_students(root)
    unknown = sorted(set(students or ()) - set(everyone))
    if unknown:
        raise SystemExit(f"not in submitted/: {', '.join(unknown)}")
    ensure_assignment(root, run)
    entries = tidy.tidy(root, students)
    # what an LMS's zip brought, for the students in submitted/ now (an earlier zip's rows of
    # students since removed would read as if they were collected again)
    zip_rows = [e for e in report.read(root) if e.step.startswith("zip")
                and (e.student in (everyone if students is None else students)
                     or (students is None and not e.student))]
    print(report.summary(zip_rows + entries, submitted, "collection"))
    print(f"(every handed-in file and what became of it: {root / report.CSV_NAME})", flush=True)
    chosen = everyone if students is None else students
    empty = [s for s in chosen if not any((submitted / s / ASSIGNMENT).glob("*.ipynb"))]
    if empty:
        register(root, empty)
        print(f"nothing to grade for {', '.join(empty)}: each keeps a row of zeros, and its "
              "notes say why", flush=True)
    return [s for s in chosen if s not in empty]
