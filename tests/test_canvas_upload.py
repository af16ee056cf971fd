"""``make return LMS=canvas`` against a fake Canvas: HTTP on 127.0.0.1, speaking the API's shapes.

The fake answers what ``canvasapi`` asks (the course, the assignment, a student's submission,
the two steps of a comment file's upload, the submission's update) and records every request;
each test asserts the requests themselves: paths, the token's header (and its absence on the
upload URL, which is not Canvas's API), the score, the comment in the student's language and
the files attached, byte for byte. The token must reach Canvas and nothing else: not the
output, not any file.
"""

from __future__ import annotations

import json
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import handback_course as course_data
import pytest
from handback_course import FEEDBACK

from autograder.cli import harness
from autograder.handback import canvas_upload

TOKEN = "tok-SECRET-7f3a9c"
COURSE, ASSIGNMENT_ID = "17", "1234"
API = f"/api/v1/courses/{COURSE}/assignments/{ASSIGNMENT_ID}/submissions/"


@dataclass
class Seen:
    method: str
    path: str
    auth: str
    body: bytes
    form: list[tuple[str, str]] = field(default_factory=list)


class FakeCanvas:
    """The few endpoints of Canvas's REST API the upload uses; students 4101 and 4103 only."""

    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self.uploads: dict[int, bytes] = {}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def _reply(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _record(self) -> Seen:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                seen = Seen(self.command, self.path, self.headers.get("Authorization", ""),
                            body)
                if "x-www-form-urlencoded" in self.headers.get("Content-Type", ""):
                    seen.form = urllib.parse.parse_qsl(body.decode())
                fake.seen.append(seen)
                return seen

            def do_GET(self) -> None:
                seen = self._record()
                path = urllib.parse.urlparse(seen.path).path
                if path == f"/api/v1/courses/{COURSE}":
                    return self._reply(200, {"id": int(COURSE), "name": "GPU programming"})
                if path == f"/api/v1/courses/{COURSE}/assignments/{ASSIGNMENT_ID}":
                    return self._reply(200, {"id": int(ASSIGNMENT_ID), "course_id": int(COURSE),
                                             "name": "Week 4", "points_possible": 12})
                if path.startswith(API) and path[len(API):] in ("4101", "4103"):
                    user = int(path[len(API):])
                    return self._reply(200, {"id": 90 + user % 10, "user_id": user,
                                             "assignment_id": int(ASSIGNMENT_ID)})
                self._reply(404, {"errors": [{"message": "The specified resource does not "
                                              "exist."}]})

            def do_POST(self) -> None:
                seen = self._record()
                path = urllib.parse.urlparse(seen.path).path
                if path.startswith(API) and path.endswith("/comments/files"):
                    number = len(fake.uploads) + 1
                    fake.uploads[number] = b""
                    host = f"http://127.0.0.1:{fake.port}"
                    return self._reply(200, {"upload_url": f"{host}/files/upload/{number}",
                                             "upload_params": {"filename": "x", "key": "k"}})
                if path.startswith("/files/upload/"):
                    number = int(path.rsplit("/", 1)[1])
                    fake.uploads[number] = seen.body
                    return self._reply(201, {"id": 5000 + number, "url": f"/files/{number}",
                                             "display_name": "feedback.html"})
                self._reply(404, {"errors": [{"message": "no such endpoint"}]})

            def do_PUT(self) -> None:
                seen = self._record()
                path = urllib.parse.urlparse(seen.path).path
                user = path[len(API):]
                if path.startswith(API) and user in ("4101", "4103"):
                    form = dict(seen.form)
                    return self._reply(200, {"id": 1, "user_id": int(user),
                                             "assignment_id": int(ASSIGNMENT_ID),
                                             "score": float(form["submission[posted_grade]"])})
                self._reply(404, {"errors": [{"message": "no such submission"}]})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def canvas(monkeypatch: pytest.MonkeyPatch):
    fake = FakeCanvas()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY",
                 "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("CANVAS_URL", f"http://127.0.0.1:{fake.port}")
    monkeypatch.setenv("CANVAS_COURSE", COURSE)
    monkeypatch.setenv("CANVAS_ASSIGNMENT", ASSIGNMENT_ID)
    monkeypatch.delenv("CANVAS_TOKEN", raising=False)
    monkeypatch.delenv("CANVAS_TOKEN_FILE", raising=False)
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return course_data.build(tmp_path_factory.mktemp("upload"))


def _files_holding(folder: Path, secret: str) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_each_student_gets_one_comment_with_the_file_and_the_score(
        canvas: FakeCanvas, course: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CANVAS_TOKEN", TOKEN)
    assert harness.main(["return", "--root", str(course), "--lms", "canvas"]) == 0
    out = capsys.readouterr().out
    api = [s for s in canvas.seen if s.path.startswith("/api/")]
    assert api and all(s.auth == f"Bearer {TOKEN}" for s in api)  # the token reached Canvas
    uploads = [s for s in canvas.seen if s.path.startswith("/files/")]
    assert len(uploads) == 2 and all(s.auth == "" for s in uploads)  # not to the file store
    puts = {s.path[len(API):]: s for s in canvas.seen if s.method == "PUT"}
    assert set(puts) == {"4101", "4103"}  # jane and minji; 4102 waits, vic is Moodle's
    jane, minji = dict(puts["4101"].form), dict(puts["4103"].form)
    assert jane["submission[posted_grade]"] == "12" and minji["submission[posted_grade]"] == "9"
    assert "12 of 12" in jane["comment[text_comment]"]
    assert "12" in minji["comment[text_comment]"] and "점" in minji["comment[text_comment]"]
    # every file uploaded went into that student's one comment, byte for byte
    for user, student in (("4101", "jane"), ("4103", "minji")):
        (file_id,) = [v for k, v in puts[user].form if k == "comment[file_ids][]"]
        assert FEEDBACK[student].encode() in canvas.uploads[int(file_id) - 5000]
    order = [(s.method, s.path.split("?")[0]) for s in canvas.seen if "4101" in s.path]
    assert order == [("GET", f"{API}4101"), ("POST", f"{API}4101/comments/files"),
                     ("PUT", f"{API}4101")]
    assert "SENT     jane" in out and "WAITING  4102" in out and "no Canvas user id" in out
    # the token went to Canvas and nowhere else
    assert TOKEN not in out and not _files_holding(course.parent, TOKEN)


def test_the_token_from_a_file_and_a_student_canvas_does_not_know(
        canvas: FakeCanvas, course: Path, monkeypatch, tmp_path: Path, capsys) -> None:
    secret = tmp_path / "token"
    secret.write_text(TOKEN + "\n")
    monkeypatch.setenv("CANVAS_TOKEN_FILE", str(secret))
    # 4102's written answer is not graded yet: sent anyway when asked, and Canvas has no 4102
    code = harness.main(["return", "--root", str(course), "--lms", "canvas",
                         "--include-ungraded"])
    out = capsys.readouterr().out
    assert code == 1
    assert "MISSING  4102 (Canvas user 4102)" in out
    assert "to retry only those: make return LMS=canvas STUDENTS=4102" in out
    canvas.seen.clear()  # the retry sends 4102 alone, not jane and minji again
    assert harness.main(["return", "--root", str(course), "--lms", "canvas",
                         "--include-ungraded", "--students", "4102"]) == 1
    assert {s.path for s in canvas.seen if s.path.startswith(API)} == {f"{API}4102"}
    assert all(s.auth == f"Bearer {TOKEN}" for s in canvas.seen if s.path.startswith("/api/"))
    assert TOKEN not in out and _files_holding(tmp_path, TOKEN) == [secret]
    assert not _files_holding(course.parent, TOKEN)


def test_a_dry_run_sends_nothing_and_says_what_it_would(canvas: FakeCanvas, course: Path,
                                                        monkeypatch, capsys) -> None:
    monkeypatch.setenv("CANVAS_TOKEN", TOKEN)
    assert harness.main(["return", "--root", str(course), "--lms", "canvas", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert canvas.seen == []
    assert f"PUT courses/{COURSE}/assignments/{ASSIGNMENT_ID}/submissions/4101: " \
           "posted_grade 12" in out
    assert "token from CANVAS_TOKEN" in out and TOKEN not in out


def test_without_a_token_or_the_ids_it_says_what_is_missing(canvas: FakeCanvas, course: Path,
                                                             monkeypatch) -> None:
    with pytest.raises(SystemExit, match="no Canvas API token"):
        harness.main(["return", "--root", str(course), "--lms", "canvas"])
    monkeypatch.delenv("CANVAS_COURSE")
    with pytest.raises(SystemExit, match="needs CANVAS_COURSE"):
        harness.main(["return", "--root", str(course), "--lms", "canvas"])
    assert canvas.seen == []


def test_read_token_never_says_the_token() -> None:
    token, source = canvas_upload.read_token({"CANVAS_TOKEN": f" {TOKEN} "})
    assert token == TOKEN and TOKEN not in source


def test_a_dry_run_needs_no_token(canvas: FakeCanvas, course: Path, capsys) -> None:
    assert harness.main(["return", "--root", str(course), "--lms", "canvas", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "no Canvas API token" in out and "submissions/4101: posted_grade 12" in out
    assert canvas.seen == []


def test_an_unknown_course_stops_before_anything_is_sent(canvas: FakeCanvas, course: Path,
                                                         monkeypatch) -> None:
    monkeypatch.setenv("CANVAS_TOKEN", TOKEN)
    monkeypatch.setenv("CANVAS_COURSE", "999")
    with pytest.raises(SystemExit, match="refused course 999"):
        harness.main(["return", "--root", str(course), "--lms", "canvas"])
    assert [s.method for s in canvas.seen] == ["GET"]
