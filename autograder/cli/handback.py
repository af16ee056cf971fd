"""``make export LMS=canvas|moodle`` and ``make return LMS=canvas``: grades and feedback back.

``export --lms canvas [--gradebook canvas.csv]`` writes ``handback/canvas-import.csv`` (for
Canvas's Gradebook → Import) and ``handback/canvas-feedback.zip`` (for Re-Upload
Submissions); ``export --lms moodle [--worksheet moodle.csv]`` writes
``handback/moodle-worksheet.csv`` (Upload grading worksheet) and
``handback/moodle-feedback.zip`` (Upload multiple feedback files in a zip); ``return --lms
canvas [--dry-run]`` sends each student's feedback, comment and score through Canvas's API.
Each prints the paths it wrote and who is in, who is left out and why
(:mod:`autograder.handback`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from autograder.handback import canvas_csv, canvas_upload, moodle, package, roster
from autograder.handback.roster import READY, Student
from autograder.viewing.terminal import as_typed, printable

OUT = "handback"
LMSS = ("canvas", "moodle")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The harness's options for ``export`` and ``return`` (``--mapping`` is collect's)."""
    parser.add_argument("--lms", default="", help="export/return: canvas or moodle")
    parser.add_argument("--gradebook", type=Path, help="export canvas: the gradebook CSV "
                        "exported from Canvas (its students, ids and assignment columns)")
    parser.add_argument("--worksheet", type=Path, help="export moodle: the grading worksheet "
                        "downloaded from Moodle (its participants)")
    parser.add_argument("--assignment", default="", help="export canvas: the Canvas "
                        "assignment's id or title (default: a new column); return: its id")
    parser.add_argument("--course", default="", help="return: the Canvas course's id "
                        "(default: CANVAS_COURSE)")
    parser.add_argument("--out-of", type=float, help="export/return: put totals on this many "
                        "points (default: the LMS assignment's points, else the course's)")
    parser.add_argument("--include-ungraded", action="store_true", help="export/return: send "
                        "students whose written answers still wait for hand grading too")
    parser.add_argument("--include-failed", action="store_true", help="export/return: send "
                        "students whose grading failed too (what was graded)")
    parser.add_argument("--dry-run", action="store_true", help="return: print what would be "
                        "sent, send nothing")


def _summary(title: str, students: list[Student], sent: list[Student], left_out: list[str],
             never: list[str], lms: str, out_of: float | None = None) -> str:
    lines = [f"{title}: {len(students)} student(s), {len(sent)} with a grade and feedback"]
    for who in sent:
        on = f" = {roster.number(who.scaled(out_of))}/{out_of:g}" if out_of is not None else ""
        lines.append(f"  IN       {who.label()}: {who.score:g}/{who.maximum:g}{on}, "
                     f"{len(who.feedback)} feedback file(s)")
    for who in students:
        if who.state != READY:
            tag = {roster.WAITING: "WAITING", roster.FAILED: "FAILED",
                   roster.ABSENT: "ABSENT", roster.UNGRADED: "UNGRADED"}[who.state]
            lines.append(f"  {tag:<8} {who.label()}: {who.why} (nothing sent)")
    lines += [f"  MISSING  {line}" for line in left_out]
    lines += [f"  NEVER    {line}: in {lms.capitalize()}, never handed in (no grade written)"
              for line in never]
    if any(s.not_measured for s in sent):
        lines.append("  NOTE     GPU checks were not measured (no GPU): they are out of every "
                     "maximum; grade on a GPU machine for the full points")
    return printable("\n".join(lines))  # names and reasons are the students' and the LMS's


def _nothing(lms: str, students: list[Student], verb: str = "exported") -> int:
    """Nobody to hand back is not a success: say why, name the next step, exit 1."""
    ready = [s for s in students if s.state == READY]
    if not students:
        why = "the gradebook has no student"
        step = f"grade the class first ({as_typed('make grade', 'python -m autograder grade')})"
    elif not ready:
        why = f"none of the {len(students)} student(s) has a final grade (see the list above)"
        step = ("finish what the list names (hand grading in the formgrader, then "
                f"{as_typed('make table', 'python -m autograder table')}), or send what was "
                f"graded with {as_typed('INCLUDE_UNGRADED=1', '--include-ungraded')}")
    else:
        name = {"canvas": "Canvas user id", "moodle": "Moodle participant id"}[lms]
        why = f"none of the {len(ready)} ready student(s) has a {name}"
        collect = as_typed(f"make collect ZIP=<download>.zip LAYOUT={lms}",
                           f"python -m autograder collect --zip <download>.zip --layout {lms}")
        mapping = as_typed("MAPPING=ids.csv", "--mapping ids.csv")
        step = (f"collect from {lms.capitalize()}'s zip ({collect}) or give {mapping} "
                "(lms_id,student_id)")
    print(f"nothing {verb} to {lms.capitalize()}: {why}; no file was written. Next: {step}, "
          "then run it again.", file=sys.stderr)
    return 1


def _export_canvas(root: Path, args: argparse.Namespace, students: list[Student]) -> int:
    export = canvas_csv.read_export(args.gradebook.resolve()) if args.gradebook else None
    title, aid = canvas_csv.pick_assignment(export, args.assignment)
    out_of = args.out_of
    canvas_points = export.points.get(aid) if export is not None and aid else None
    if out_of is None:
        out_of = canvas_points
    elif canvas_points is not None and out_of != canvas_points:
        print(f"NOTE: OUT_OF={out_of:g}, and the assignment has {canvas_points:g} points in "
              f"Canvas: the import changes its points possible to {out_of:g}")
    path = root / OUT / "canvas-import.csv"
    written, left_out, lms_only = canvas_csv.write_import(path, students, export, title, aid,
                                                          out_of)
    members, zip_notes = package.canvas_members([s for s in students if s in written])
    archive = root / OUT / "canvas-feedback.zip"
    package.write_zip(archive, members)
    never = [f"{r.get('Student') or '(no name)'} (Canvas ID {r.get('ID') or '?'})"
             for r in lms_only]
    print(_summary("export LMS=canvas", students, written, left_out, never, "canvas", out_of))
    if not written:
        path.unlink(missing_ok=True)
        archive.unlink(missing_ok=True)
        return _nothing("canvas", students)
    for note in zip_notes:
        print(f"  ZIP      {note}")
    column = f"{title} ({aid})" if aid else f"{title} (a new assignment)"
    scale = f" on {out_of:g} points" if out_of is not None else ""
    print(f"wrote {path} (column {column}{scale}: Canvas → Grades → Import)")
    print(f"wrote {archive} ({len(members)} feedback file(s): Canvas → Grades → the "
          "assignment's menu → Re-Upload Submissions)")
    return 0


def _export_moodle(root: Path, args: argparse.Namespace, students: list[Student]) -> int:
    participants = moodle.read_worksheet(args.worksheet.resolve()) if args.worksheet else None
    worksheet, archive, written, left_out, never = moodle.write(root / OUT, students,
                                                                args.out_of, participants)
    print(_summary("export LMS=moodle", students, written, left_out, never, "moodle",
                   args.out_of))
    if not written:
        worksheet.unlink(missing_ok=True)
        archive.unlink(missing_ok=True)
        return _nothing("moodle", students)
    points = roster.points_possible(students, args.out_of)  # what the worksheet is on
    print(f"wrote {worksheet} (grades on {points:g} points: set the Moodle assignment's "
          "Maximum grade to that, or give OUT_OF=; Moodle → the assignment → Upload grading "
          "worksheet)")
    print(f"wrote {archive} (Moodle → the assignment → Upload multiple feedback files in a "
          "zip)")
    return 0


def _return_canvas(args: argparse.Namespace, students: list[Student]) -> int:
    target = canvas_upload.target_from(dict(os.environ), args.course, args.assignment)
    try:
        token, source = canvas_upload.read_token()
    except SystemExit as missing:
        if not args.dry_run:
            raise
        token, source = "", f"nowhere: {missing} before sending"
    points = roster.points_possible(students, args.out_of)
    todo, left_out = canvas_upload.plan(students, args.out_of, points)
    if args.students:  # a retry of some: the others were sent already
        only = set(args.students.split(","))
        unknown = sorted(only - {s.student for s in students})
        if unknown:
            raise SystemExit(f"not in the gradebook: {', '.join(unknown)}")
        todo = [t for t in todo if t[0].student in only]
    if args.dry_run:
        print(f"dry run: nothing is sent to {target.url} (token from {source}); would send:")
        for who, user, text in todo:
            score = roster.number(who.scaled(args.out_of))
            print(f"  PUT courses/{target.course_id}/assignments/{target.assignment_id}/"
                  f"submissions/{user}: posted_grade {score}, comment {text!r}, files "
                  + (", ".join(h.name for h in who.feedback) or "none"))
        failed: dict[str, str] = {}
    else:
        print(f"sending to {target.url}, course {target.course_id}, assignment "
              f"{target.assignment_id} (token from {source})")
        failed = canvas_upload.send(target, token, todo, args.out_of)
    if not todo:
        print(_summary("return LMS=canvas", students, [], left_out, [], "canvas", args.out_of))
        return _nothing("canvas", students, "sent")
    sent = [w for w, _, _ in todo if w.student not in failed]
    title = "return LMS=canvas" + (" (dry run: IN = would be sent)" if args.dry_run else "")
    not_sent = [f"{line} (not sent)" for line in failed.values()]
    print(_summary(title, students, sent, left_out + not_sent, [], "canvas", args.out_of))
    if failed:
        print(f"to retry only those: make return LMS=canvas STUDENTS={','.join(failed)}")
    return 1 if failed else 0


def from_arguments(args: argparse.Namespace) -> int:
    """``python -m autograder export|return …``: the exit status."""
    if args.lms not in LMSS:
        choices = as_typed("LMS=canvas or LMS=moodle", "--lms canvas or --lms moodle")
        got = f"got {args.lms}" if args.lms else "none given"
        raise SystemExit(f"{args.command} needs the LMS: {choices}; {got}")
    if args.command == "return" and args.lms != "canvas":
        moodle = as_typed("make export LMS=moodle", "python -m autograder export --lms moodle")
        raise SystemExit(f"return sends through Canvas's API only "
                         f"({as_typed('LMS=canvas', '--lms canvas')}); got {args.lms}. "
                         f"For Moodle: {moodle} and upload its two files")
    root = args.root.resolve()
    students = roster.build(root, args.mapping.resolve() if args.mapping else None,
                            args.include_ungraded, args.include_failed)
    if args.command == "return":
        return _return_canvas(args, students)
    return (_export_canvas if args.lms == "canvas" else _export_moodle)(root, args, students)
