"""nbgrader's exchange, end to end, as real Unix accounts: an instructor and two students.

The instructor releases week 4 into an exchange folder made as nbgrader's documentation says
(everyone may read and write it); each student fetches it in their own home, answers
notebook 01 and submits — Ann twice (the later submission counts: nbgrader collect keeps the
newest), Ben a Colab copy (``Copy of 01_….ipynb``) he never answered; the instructor collects,
grades with this course's config and sandbox (``python -m autograder grade``, what
``make grade`` runs) and releases feedback; each student fetches feedback and finds only their
own, and can list neither the other's submission nor the feedback folder.

Needs root (``useradd``; CI runs as root), bubblewrap, and util-linux's ``setpriv`` and
``unshare``: where the course's Python lives in a folder other accounts cannot enter
(``/root/.pyenv``, as on this CI image), each account's commands run in a private mount
namespace in which that folder holds only the Python and the course — what a hub's image with
a shared environment gives. Skips with the reason otherwise.
Graded: one notebook (01, no GPU kernels) for two students.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

import sample_class as samples
from autograder.runner.names import ASSIGNMENT, COURSE_ID

ROOT = Path(__file__).resolve().parents[1]
NB1 = "01_arithmetic_intensity"
pytestmark = pytest.mark.slow


def private_folders(paths: list[Path]) -> dict[Path, list[str]]:
    """Where ``paths`` sit in folders other accounts may not enter (``/root``, or a clone in a
    ``mktemp -d`` folder, mode 700): each such folder and its children on the way to them;
    empty when every account can reach them."""
    found: dict[Path, set[str]] = {}
    for path in paths:
        parts = path.resolve().parts
        for i in range(1, len(parts) + 1):
            folder = Path(*parts[:i])
            if not folder.stat().st_mode & 0o001:
                # the way on, or, where the path itself is the private folder, all it holds
                shown = {parts[i]} if i < len(parts) else {p.name for p in folder.iterdir()}
                found.setdefault(folder, set()).update(shown)
                break
    return {folder: sorted(children) for folder, children in found.items()}


#: set by the fixture: the private folders with their children to show, a staging folder
REACH: dict[str, object] = {}


def _run(cmd: list[str], user: str | None = None, cwd: Path | None = None,
         env: dict[str, str] | None = None, check: bool = True, timeout: float = 600
         ) -> subprocess.CompletedProcess:
    """Run ``cmd`` as root or as ``user``. Where the course's Python lives in a folder other
    accounts cannot enter (``/root/.pyenv``), the user's command runs in a private mount
    namespace in which that folder is an empty one holding only the Python and the course —
    as in a container image; nothing changes outside the namespace."""
    if user is not None:
        pw = pwd.getpwnam(user)
        drop = ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups",
                "--"]
        if REACH:
            folders, stage = REACH["folders"], REACH["stage"]
            script = "set -e\n"
            for n, (folder, children) in enumerate(folders.items()):  # type: ignore[union-attr]
                for child in children:
                    script += f'mount --bind "{folder}/{child}" "{stage}/{n}/{child}"\n'
                script += f'mount -t tmpfs -o mode=755 tmpfs "{folder}"\n'
                for child in children:
                    make = "mkdir -p" if (folder / child).is_dir() else "touch"
                    script += (f'{make} "{folder}/{child}"\n'
                               f'mount --bind "{stage}/{n}/{child}" "{folder}/{child}"\n')
            script += 'exec "$@"\n'
            cmd = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script,
                   "sh", *drop, *cmd]
        else:
            cmd = [*drop, *cmd]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(cmd[-6:])} as {user or 'root'} failed:\n"
                             f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


@pytest.fixture(scope="module")
def accounts():
    """Three fresh accounts (instructor, two students) and a world-traversable work folder;
    everything is removed afterwards."""
    if os.geteuid() != 0:
        pytest.skip("the exchange test creates Unix accounts (useradd): it needs root, as CI "
                    "has; run it as root to check the exchange")
    if shutil.which("useradd") is None or shutil.which("userdel") is None:
        pytest.skip("useradd/userdel not installed: cannot create the test's accounts")
    for tool in ("bwrap", "setpriv", "unshare"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed: the test needs bubblewrap (the sandbox) "
                        "and util-linux's setpriv and unshare")
    tag = uuid.uuid4().hex[:6]
    users = {"instructor": f"w4i{tag}", "ann": f"w4a{tag}", "ben": f"w4b{tag}"}
    base = Path(tempfile.mkdtemp(prefix="week4-exchange-", dir="/tmp"))
    base.chmod(0o755)
    made = []
    try:
        for name in users.values():
            _run(["useradd", "--create-home", "--shell", "/bin/sh", name])
            made.append(name)
        python = Path(sys.executable)
        private = private_folders([Path(sys.base_prefix), Path(sys.prefix), ROOT])
        if private:
            stage = base / "stage"
            for n, (folder, children) in enumerate(private.items()):
                for child in children:  # a mount point of the same kind as what is bound there
                    (stage / str(n)).mkdir(parents=True, exist_ok=True)
                    if (folder / child).is_dir():
                        (stage / str(n) / child).mkdir()
                    else:
                        (stage / str(n) / child).touch()
            REACH.update(folders=private, stage=stage)
        probe = _run([str(python), "-c", "import nbgrader, course, autograder"], users["ann"],
                     cwd=base, env={"PATH": "/usr/bin:/bin"}, check=False)
        if probe.returncode != 0:
            pytest.skip(f"the test's accounts cannot run {python} with the course's packages: "
                        f"{probe.stderr.strip()[-300:]}")
        yield users, base, python
    finally:
        REACH.clear()
        for name in made:
            subprocess.run(["userdel", "--remove", name], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def test_release_fetch_submit_collect_grade_feedback(accounts) -> None:
    users, base, python = accounts
    started = time.monotonic()
    exchange = base / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)  # nbgrader's docs: chmod ugo+rw on the exchange root
    course = base / "course"
    course.mkdir()
    for name in ("source", "release"):
        shutil.copytree(ROOT / name, course / name)
    shutil.copy(ROOT / "nbgrader_config.py", course)
    instructor = users["instructor"]
    _run(["chown", "-R", f"{instructor}:{instructor}", str(course)])

    def env(user: str) -> dict[str, str]:
        home = pwd.getpwnam(user).pw_dir
        config = Path(home) / ".jupyter" / "nbgrader_config.py"
        if not config.exists():  # each account's own config names the exchange, as on a hub
            config.parent.mkdir(parents=True)
            config.write_text(f"c = get_config()\nc.Exchange.root = {str(exchange)!r}\n")
            _run(["chown", "-R", f"{user}:{user}", str(config.parent)])
        return {"HOME": home, "USER": user, "LANG": "C.UTF-8",
                "PATH": f"{python.parent}:/usr/bin:/bin",
                "COURSE_CELL_TIMEOUT": os.environ.get("COURSE_CELL_TIMEOUT", "120"),
                "COURSE_GRADING_WORKERS": "2"}

    def nbgrader(user: str, *args: str, cwd: Path | None = None, check: bool = True
                 ) -> subprocess.CompletedProcess:
        where = cwd or Path(pwd.getpwnam(user).pw_dir)
        return _run([str(python), "-m", "nbgrader", *args], user, cwd=where, env=env(user),
                    check=check)

    # the instructor: the gradebook (what `make release` does besides the release), release
    nbgrader(instructor, "generate_assignment", ASSIGNMENT, "--force", cwd=course)
    nbgrader(instructor, "release_assignment", ASSIGNMENT, cwd=course)

    homes = {who: Path(pwd.getpwnam(users[who]).pw_dir) for who in ("ann", "ben")}
    solved = samples.build_notebook(ROOT, NB1, samples.sample_students()["ada_correct"])
    answer_cell = next(c for c in solved["cells"]
                       if c["metadata"].get("nbgrader", {}).get("solution"))
    answer_cell["source"] += "\n# written by ann herself"
    for who in ("ann", "ben"):
        nbgrader(users[who], "fetch_assignment", ASSIGNMENT, "--course", COURSE_ID)
        folder = homes[who] / ASSIGNMENT
        assert sorted(p.name for p in folder.glob("*.ipynb")) == sorted(
            p.name for p in (course / "release" / ASSIGNMENT).glob("*.ipynb"))
        for nb in folder.glob("*.ipynb"):  # each works on notebook 01 only
            if nb.name != f"{NB1}.ipynb":
                _run(["rm", str(nb)], users[who])
    # Ann submits the notebook untouched, then her answers: the later submission counts
    nbgrader(users["ann"], "submit", ASSIGNMENT, "--course", COURSE_ID)
    time.sleep(1.1)
    answer = base / "ann-answers.ipynb"  # what her editor saves, copied by her
    answer.write_text(json.dumps(solved))
    answer.chmod(0o644)
    _run(["cp", str(answer), str(homes["ann"] / ASSIGNMENT / f"{NB1}.ipynb")], users["ann"])
    nbgrader(users["ann"], "submit", ASSIGNMENT, "--course", COURSE_ID)
    # Ben hands in Colab's copy of the notebook, unanswered
    _run(["mv", str(homes["ben"] / ASSIGNMENT / f"{NB1}.ipynb"),
          str(homes["ben"] / ASSIGNMENT / f"Copy of {NB1}.ipynb")], users["ben"])
    nbgrader(users["ben"], "submit", ASSIGNMENT, "--course", COURSE_ID)
    # a student can neither list the others' submissions nor the feedback
    peek = _run([str(python), "-c", "import os, sys; os.listdir(sys.argv[1])",
                 str(exchange / COURSE_ID / "inbound")], users["ben"], check=False,
                env=env(users["ben"]))
    assert peek.returncode != 0 and "PermissionError" in peek.stderr

    # the instructor collects, grades (make grade), releases feedback
    nbgrader(instructor, "collect", ASSIGNMENT, cwd=course)
    assert sorted(p.name for p in (course / "submitted").iterdir()) == sorted(
        [users["ann"], users["ben"]])
    table = course / "table.json"
    graded = _run([str(python), "-m", "autograder", "grade", "--root", str(course),
                   "--json", str(table)],
                  instructor, cwd=course, env=env(instructor), timeout=900)
    rows = json.loads(table.read_text())
    assert rows[users["ann"]]["scores"][NB1][0] == 11, graded.stdout[-3000:]
    assert rows[users["ben"]]["scores"][NB1][0] == 0
    assert any(f"'Copy of {NB1}.ipynb' graded as {NB1}" in n for n in rows[users["ben"]]["notes"])
    nbgrader(instructor, "release_feedback", ASSIGNMENT, cwd=course)
    peek = _run([str(python), "-c", "import os, sys; os.listdir(sys.argv[1])",
                 str(exchange / COURSE_ID / "feedback")], users["ann"], check=False,
                env=env(users["ann"]))
    assert peek.returncode != 0 and "PermissionError" in peek.stderr

    # each student fetches feedback: their own notebook, their own score
    pages = {}
    for who in ("ann", "ben"):
        nbgrader(users[who], "fetch_feedback", ASSIGNMENT, "--course", COURSE_ID)
        found = sorted((homes[who] / ASSIGNMENT / "feedback").rglob("*.html"))
        assert len(found) == 1, (who, found)
        pages[who] = found[0]
    assert pages["ann"].name == f"{NB1}.html"
    assert pages["ben"].name == f"Copy of {NB1}.html"  # under the name he handed in
    ann, ben = pages["ann"].read_text(), pages["ben"].read_text()
    assert "written by ann herself" in ann and "written by ann herself" not in ben
    assert "Score: 11.0 / 11.0" in ann and "Score: 0.0 / 11.0" in ben
    print(f"exchange cycle, two students, notebook 01: {time.monotonic() - started:.0f} s")
