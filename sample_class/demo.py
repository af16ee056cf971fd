"""``python -m sample_class`` (``make demo``): the whole instructor pipeline on the sample class.

1. ``nbgrader generate_assignment week4`` — regenerate ``release/week4`` from ``source/``
   (and the translated releases);
2. copy each sample student's notebooks into ``submitted/<student>/week4`` (the students who
   hand in through an LMS are collected from its zip);
3. grade them and print the table, exactly as ``python -m autograder grade`` does
   (:mod:`autograder.cli.harness`).

The driver lives with the sample class, not in the grader: it imports the grader's commands,
and nothing in ``autograder`` imports ``sample_class`` (an import-linter contract in
pyproject.toml), so the grader an instructor installs has no sample answers in it.
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

import sample_class as samples
from autograder.cli import harness
from autograder.report import command as class_report
from autograder.runner.nbgrader_cli import nbgrader
from sample_class import handin as sample_handin


def stage_samples(root: Path, only: list[str] | None = None) -> list[str]:
    """Write the sample class (or ``only`` those students) into submitted/, replacing what a
    previous demo left; the students who hand in through an LMS are collected from its zip."""
    shutil.rmtree(root / "submitted", ignore_errors=True)
    ids = samples.build_class(root, root / "submitted", only)
    sample_handin.collect(root, nbgrader)
    return ids


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sample_class", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    harness.add_grading_arguments(parser)
    parser.add_argument("--class", dest="sample_class", choices=samples.CLASSES,
                        default=os.environ.get("COURSE_SAMPLE_CLASS", "core"),
                        help="the demo class (one student of every kind, a few minutes "
                        "on 2 cores), the core class (every kind, all the correct answers in "
                        "other styles: what CI checks) or the full one (every sample student); "
                        "default: COURSE_SAMPLE_CLASS, else core")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    os.chdir(root)
    harness.reset_grading_state(root)
    harness.build_release(root)
    only = args.students.split(",") if args.students else None
    which = "the students asked for" if only else f"the {args.sample_class} sample class"
    students = stage_samples(root, only or samples.class_members(args.sample_class))
    print(f"staged {len(students)} of {len(samples.class_members('full'))} sample "
          f"submissions in submitted/ ({which}; `make demo-full` grades everyone)", flush=True)
    status = harness.report(root, args, harness.grade(root, args, None))
    drawn = class_report.main(root)  # the class at a glance: its path is the demo's last line
    return status or drawn  # a report that could not be written fails the demo too
