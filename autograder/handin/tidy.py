"""Put every student's files in ``submitted/`` under the names nbgrader grades.

Runs before grading (``make grade``), on whatever put the files there: ``nbgrader collect``
from the exchange, ``make collect`` from an LMS zip, or an instructor's copy by hand. For each
student's ``submitted/<student>/<assignment>/``:

* a file with a release notebook's exact name is kept;
* a notebook under another name is recognised (:mod:`autograder.handin.recognise`) and renamed
  to the release name; two files that become the same notebook: the newer (modification
  time; for equal times the one already named right) is graded, the other set aside;
* a file that is no notebook of the assignment (unknown cells, not JSON, too large) is moved
  to ``set_aside/<student>/<assignment>/``: never graded, never deleted, and said by name in
  ``collection.csv``, the summary and the grade table;
* other files (pictures, PDFs, text that is not a notebook) stay where they are, listed as
  ignored — if their names follow the course's rule for names
  (:func:`autograder.viewing.names.is_safe`); a file named ``<img src=x onerror=…>.png`` is
  set aside, its name reported spelled out.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from autograder.handin import report
from autograder.handin.recognise import Release, classify
from autograder.runner.names import ASSIGNMENT, submitted_students
from autograder.viewing import names
from autograder.viewing.feedback import NBGRADER_FILES  # nbgrader's own files: not handed in


def hidden(rel: str) -> bool:
    """Files no one handed in on purpose: Jupyter's ``.ipynb_checkpoints/``, dot files, the
    ``__MACOSX/`` folder of a zip made on a Mac."""
    return any(part.startswith(".") or part == "__MACOSX" for part in rel.split("/"))


def _set_aside(root: Path, student: str, path: Path) -> None:
    target = root / report.SET_ASIDE / student / ASSIGNMENT / path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        target.unlink()
    shutil.move(str(path), target)


def tidy_student(root: Path, student: str, release: Release, limit: int) -> list[report.Entry]:
    """Tidy one student's folder; return what was done with each file."""
    folder = root / "submitted" / student / ASSIGNMENT
    entries: list[report.Entry] = []

    def entry(name: str, notebook: str, outcome: str, detail: str = "") -> None:
        entries.append(report.Entry("folder", student, name, notebook, outcome, detail))

    claims: dict[str, list[tuple[Path, str]]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel in NBGRADER_FILES or hidden(rel):
            continue
        outcome, notebook, how, reason = classify(path, release, limit)
        if outcome == "ignored" and all(names.is_safe(part) for part in rel.split("/")):
            entry(rel, "", outcome, reason)  # notes.txt: leave it be
            continue
        if outcome == "ignored":  # a name that is markup or a path trick: out of every view
            _set_aside(root, student, path)
            entry(rel, "", "rejected", f"its name is not a safe name (letters, digits and "
                  f". _ @ + - only); moved to {report.SET_ASIDE}/{student}/")
            continue
        if outcome != "matched":
            _set_aside(root, student, path)
            entry(rel, "", outcome, f"{reason}; moved to {report.SET_ASIDE}/{student}/")
            continue
        claims.setdefault(notebook, []).append((path, how))
    for notebook, files in sorted(claims.items()):
        exact = f"{notebook}.ipynb"
        # newest first; for equal times, the file that already has the right name
        files.sort(key=lambda f: (f[0].stat().st_mtime, f[0].relative_to(folder).as_posix()
                                  == exact), reverse=True)
        (winner, how), losers = files[0], files[1:]
        win_rel = winner.relative_to(folder).as_posix()
        for path, _ in losers:
            rel = path.relative_to(folder).as_posix()
            _set_aside(root, student, path)
            entry(rel, notebook, "superseded",
                  f"'{win_rel}' is newer and maps to the same notebook, {notebook}; "
                  f"moved to {report.SET_ASIDE}/{student}/")
        if win_rel == exact:
            entry(win_rel, notebook, "kept")
            continue
        target = folder / exact
        winner.rename(target)
        entry(win_rel, notebook, "renamed",
              "recognised by its name" if how == "name" else "recognised by its cells")
    for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
        if not any(sub.iterdir()):
            sub.rmdir()
    return entries


def tidy(root: Path, students: list[str] | None = None) -> list[report.Entry]:
    """Tidy ``submitted/`` (or these ``students`` of it), write the folder rows of
    ``collection.csv`` and return them."""
    release = Release.load(root / "release" / ASSIGNMENT)
    limit = report.limit_bytes()
    submitted = root / "submitted"
    everyone = submitted_students(root)
    entries: list[report.Entry] = []
    for student in everyone:
        if students is not None and student not in students:
            continue
        folder = submitted / student / ASSIGNMENT
        folder.mkdir(exist_ok=True)
        # files put straight into submitted/<student>/ belong in its assignment folder
        for path in sorted(p for p in (submitted / student).iterdir() if p.is_file()):
            if not (folder / path.name).exists():
                path.rename(folder / path.name)
        entries += tidy_student(root, student, release, limit)
    # grading some students keeps the others' rows; grading everyone replaces them all
    keep = [e for e in report.read(root) if e.step == "folder" and e.student not in students
            ] if students is not None else []
    report.write(root, keep + entries, "folder")
    return entries
