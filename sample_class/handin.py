"""Sample students who hand in the ways a real class does, not as ``submitted/<id>/week4/…``.

A student spec with ``HANDIN`` set (see :mod:`sample_class`) is written as the
instructor receives it:

``"canvas"`` / ``"moodle"``  into a bulk download of that LMS (``sample-lms/<lms>.zip``) under
             ``LMS_ID`` (the LMS's own id; ``sample-lms/ids.csv`` maps it to the sample id, the
             mapping file an instructor would write); ``LATE`` marks a Canvas upload late;
``"colab"``  into ``submitted/<id>/week4/`` under the names a Colab or browser download gives.

``UPLOADED_AS`` {notebook: file name} names each handed-in file (a Moodle name may hold
folders); ``OLDER_UPLOAD`` {notebook: file name}: an earlier upload of that notebook, the
release left unanswered, one day older (the newer must be the one graded); ``EXTRA_FILES``
{file name: "blank"}: a notebook that is none of the assignment's (reported, not graded).
The harness's demo collects the zips (``make collect``'s code) before grading.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

from autograder.runner.names import ASSIGNMENT
from autograder.handin import collect as handin_collect

FOLDER = "sample-lms"
MAPPING = "ids.csv"
_NEW = (2026, 11, 20, 12, 0, 0)
_OLD = (2026, 11, 19, 12, 0, 0)


def reset(root: Path) -> None:
    """Forget the zips of an earlier demo."""
    shutil.rmtree(root / FOLDER, ignore_errors=True)


def _add(archive: Path, name: str, nb: dict[str, Any],
         when: tuple[int, int, int, int, int, int]) -> None:
    archive.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive, "a" if archive.exists() else "w", zipfile.ZIP_DEFLATED) as zf:
        info = zipfile.ZipInfo(name, date_time=when)
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, json.dumps(nb, indent=1))


def _lms_name(spec: ModuleType, sid: str, upload: str, serial: int) -> str:
    if spec.HANDIN == "canvas":
        late = "_LATE" if getattr(spec, "LATE", False) else ""
        return f"{sid.split('_')[0]}{late}_{spec.LMS_ID}_{700000 + serial}_{upload}"
    full = sid.split("_")[0].capitalize() + " Sample"
    return f"{full}_{spec.LMS_ID}_assignsubmission_file_/{upload}"


def write(root: Path, submitted: Path, sid: str, spec: ModuleType,
          notebooks: dict[str, dict[str, Any]], release: dict[str, dict[str, Any]]) -> None:
    """Hand ``notebooks`` (name -> the student's notebook) in the way ``spec.HANDIN`` says;
    ``release`` holds the release notebooks (for older uploads)."""
    names = getattr(spec, "UPLOADED_AS", {})
    older = getattr(spec, "OLDER_UPLOAD", {})
    extra = {name: {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
             for name in getattr(spec, "EXTRA_FILES", {})}
    if spec.HANDIN == "colab":
        folder = submitted / sid / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        for notebook, nb in notebooks.items():
            (folder / names.get(notebook, f"{notebook}.ipynb")).write_text(json.dumps(nb))
        for name, nb in extra.items():
            (folder / name).write_text(json.dumps(nb))
        return
    if spec.HANDIN not in ("canvas", "moodle"):
        raise ValueError(f"{sid}: HANDIN is canvas, moodle or colab, not {spec.HANDIN!r}")
    archive = root / FOLDER / f"{spec.HANDIN}.zip"
    serial = 2 * int(spec.LMS_ID)
    for notebook, name in older.items():
        _add(archive, _lms_name(spec, sid, name, serial), release[notebook], _OLD)
    for notebook, nb in notebooks.items():
        name = names.get(notebook, f"{notebook}.ipynb")
        _add(archive, _lms_name(spec, sid, name, serial + 1), nb, _NEW)
    for name, nb in extra.items():
        _add(archive, _lms_name(spec, sid, name, serial + 1), nb, _NEW)
    with open(root / FOLDER / MAPPING, "a") as fh:
        fh.write(f"{spec.LMS_ID},{sid}\n")


def zips(root: Path) -> list[Path]:
    """The sample LMS downloads written by :func:`write` (canvas.zip, moodle.zip)."""
    return sorted((root / FOLDER).glob("*.zip"))


def collect(root: Path, run: handin_collect.RunNbgrader) -> None:
    """Collect the sample LMS downloads into ``submitted/`` with ``make collect``'s code."""
    for archive in zips(root):
        if handin_collect.collect_zip(root, archive, run, layout=archive.stem,
                                      mapping=root / FOLDER / MAPPING):
            raise SystemExit(f"the sample class's {archive.name} could not be collected")
