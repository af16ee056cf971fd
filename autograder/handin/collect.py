"""``make collect ZIP=download.zip``: an LMS's bulk download into ``submitted/``.

The zip is copied to ``downloaded/<assignment>/archive/`` (nbgrader's layout for
``zip_collect``) and ``nbgrader zip_collect <assignment> --force`` runs with this course's
plugins (:mod:`autograder.handin.lms`): each student's newest copy of each notebook lands in
``submitted/<student>/<assignment>/<release name>.ipynb`` (a student found in the zip has
their folder replaced by what the zip holds). Then the summary is printed and the rows of the
zip written to ``collection.csv`` (:mod:`autograder.handin.report`; step ``zip <file name>``,
so several zips — one per LMS section — can be collected one after the other).
"""

from __future__ import annotations

import argparse
import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

from autograder.handin import lms, report
from autograder.runner.names import ASSIGNMENT

#: runs one nbgrader command in the course directory; False when it failed
RunNbgrader = Callable[..., bool]


def _entries(report_file: Path, step: str, tried: list[str], mapping: dict[str, str]
             ) -> list[report.Entry]:
    rows = []
    if report_file.exists():
        for line in report_file.read_text().splitlines():
            row = json.loads(line)
            student = row.get("student", "")
            unsafe = row.get("detail", "").startswith(("unsafe path", "a symbolic link"))
            if not student and not unsafe:  # refused before the collector saw it: whose?
                info = lms.parse(row["handed_in"], tried)
                if info is not None and lms.SAFE_ID.match(info["student_id"]):
                    student = mapping.get(info["student_id"], info["student_id"])
            rows.append(report.Entry(step, student, row["handed_in"],
                                     row.get("notebook", ""), row["outcome"],
                                     row.get("detail", "")))
    return rows


def collect_zip(root: Path, archive: Path, run: RunNbgrader, *, layout: str = "auto",
                regex: str = "", mapping: Path | None = None) -> int:
    """Collect ``archive`` into ``root``'s ``submitted/``; print the summary; return the exit
    status (1 when nothing could be collected from it)."""
    if not archive.is_file():
        raise SystemExit(f"no such file: {archive} (usage: make collect ZIP=path/to/"
                         "download.zip)")
    if not zipfile.is_zipfile(archive):
        raise SystemExit(f"{archive} is not a zip archive (its bytes are no zip): download "
                         "the submissions again from the LMS, as one zip")
    try:
        with zipfile.ZipFile(archive) as zf:
            files = [i for i in zf.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, OSError) as exc:
        raise SystemExit(f"{archive} is a damaged zip archive ({exc})") from None
    if not files:
        raise SystemExit(f"{archive} is an empty zip archive: no files in it")
    if mapping is not None:
        if not mapping.is_file():
            raise SystemExit(f"no such mapping file: {mapping}")
        try:
            lms.read_mapping(str(mapping))
        except ValueError as exc:
            raise SystemExit(str(exc)) from None
    if not regex and layout not in ("auto", *lms.LAYOUTS):  # checked before any work
        raise SystemExit(f"unknown LMS layout {layout!r}: choose {', '.join(lms.LAYOUTS)} "
                         "or auto, or give --regex")
    release_dir = root / "release" / ASSIGNMENT
    if not any(release_dir.glob("*.ipynb")):
        raise SystemExit(f"no release notebooks in {release_dir}: run `make release` first")
    base = root / "downloaded" / ASSIGNMENT
    lms.clear(base / "archive")
    lms.clear(base / "extracted")
    shutil.copy2(archive, base / "archive" / archive.name)
    report_file = base / "collect-report.jsonl"
    report_file.unlink(missing_ok=True)
    limit = report.limit_bytes()
    args = ["zip_collect", ASSIGNMENT, "--force",
            "--extractor=autograder.handin.lms.SafeExtractor",
            "--collector=autograder.handin.lms.LmsCollector",
            f"--SafeExtractor.report_file={report_file}",
            f"--SafeExtractor.max_bytes={limit}",
            f"--LmsCollector.report_file={report_file}",
            f"--LmsCollector.max_bytes={limit}",
            f"--LmsCollector.release_dir={release_dir}",
            f"--LmsCollector.extracted_dir={base / 'extracted'}",
            f"--LmsCollector.layout={layout}"]
    if regex:
        args.append(f"--LmsCollector.named_regexp={regex}")
    if mapping is not None:
        args.append(f"--LmsCollector.mapping_file={mapping.resolve()}")
    ok = run(*args, root=root, check=False)
    step = f"zip {archive.name}"  # collecting another zip keeps this one's rows
    entries = _entries(report_file, step, lms.patterns(layout, regex),
                       lms.read_mapping(str(mapping)) if mapping else {})
    # every student the zip names gets a folder, so a row in the grade table, even when none
    # of their files could be graded
    for student in {e.student for e in entries if e.student}:
        (root / "submitted" / student / ASSIGNMENT).mkdir(parents=True, exist_ok=True)
    csv_path = report.write(root, entries, step)
    print(report.summary(entries, root / "submitted", f"collected {archive.name}"))
    print(f"(every file and what became of it: {csv_path})")
    collected = [e for e in entries if e.outcome in ("kept", "renamed")]
    if not ok:
        print(f"ERROR: nbgrader zip_collect failed; see {root / '.nbgrader.log'}")
        return 1
    if not collected:
        print(f"ERROR: no notebook could be collected from {archive.name}")
        return 1
    return 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The harness's options for ``collect``."""
    parser.add_argument("--zip", default="", help="collect: the LMS's bulk download (a zip)")
    parser.add_argument("--layout", default="auto", help="collect: the LMS's file names: "
                        "canvas, moodle or auto (either)")
    parser.add_argument("--regex", default="", help="collect: another LMS's file names, as "
                        "a regular expression with nbgrader's named groups (docs/grading.md)")
    parser.add_argument("--mapping", type=Path, help="collect, export, return: a CSV of "
                        "lms_id,student_id (the LMS's ids of your students)")


def from_arguments(args: argparse.Namespace, run: RunNbgrader) -> int:
    """``python -m autograder collect --zip …``: the exit status."""
    if not args.zip:
        raise SystemExit("collect needs the zip: make collect ZIP=path/to/download.zip")
    return collect_zip(args.root.resolve(), Path(args.zip).resolve(), run, layout=args.layout,
                       regex=args.regex,
                       mapping=args.mapping.resolve() if args.mapping else None)
