"""``python -m autograder report`` (``make report``): the class at a glance, after grading.

Writes ``report/`` in the course directory: ``index.html`` (:mod:`autograder.report.index`),
its pictures as PNG files beside it (the page embeds the same pictures, so it can be moved or
mailed alone), ``class.json`` (everything the page says, for a spreadsheet or a script), and,
with ``--leaderboard``, ``leaderboard.html`` and its pseudonyms
(:mod:`autograder.report.leaderboard`). It reads the gradebook and the grader's records and
writes no grade.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

from autograder.report import figures, index, leaderboard
from autograder.report.records import ClassReport, Kernel, gather
from autograder.runner.names import ASSIGNMENT
from course.runtime.fonts import MissingFont

FOLDER = "report"
PAGE_NAME = "index.html"
JSON_NAME = "class.json"


class NothingGraded(Exception):
    """No gradebook or no graded notebook: the sentence says which."""


def draw(report: ClassReport) -> dict[str, bytes | None]:
    """Every picture of the report, by name (``roofline-<gpu>`` per GPU model; a
    ``noroof:<gpu>`` entry, empty, where the datasheet has no roof for the GPU)."""
    drawn: dict[str, bytes | None] = {"scores": figures.scores(report),
                                      "mistakes": figures.mistakes(report),
                                      "speeds": figures.speeds(report)}
    by_device: dict[str, list[Kernel]] = {}
    for k in report.kernels:
        by_device.setdefault(k.device, []).append(k)
    for device, kernels in sorted(by_device.items()):
        png = figures.roofline(report, device, kernels)
        slug = re.sub(r"[^A-Za-z0-9]+", "-", device).strip("-").lower() or "gpu"
        drawn[f"roofline-{slug}" if png else f"noroof:{device}"] = png
    return drawn


def write(folder: Path, report: ClassReport, with_leaderboard: bool = False) -> Path:
    """Write the report into ``folder`` (made afresh, the pseudonyms' mapping kept); the
    page's path."""
    mapping = folder / leaderboard.MAPPING_NAME
    kept = mapping.read_bytes() if mapping.is_file() else None
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    if kept is not None:
        mapping.write_bytes(kept)
    drawn = draw(report)
    for name, png in drawn.items():
        if png:
            (folder / f"{name}.png").write_bytes(png)
    (folder / JSON_NAME).write_text(json.dumps(report.as_json(), indent=1,
                                               ensure_ascii=False, default=str),
                                    encoding="utf-8")
    page = folder / PAGE_NAME
    page.write_text(index.render(report, drawn), encoding="utf-8")
    if with_leaderboard:
        leaderboard.write(folder, report)
    return page


def run(root: Path, with_leaderboard: bool = False, language: str | None = None) -> Path:
    """Gather the class of ``root`` and write its report; the page's path."""
    if not (root / "gradebook.db").is_file():
        raise NothingGraded(f"no gradebook in {root}: grade the class first (make grade)")
    if not any((root / "autograded").glob(f"*/{ASSIGNMENT}/*.trusted.json")):
        raise NothingGraded(f"no graded notebook in {root / 'autograded'}: grade the class "
                            "first (make grade)")
    return write(root / FOLDER, gather(root, language), with_leaderboard)


def main(root: Path, with_leaderboard: bool = False, language: str | None = None) -> int:
    """The command: the report written and its path printed; 1 when nothing was graded or the
    figures' font is missing (and no report of an earlier class is left to be mistaken for this
    one's)."""
    try:
        page = run(root, with_leaderboard, language)
    except (NothingGraded, MissingFont) as exc:  # a sentence, not a traceback
        for name in (PAGE_NAME, JSON_NAME, leaderboard.PAGE_NAME):
            (root / FOLDER / name).unlink(missing_ok=True)
        print(f"report: {exc}", file=sys.stderr)
        return 1
    print(f"class report: {page}")
    if with_leaderboard:
        print(f"leaderboard (for students): {page.parent / leaderboard.PAGE_NAME}; "
              f"pseudonyms (for you alone): {page.parent / leaderboard.MAPPING_NAME}")
    return 0
