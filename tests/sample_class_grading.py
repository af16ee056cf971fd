"""The sample class, graded once per test run in the background (tests/test_sample_class*.py).

Grading the core class is the longest single piece of ``make test`` (minutes of CPU). Done
inside the fixture of one test file, with ``pytest -n 2 --dist loadfile``, it was a floor: one
worker graded while the other ran everything else, and the sample-class tests ran only after.
Instead the first worker that collects a sample-class test starts this module as its own
process (:func:`start`) at the start of the run; it grades while both workers run the longest
files, and the sample-class files, collected right after those (tests/conftest.py), wait for
its result (:func:`wait`) — a class graded once, shared by every worker, read by two files.

What the process does is what the fixture did: copy the course, plant secrets outside it (files
in the home folder, /var/tmp, /srv, /opt; the instructor's environment), listen on the grading
host's loopback for ``quinn_phones_home``, run ``python -m sample_class`` on the copy with the
repository hidden from student code, then remove the secrets and write what it found
(``result.json``: exit status, output, the secret, what the listener heard).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import traceback
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: which class: the core class unless COURSE_SAMPLE_CLASS says otherwise (make test-class)
CLASS = os.environ.get("COURSE_SAMPLE_CLASS", "core")
#: these students only (of the full class), when named
ONLY = [s for s in os.environ.get("COURSE_SAMPLE_STUDENTS", "").split(",") if s]
#: The per-cell limit the class is graded with (real grading: 600 s; `make demo`: 60). The
#: slowest honest cell or check of the core class takes about 5 s on 2 cores beside the rest of
#: ``make test`` (measured in every run and held under half this limit by
#: test_sample_class.py::test_the_slowest_honest_cell_leaves_the_cell_limit_a_margin; fresh
#: clones on 2026-12-07: kernel cells at most 4.4 s, re-checks at most 5.1 s), so 30 s leaves
#: room for a busy machine, and fay_hangs's endless loop, which spins a CPU until the limit twice
#: (her notebook, then the trusted re-check), costs a minute of CPU less than at 60 s. Her
#: verdicts are the same.
CELL_TIMEOUT = "30"
#: The memory each notebook's sandbox may use (real grading: 4 GiB). sam_eats_memory fills
#: shared memory page by page until the box stops him; on the 2-core test machine a page costs
#: what the VM charges for it (3 GiB took 2.4-2.8 s alone, about 1 s per GiB, and many times
#: that beside the rest of ``make test``): at 4 GiB, two CI runs ended his 30-s cell, and the
#: 15 s after its interrupt, short of 2 GiB, and his row named a timeout, not memory. At 1 GiB
#: he needs a quarter of the pages, and his row names memory once he holds 512 MiB. Honest
#: notebooks stay far below it (measured on the core class, 2026-12-07, every box's usage
#: polled: the largest honest box peaked at 459 MiB; on ada alone, a CUDA C check's compiled
#: runner 271 MiB, the student's kernel fork-server 112, a forked kernel under 100).
MEMORY_LIMIT = "1G"
#: the longest the grading may take before the waiting tests fail (the fixture's limit)
LIMIT_S = 1800


def folder(shared: Path) -> Path:
    """Where the graded class and its result live, under the run's shared temporary folder."""
    return shared / "sample-class"


def start(shared: Path) -> subprocess.Popen | None:
    """Start grading the class in the background, unless another worker already did (the
    first to create the folder starts it); the process, or None."""
    work = folder(shared)
    try:
        work.mkdir(parents=True)
    except FileExistsError:
        return None
    with open(work / "driver.log", "w") as log:
        proc = subprocess.Popen([sys.executable, __file__, str(work)], stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True, cwd=ROOT)
    (work / "driver.pid").write_text(str(proc.pid))
    return proc


def stop(proc: subprocess.Popen, wait: bool) -> None:
    """At the end of the run: wait for the grading (a worker may still be reading it), or
    stop it and everything it started when the run was cut short."""
    if proc.poll() is None and wait:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=LIMIT_S)
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)


def wait(shared: Path) -> tuple[Path, dict, str, dict]:
    """(the graded course, the grade table, what the grading printed, the attacks: the
    planted secret and what the listener heard), once the background grading is done;
    starts it first if no worker did (a run of one sample-class test alone)."""
    start(shared)
    work = folder(shared)
    result = work / "result.json"
    deadline = time.monotonic() + LIMIT_S + 120
    while not result.exists():
        if _gone(work) and not result.exists():
            log = (work / "driver.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the sample class's grading process ended without a result: {log}")
        if time.monotonic() > deadline:
            log = (work / "driver.log").read_text(errors="replace")[-3000:]
            raise TimeoutError(f"the sample class was not graded within {LIMIT_S} s: {log}")
        time.sleep(1)
    got = json.loads(result.read_text())
    assert got["returncode"] == 0, got["stdout"][-3000:] + got["stderr"][-3000:]
    table = json.loads((work / "course" / "table.json").read_text())
    attacks = {"secret": got["secret"], "heard": [h.encode("latin-1") for h in got["heard"]]}
    return work / "course", table, got["stdout"], attacks


def _gone(work: Path) -> bool:
    """Whether the grading process has ended (False while it runs or is still starting)."""
    try:
        pid = int((work / "driver.pid").read_text())
    except (FileNotFoundError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie, not yet reaped by the worker that started it
        return (Path("/proc") / str(pid) / "stat").read_text().split(") ")[1][0] == "Z"
    except (OSError, IndexError):
        return True


def _grade(work: Path) -> None:
    """The driver: grade the class into ``work/course`` and write ``work/result.json``."""
    from loopback import Listener  # tests/, this file's folder

    from sample_class.students import quinn_phones_home

    course = work / "course"
    shutil.copytree(ROOT / "source", course / "source")
    shutil.copytree(ROOT / "i18n", course / "i18n")  # the Korean release, for its students
    shutil.copy(ROOT / "nbgrader_config.py", course)
    secret = f"planted-{uuid.uuid4().hex}"
    places = [Path.home() / f".week4-secret-{secret[-8:]}.txt"]
    places += [Path(d) / f"week4-secret-{secret[-8:]}.txt" for d in ("/var/tmp", "/srv", "/opt")
               if os.access(d, os.W_OK)]
    for place in places:
        place.write_text(secret)
    listener = Listener(quinn_phones_home.LISTEN_PORT)
    env = dict(os.environ, COURSE_SANDBOX_HIDE=str(ROOT), JUPYTERHUB_API_TOKEN=secret,
               WEEK4_PLANTED_SECRET=secret,
               COURSE_CELL_TIMEOUT=os.environ.get("COURSE_CELL_TIMEOUT", CELL_TIMEOUT),
               COURSE_MEMORY_LIMIT=os.environ.get("COURSE_MEMORY_LIMIT", MEMORY_LIMIT),
               COURSE_AFTER_TIMEOUT=os.environ.get("COURSE_AFTER_TIMEOUT", "20"))
    table = course / "table.json"
    proc = None
    try:
        only = ["--students", ",".join(ONLY)] if ONLY else []
        proc = subprocess.run([sys.executable, "-m", "sample_class", "--root",
                               str(course), "--json", str(table), "--class", CLASS, *only],
                              env=env, capture_output=True, text=True, timeout=LIMIT_S)
    finally:
        time.sleep(0.5)
        listener.close()
        for place in places:
            place.unlink(missing_ok=True)
        done = {"returncode": proc.returncode if proc else -1,
                "stdout": proc.stdout if proc else "", "stderr": proc.stderr if proc else "",
                "secret": secret, "heard": [h.decode("latin-1") for h in listener.got]}
        tmp = work / "result.json.part"
        tmp.write_text(json.dumps(done))
        tmp.replace(work / "result.json")


def _main(work: Path) -> None:
    """The driver's entry: a result is always written, even when grading could not start
    (the listener's port taken by another run, say), so that no test waits for nothing."""
    try:
        _grade(work)
    except BaseException:
        if not (work / "result.json").exists():
            (work / "result.json").write_text(json.dumps({
                "returncode": -1, "stdout": "", "stderr": traceback.format_exc(),
                "secret": "", "heard": []}))
        raise


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    _main(Path(sys.argv[1]))
