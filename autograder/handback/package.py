"""Packing feedback for an LMS: file names made safe, zips written, Canvas's feedback zip.

Names come from student and LMS data (a student's name in Canvas, a full name in Moodle), so
every name that goes into a zip passes :func:`safe_part`: no folder separators, no ``..``, no
control characters, no leading dot or tilde, at most 100 characters. The feedback HTML itself
is student-rendered content: it is copied byte for byte, never opened, parsed or rendered.

Canvas's feedback zip is what Canvas's *Re-Upload Submissions* (Gradebook → the assignment's
menu) reads: Canvas splits each file's base name at ``_``, takes the first two parts that are
all digits as the user id and the attachment id of that user's submitted file, and adds the
file to that submission as a comment (``Assignment#generate_comments_from_files``). So each
feedback file is named ``<name>_<user id>_<attachment id>_feedback-<notebook>.html``, with the
name and notebook free of ``_``-separated all-digit parts; the same names let an instructor
match each file by eye. (Canvas shows the attached file under the name of the student's
upload it was matched to; ``make return LMS=canvas`` keeps the feedback's own names.)
"""

from __future__ import annotations

import re
import unicodedata
import zipfile
from collections.abc import Iterable
from pathlib import Path

from autograder.handback.roster import Student, canvas_ready

#: the zip's time stamp: the zip's bytes depend on the feedback alone
_STAMP = (2026, 1, 1, 0, 0, 0)


def safe_part(text: str, *, no_underscore: bool = False, fallback: str = "student") -> str:
    """``text`` as one safe path component (see the module's docstring)."""
    text = unicodedata.normalize("NFC", text)
    text = "".join(" " if unicodedata.category(c).startswith("C") else c for c in text)
    text = re.sub(r"[/\\:*?\"<>|]", " ", text)
    if no_underscore:
        text = text.replace("_", " ")
    text = re.sub(r"\.{2,}", ".", text)
    text = re.sub(r"\s+", " ", text).lstrip(".~ ")[:100].rstrip(". ")
    return text or fallback


def write_zip(path: Path, members: Iterable[tuple[str, Path]]) -> int:
    """Write ``members`` (name in the zip, file on disk) into a new zip; return their count.

    Each name is checked again here (a relative path of safe parts only), and each file is a
    plain file, never a symbolic link."""
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, source in members:
            parts = name.split("/")
            if any(p != safe_part(p, fallback="") or not p for p in parts):
                raise ValueError(f"unsafe name for a zip member: {name!r}")
            if source.is_symlink() or not source.is_file():  # a link could pack any file
                raise ValueError(f"not a plain file: {source}")
            info = zipfile.ZipInfo(name, date_time=_STAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, source.read_bytes())  # bytes as they are: never parsed
            count += 1
    return count


def canvas_name(who: Student) -> str:
    """The name part of a Canvas feedback file: Canvas's own file-name name if collected,
    else the student's; never empty, never an all-digit ``_`` part."""
    name = safe_part(who.lms_name.get("canvas") or who.name or who.student, no_underscore=True)
    return name.replace(" ", "") if not name.replace(" ", "").isdigit() else "student"


def canvas_members(students: list[Student]) -> tuple[list[tuple[str, Path]], list[str]]:
    """The Canvas feedback zip's members, and a line for each ready student left out."""
    members: list[tuple[str, Path]] = []
    ready, left_out = canvas_ready(students)
    for who, user in ready:
        if not who.feedback:
            left_out.append(f"{who.label()}: no feedback file in feedback/")
            continue
        for html in who.feedback:
            notebook = html.stem
            attachment = who.attachments.get(notebook, "")
            if not attachment.isdigit():
                attachment = next((a for a in who.attachments.values() if a.isdigit()), "0")
            if attachment == "0" and html == who.feedback[0]:
                left_out.append(f"{who.label()}: in the zip, but with no Canvas upload to "
                                "attach it to (Re-Upload Submissions skips it): `make return "
                                "LMS=canvas` sends it")
            tail = safe_part(notebook, fallback="notebook").replace("_", "-")
            members.append((f"{canvas_name(who)}_{user}_{attachment}_feedback-{tail}.html",
                            html))
    return members, left_out
