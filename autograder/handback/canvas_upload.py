"""``make return LMS=canvas``: each student's feedback and score into Canvas, through its API.

For each ready student with a Canvas user id, through ``canvasapi`` (the maintained client of
Canvas's REST API): the submission is looked up (``GET …/submissions/<user id>``), each
feedback file is uploaded for a comment (``POST …/submissions/<user id>/comments/files``, then
the file to the upload URL Canvas gives), and one ``PUT …/submissions/<user id>`` posts the
score (``submission[posted_grade]``) with one comment: the student's sentence, in their
language, and the files attached (``comment[file_ids]``). A dry run prints what it would send
and contacts nothing.

The token is the instructor's: read from ``CANVAS_TOKEN``, or from the file
``CANVAS_TOKEN_FILE`` names; it is handed to ``canvasapi`` and never printed, logged or
written to any file (the dry run says only where it came from).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from autograder.handback.roster import Student, canvas_ready, comment, number
from autograder.viewing.terminal import printable


@dataclass
class Target:
    """Where the upload goes: Canvas's address, the course and the assignment."""

    url: str
    course_id: str
    assignment_id: str


def read_token(env: dict[str, str] | None = None) -> tuple[str, str]:
    """The API token and where it came from (never the token itself in that description)."""
    env = dict(os.environ) if env is None else env
    if env.get("CANVAS_TOKEN"):
        return env["CANVAS_TOKEN"].strip(), "CANVAS_TOKEN"
    path = env.get("CANVAS_TOKEN_FILE", "")
    if path:
        file = Path(path).expanduser()
        if not file.is_file():
            raise SystemExit(f"CANVAS_TOKEN_FILE names no file: {file}")
        token = file.read_text().strip()
        if not token:
            raise SystemExit(f"CANVAS_TOKEN_FILE {file} is empty")
        return token, f"the file {file}"
    raise SystemExit("no Canvas API token: set CANVAS_TOKEN, or CANVAS_TOKEN_FILE to a file "
                     "that holds it (Canvas: Account → Settings → New access token)")


def target_from(env: dict[str, str], course: str, assignment: str) -> Target:
    """The upload's target from the options, else ``CANVAS_URL``, ``CANVAS_COURSE``,
    ``CANVAS_ASSIGNMENT``; each is required."""
    url = env.get("CANVAS_URL", "").rstrip("/")
    course = course or env.get("CANVAS_COURSE", "")
    assignment = assignment or env.get("CANVAS_ASSIGNMENT", "")
    missing = [n for n, v in (("CANVAS_URL", url), ("CANVAS_COURSE", course),
                              ("CANVAS_ASSIGNMENT", assignment)) if not v]
    if missing:
        raise SystemExit(f"make return LMS=canvas needs {', '.join(missing)} (Canvas's address "
                         "and the course's and assignment's ids, from the assignment's URL: "
                         ".../courses/<course>/assignments/<assignment>)")
    if not (course.isdigit() and assignment.isdigit()):
        raise SystemExit("CANVAS_COURSE and CANVAS_ASSIGNMENT are the numbers in the "
                         "assignment's URL")
    if not url.startswith(("https://", "http://")):
        raise SystemExit(f"CANVAS_URL must be the address of your Canvas (https://…), not "
                         f"{url!r}")
    return Target(url, course, assignment)


def plan(students: list[Student], out_of: float | None, points: float
         ) -> tuple[list[tuple[Student, str, str]], list[str]]:
    """(student, their Canvas user id, their comment) for each student to send, and a line for
    each ready student who cannot be sent."""
    ready, left_out = canvas_ready(students)
    return [(who, user, comment(who, points, out_of)) for who, user in ready], left_out


def send(target: Target, token: str, todo: list[tuple[Student, str, str]],
         out_of: float | None, say: Callable[[str], None] = print) -> dict[str, str]:
    """Upload every planned student; return student id -> why, for each that failed (the
    rest went)."""
    # canvasapi and its requests: the grading extras, needed by this command only
    from canvasapi import Canvas
    from canvasapi.exceptions import CanvasException
    from canvasapi.upload import Uploader
    from requests import RequestException

    canvas = Canvas(target.url, token)
    try:
        assignment = canvas.get_course(int(target.course_id)).get_assignment(
            int(target.assignment_id))
    except (CanvasException, RequestException) as exc:
        raise SystemExit(f"Canvas at {target.url} refused course {target.course_id}, "
                         f"assignment {target.assignment_id}: {exc}") from None
    failed: dict[str, str] = {}
    for who, user, text in todo:
        score = number(who.scaled(out_of))
        try:
            submission = assignment.get_submission(int(user))
            file_ids = []
            for html in who.feedback:
                # canvasapi's own uploader, with the submission's requester: one comment
                # then carries every file and the sentence (upload_comment makes one each)
                ok, answer = Uploader(
                    submission._requester,
                    f"courses/{target.course_id}/assignments/{target.assignment_id}/"
                    f"submissions/{user}/comments/files", str(html)).start()
                if not ok or "id" not in answer:
                    raise CanvasException(f"the upload of {html.name} was not accepted")
                file_ids.append(answer["id"])
            submission.edit(submission={"posted_grade": score},
                            comment={"text_comment": text, "file_ids": file_ids})
        except (CanvasException, RequestException, OSError, ValueError) as exc:
            failed[who.student] = f"{who.label()} (Canvas user {user}): {exc}"
            continue
        say(printable(f"  SENT     {who.label()}: {score} points, "
                      f"{len(file_ids)} feedback file(s)"))
    return failed
