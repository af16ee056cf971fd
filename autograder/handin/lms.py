"""nbgrader ``zip_collect`` plugins for an LMS's bulk download: a safe extractor, a collector.

``make collect ZIP=…`` (:mod:`autograder.handin.collect`) runs ``nbgrader zip_collect`` with
these two plugins:

:class:`SafeExtractor` opens each archive itself instead of nbgrader's ``unpack_archive``: a
file that is not a zip, an empty zip, a member whose path leaves the folder (``../../x``, an
absolute path, a link), a member over the size limit or one that fails its checksum is refused
and reported by name; the rest is extracted. Every member keeps the zip's time stamp, so "the
newer file wins" compares upload times.

:class:`LmsCollector` reads the student and the notebook from each file's path, for
:data:`LAYOUTS` (Canvas, Moodle) or any ``named_regexp`` with nbgrader's named groups
(``student_id``, ``file_id``, optional ``timestamp``); maps LMS ids to course ids through an
optional CSV (``lms_id,student_id``); recognises the notebook (:mod:`.recognise`: Colab's
``Copy of``, a browser's ``(1)``, Canvas's ``-1``, or the cells); and, of two files that become
one student's same notebook, hands only the newer to nbgrader. What it did with every file is
appended as JSON lines to ``report_file``.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import re
import shutil
import stat
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from nbgrader.plugins import ExtractorPlugin, FileNameCollectorPlugin
from traitlets import Int, Unicode

from autograder.handin.recognise import Release, classify
from autograder.handin.tidy import hidden
from autograder.viewing import names

#: file-name patterns of the LMSs' bulk downloads, applied to the path inside the download.
LAYOUTS = {
    # <name>[_LATE]_<user id>_<attachment id>_<file as uploaded>
    "canvas": r"(?:^|/)(?P<name>[^/_]+)(?P<late>_LATE)?_(?P<student_id>\d+)_"
              r"(?P<submission_id>\d+)_(?P<file_id>[^/]+)$",
    # <Full Name>_<participant id>_assignsubmission_file_/<file as uploaded> (older Moodle:
    # no folder, the file name follows the last underscore)
    "moodle": r"(?:^|/)(?P<name>[^/]+?)_(?P<student_id>\d+)_assignsubmission_file_"
              r"(?:/(?:.*/)?)?(?P<file_id>[^/]+)$",
}
#: a student id that is safe as a folder name: the course's one rule for names
SAFE_ID = re.compile(rf"^{names.SAFE_ID.pattern}\Z")


def patterns(layout: str, regex: str = "") -> list[str]:
    """The file-name patterns to try: ``regex`` if given, else the layout's (both for auto)."""
    if regex:
        return [regex]
    if layout == "auto":
        return list(LAYOUTS.values())
    if layout not in LAYOUTS:
        raise ValueError(f"unknown LMS layout {layout!r}: canvas, moodle or auto")
    return [LAYOUTS[layout]]


def parse(rel: str, tried: list[str]) -> dict[str, str] | None:
    """The named groups of the first pattern that finds a student and a file in ``rel``."""
    for pattern in tried:
        match = re.search(pattern, rel)
        if match and "student_id" in match.groupdict() and "file_id" in match.groupdict():
            return {k: v for k, v in match.groupdict().items() if v is not None}
    return None


def _report(path: str, **row: Any) -> None:
    if path:
        with open(path, "a") as fh:
            fh.write(json.dumps(row) + "\n")


def unsafe_member(info: zipfile.ZipInfo) -> str | None:
    """Why a zip member must not be extracted, or None."""
    name = info.filename.replace("\\", "/")
    parts = PurePosixPath(name).parts
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name) or ".." in parts:
        return f"unsafe path in the zip ({info.filename!r} would land outside the folder)"
    if stat.S_ISLNK(info.external_attr >> 16):
        return f"a symbolic link in the zip ({info.filename!r})"
    return None


class SafeExtractor(ExtractorPlugin):
    """Extract the archives of ``archive_path`` member by member, refusing what is unsafe."""

    report_file = Unicode("", help="append what was refused here (JSON lines)").tag(config=True)
    max_bytes = Int(50 * 2**20, help="the largest member extracted").tag(config=True)

    def extract(self, archive_path: str, extracted_path: str) -> None:
        """Extract every archive in ``archive_path`` into ``extracted_path/<archive name>``."""
        for path in sorted(Path(archive_path).rglob("*")):
            if not path.is_file():
                continue
            if not zipfile.is_zipfile(path):
                _report(self.report_file, student="", handed_in=path.name, outcome="rejected",
                        detail="not a zip archive (the file's bytes are no zip); nothing "
                        "collected from it")
                self.log.error("not a zip archive: %s", path)
                continue
            self._extract_one(path, Path(extracted_path) / path.stem)

    def _extract_one(self, archive: Path, dest: Path) -> None:
        try:
            zf = zipfile.ZipFile(archive)
        except (zipfile.BadZipFile, OSError) as exc:
            _report(self.report_file, student="", handed_in=archive.name, outcome="rejected",
                    detail=f"a damaged zip archive ({exc}); nothing collected from it")
            return
        with zf:
            members = [i for i in zf.infolist() if not i.is_dir()]
            if not members:
                _report(self.report_file, student="", handed_in=archive.name,
                        outcome="rejected", detail="an empty zip archive: no files in it")
                return
            for info in members:
                why = unsafe_member(info)
                if why is None and info.file_size > self.max_bytes:
                    why = (f"too large ({info.file_size / 2**20:.0f} MB; the limit is "
                           f"{self.max_bytes / 2**20:.0f} MB, COURSE_HANDIN_MAX_MB)")
                if why is None:
                    why = self._write(zf, info, dest)
                if why is not None:
                    _report(self.report_file, student="", handed_in=info.filename,
                            outcome="rejected", detail=f"{why}; not extracted")
                    self.log.error("%s: %s", archive.name, why)

    def _write(self, zf: zipfile.ZipFile, info: zipfile.ZipInfo, dest: Path) -> str | None:
        target = (dest / info.filename.replace("\\", "/")).resolve()
        if not target.is_relative_to(dest.resolve()):
            return f"unsafe path in the zip ({info.filename!r})"
        target.parent.mkdir(parents=True, exist_ok=True)
        written = 0
        try:
            with zf.open(info) as src, open(target, "wb") as out:
                while chunk := src.read(1 << 20):
                    written += len(chunk)
                    if written > self.max_bytes:  # the header may understate the size
                        raise ValueError("larger than its zip header says, over the limit")
                    out.write(chunk)
        except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
            target.unlink(missing_ok=True)
            return f"could not be read from the zip ({exc})"
        stamp = dt.datetime(*info.date_time).timestamp()
        os.utime(target, (stamp, stamp))
        return None


def read_mapping(path: str) -> dict[str, str]:
    """``lms_id,student_id`` rows (a header row is allowed) as a dict; errors say the line."""
    mapping: dict[str, str] = {}
    with open(path, newline="") as fh:
        for number, row in enumerate(csv.reader(fh), start=1):
            if not row or not "".join(row).strip() or row[0].startswith("#"):
                continue
            if len(row) != 2:
                raise ValueError(f"{path}, line {number}: expected two columns, "
                                 f"lms_id,student_id; got {row}")
            lms, student = row[0].strip(), row[1].strip()
            if number == 1 and not lms.isdigit() and lms.lower() in ("lms_id", "lms id", "id"):
                continue
            if not SAFE_ID.match(student):
                raise ValueError(f"{path}, line {number}: {student!r} is not a usable student "
                                 "id (letters, digits and ._@+- only)")
            mapping[lms] = student
    return mapping


class LmsCollector(FileNameCollectorPlugin):
    """Student and notebook from an LMS download's file paths; only the newest copy of each
    student's notebook is collected."""

    layout = Unicode("auto", help="canvas, moodle or auto (either); a named_regexp given "
                     "replaces them").tag(config=True)
    mapping_file = Unicode("", help="CSV of lms_id,student_id").tag(config=True)
    report_file = Unicode("", help="append what was done here (JSON lines)").tag(config=True)
    release_dir = Unicode("", help="the release notebooks' folder").tag(config=True)
    extracted_dir = Unicode("", help="zip_collect's extracted folder").tag(config=True)
    max_bytes = Int(50 * 2**20, help="the largest file read").tag(config=True)

    _plan: dict[str, dict[str, str]] | None = None

    def _make_plan(self, extracted: Path) -> dict[str, dict[str, str]]:
        release = Release.load(Path(self.release_dir))
        mapping = read_mapping(self.mapping_file) if self.mapping_file else {}
        tried = patterns(self.layout, self.named_regexp)
        claims: dict[tuple[str, str], list[tuple[tuple, str, dict[str, str]]]] = {}
        for path in sorted(p for p in extracted.rglob("*") if p.is_file()):
            rel = path.relative_to(extracted).as_posix()
            if hidden(rel):  # .ipynb_checkpoints/, __MACOSX/: never handed in on purpose
                continue
            info = parse(rel, tried)
            if info is None:
                _report(self.report_file, student="", handed_in=rel, outcome="unmatched",
                        detail="its path does not follow the LMS's naming "
                        f"({self.named_regexp or self.layout}); left in downloaded/")
                continue
            lms_id = info["student_id"]
            student = mapping.get(lms_id, lms_id)
            row = {"student": student, "handed_in": rel}
            if not SAFE_ID.match(student):
                _report(self.report_file, **row, outcome="rejected",
                        detail=f"{student!r} is not a usable student id")
                continue
            if mapping and lms_id not in mapping:
                row["note"] = f"LMS id {lms_id} is not in the mapping file"
            outcome, notebook, how, reason = classify(path, release, self.max_bytes,
                                                      name=info["file_id"])
            if outcome == "ignored":
                _report(self.report_file, **row, outcome=outcome, detail=reason)
                continue
            if outcome != "matched":
                _report(self.report_file, **row, outcome=outcome,
                        detail=f"{reason}; left in downloaded/")
                continue
            # newer: the file name's time stamp (a regex's group) if any, else the upload
            # time kept in the zip, then Canvas's growing attachment id
            rank = (info.get("timestamp", ""), path.stat().st_mtime,
                    int(info.get("submission_id") or 0))
            late = "marked late by the LMS" if info.get("late") else ""
            claims.setdefault((student, notebook), []).append(
                (rank, rel, {**row, "notebook": notebook, "how": how, "late": late,
                             "file_id": info["file_id"], "timestamp": info.get("timestamp", "")}))
        plan: dict[str, dict[str, str]] = {}
        for (student, notebook), files in sorted(claims.items()):
            files.sort(key=lambda f: f[0], reverse=True)
            (_, win_rel, win), losers = files[0], files[1:]
            for _, rel, _row in losers:
                _report(self.report_file, student=student, handed_in=rel, notebook=notebook,
                        outcome="superseded",
                        detail=f"'{PurePosixPath(win_rel).name}' is newer and maps to the "
                        "same notebook")
            exact = win["file_id"] == f"{notebook}.ipynb"
            how = "its name" if win["how"] == "name" else "its cells"
            _report(self.report_file, student=student, handed_in=win_rel, notebook=notebook,
                    outcome="kept" if exact else "renamed",
                    detail="; ".join(x for x in ("" if exact else f"recognised by {how}",
                                                 win["late"], win.get("note", "")) if x))
            plan[str(extracted / win_rel)] = win
        return plan

    def collect(self, submitted_file: str) -> dict[str, str] | None:
        """nbgrader's call for each extracted file: its student and notebook, or None."""
        if self._plan is None:  # the first call: decide for every file at once
            self._plan = self._make_plan(Path(self.extracted_dir))
        row = self._plan.get(submitted_file)
        if row is None:
            return None
        out = {"student_id": row["student"], "file_id": f"{row['notebook']}.ipynb"}
        stamp = row["timestamp"] or dt.datetime.fromtimestamp(
            Path(submitted_file).stat().st_mtime, dt.UTC).isoformat(" ")
        out["timestamp"] = stamp
        return out


def clear(folder: Path) -> None:
    """Empty ``folder`` (made if missing)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
