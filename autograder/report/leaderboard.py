"""``report/leaderboard.html``: the class's fastest correct tiled kernels, for students to see.

Written only when the instructor asks (``make report LEADERBOARD=1``). One table per GPU
model (times on different GPUs are not comparable), ranked by the tiled kernel's GFLOP/s at
the graded size; only kernels whose notebook passed every other check (a measured speedup is
itself verified at the graded size). Students appear by a pseudonym, never a name or id: the
pseudonyms are kept in :data:`MAPPING_NAME` beside the report, for the instructor alone (keep
it out of what you publish), and a student keeps theirs from one report to the next.
"""

from __future__ import annotations

import csv
import io
import secrets
from pathlib import Path

from autograder.report.page import page, table, text
from autograder.report.records import ClassReport, Kernel
from course.runtime.i18n import in_language

PAGE_NAME = "leaderboard.html"
MAPPING_NAME = "leaderboard-pseudonyms.csv"
#: kernels shown per GPU model
SHOWN = 20
_ADJECTIVES = ("amber", "brisk", "calm", "deft", "eager", "fleet", "gentle", "keen", "lucid",
               "mellow", "nimble", "quiet", "rapid", "sly", "steady", "swift", "vivid", "witty")
_ANIMALS = ("badger", "crane", "dolphin", "falcon", "gecko", "heron", "ibex", "koala", "lynx",
            "marten", "newt", "otter", "panda", "quail", "raven", "seal", "tapir", "wren")


def read_mapping(path: Path) -> dict[str, str]:
    """student -> pseudonym, as a previous report kept them (empty if none)."""
    if not path.is_file():
        return {}
    with path.open(newline="", encoding="utf-8") as fh:
        return {row["student"]: row["pseudonym"] for row in csv.DictReader(fh)
                if row.get("student") and row.get("pseudonym")}


def pseudonyms(students: list[str], known: dict[str, str]) -> dict[str, str]:
    """A pseudonym for every student: the one they had, else a new random one (never derived
    from their id, so it cannot be worked back without the mapping)."""
    mapping = dict(known)
    taken = set(mapping.values())
    for student in students:
        while student not in mapping:
            name = (f"{secrets.choice(_ADJECTIVES)}-{secrets.choice(_ANIMALS)}-"
                    f"{secrets.randbelow(90) + 10}")
            if name not in taken:
                mapping[student] = name
                taken.add(name)
    return mapping


def ranked(report: ClassReport) -> dict[str, list[Kernel]]:
    """GPU model -> its correct tiled kernels, fastest first."""
    boards: dict[str, list[Kernel]] = {}
    for k in report.kernels:
        if k.correct and k.tiled_gflops > 0:
            boards.setdefault(k.device or "?", []).append(k)
    return {gpu: sorted(ks, key=lambda k: -k.tiled_gflops)[:SHOWN]
            for gpu, ks in sorted(boards.items())}


def write(folder: Path, report: ClassReport) -> Path:
    """Write the leaderboard and the pseudonyms' mapping into ``folder``; the page's path."""
    mapping_path = folder / MAPPING_NAME
    boards = ranked(report)
    students = sorted({k.student for ks in boards.values() for k in ks})
    mapping = pseudonyms(students, read_mapping(mapping_path))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["student", "pseudonym"])
    writer.writerows(sorted(mapping.items()))
    mapping_path.write_text(out.getvalue(), encoding="utf-8")
    lang = report.language
    parts = ["<p>", text(in_language(
        lang, "The fastest correct tiled kernels of the class, timed by the grader at the "
        "graded size, one table per GPU model. Names are pseudonyms: ask your instructor "
        "which one is yours.")), "</p>"]
    if not boards:
        parts.append("<p>" + text(in_language(lang, "No kernel was measured on a GPU.")) + "</p>")
    head = ["#", in_language(lang, "pseudonym"), in_language(lang, "tiled GFLOP/s"),
            in_language(lang, "speedup"), in_language(lang, "tile")]
    for gpu, kernels in boards.items():
        parts.append(f"<h2>{text(gpu)}</h2>")
        parts.append(table(head, [[n, mapping[k.student], f"{k.tiled_gflops:.0f}",
                                   f"{k.speedup:.2f}×", k.tile]
                                  for n, k in enumerate(kernels, start=1)],
                           frozenset({0, 2, 3, 4})))
    path = folder / PAGE_NAME
    path.write_text(page(lang, in_language(lang, "Week 4: the fastest tiled kernels"),
                         "".join(parts)), encoding="utf-8")
    return path
