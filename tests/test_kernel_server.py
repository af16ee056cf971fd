"""One student's kernel fork-server (autograder/sandbox/kernel_server.py, forkserver.py).

Every notebook's kernel is forked from a server that imported IPython, NumPy, Numba's
simulator and matplotlib once for the student. What a cold kernel guaranteed must still hold:
the notebook's own cgroups, environment and clean ``/tmp``; one student per server; a dead or
refusing server gives a cold kernel, never a lost notebook; a killed launcher takes its kernel
with it. The limits themselves (memory, processes, timeouts, interrupts, output, the replay
file read-only) are tested in tests/test_isolation.py, which now runs through the server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from autograder.grading import config
from autograder.sandbox import bwrap as sandbox
from autograder.sandbox import forkserver, kernel_server
from autograder.sandbox import limits as limits_mod

needs_bwrap = pytest.mark.skipif(sandbox.bwrap_path() is None,
                                 reason="bubblewrap is not available here")

PROBE = ("import sys, os\n"
         "print('preloaded' if 'numba' in sys.modules else 'cold')\n"
         "print(os.environ['COURSE_LANG'])\n"
         "print(sorted(os.listdir('/tmp')))")


@pytest.fixture(autouse=True)
def _no_server_left(monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", os.environ.get("JUPYTER_PATH", ""))
    monkeypatch.setenv(sandbox.ROOT_ENV, os.environ.get(sandbox.ROOT_ENV, ""))
    monkeypatch.delenv(kernel_server.ENABLE_ENV, raising=False)
    yield
    kernel_server.close_kernel_server()


def _run(sources: list[str], course: Path, student: str = "s",
         language: str = "en") -> list[str]:
    from autograder.grading.execute import DEAD_KERNEL_KEY, SurvivingExecute

    work = course / "autograded" / student / "week4"
    work.mkdir(parents=True, exist_ok=True)
    os.environ["JUPYTER_PATH"] = str(config.install_sandboxed_kernelspec(course))
    os.environ[sandbox.ROOT_ENV] = str(course)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    if language == "ko":
        nb.metadata["course"] = {"language": "ko"}
    ex = SurvivingExecute(kernel_name=config.KERNEL_NAME, timeout=60, interrupt_on_timeout=True)
    nb, res = ex.preprocess(nb, {"metadata": {"path": str(work)}})
    assert res.get(DEAD_KERNEL_KEY) is None, res.get(DEAD_KERNEL_KEY)
    return ["".join(o.get("text", "") + o.get("evalue", "") for o in c.outputs)
            for c in nb.cells]


def _descendants(root: int) -> list[int]:
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                for line in (entry / "status").read_text().splitlines():
                    if line.startswith("PPid:"):
                        parents[int(entry.name)] = int(line.split()[1])
            except OSError:
                continue
    found, frontier = [], [root]
    while frontier:
        pid = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == pid]
        found += kids
        frontier += kids
    return found


@needs_bwrap
def test_a_students_notebooks_share_a_server_and_each_starts_clean(tmp_path: Path) -> None:
    leave_behind = ("import subprocess, pathlib\n"
                    "pathlib.Path('/tmp/left-by-notebook-1').write_text('x')\n"
                    "subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
                    "print('left')")
    first = _run([PROBE, leave_behind], tmp_path)
    server = kernel_server._SERVER.current
    assert first[0].split("\n")[:2] == ["preloaded", "en"], first
    assert first[1].strip() == "left"
    # Notebook 2 of the same student: the same server, in Korean, with nothing of notebook 1.
    second = _run([PROBE, "import os\nprint([p for p in os.listdir('/proc') if p.isdigit()"
                   " and b'sleep' in open(f'/proc/{p}/cmdline', 'rb').read()])"],
                  tmp_path, language="ko")
    assert kernel_server._SERVER.current is server and server.alive
    lines = second[0].split("\n")
    assert lines[:2] == ["preloaded", "ko"], second
    assert "left-by-notebook-1" not in lines[2]
    assert second[1].strip() == "[]", second
    # Between notebooks only bwrap's init and the server itself are left in the sandbox.
    assert len(_descendants(server.proc.pid)) <= 2


@needs_bwrap
def test_the_server_is_started_before_the_recheck_and_the_kernel_forks_from_it(
        tmp_path: Path) -> None:
    """TrustedPrecheck starts the student's server before its checks (the imports overlap
    with them); the notebook's kernel is then forked from that same server, not a second one.
    A notebook with nothing graded, which is not run, starts none."""
    import shutil

    from autograder.grading.execute import warm_kernel_server
    from autograder.runner.names import ASSIGNMENT

    root = Path(__file__).resolve().parents[1]
    work = tmp_path / "autograded" / "s" / "week4"
    work.mkdir(parents=True)
    (tmp_path / "source" / ASSIGNMENT).mkdir(parents=True)
    shutil.copy(root / "source" / ASSIGNMENT / "00_setup.ipynb",
                tmp_path / "source" / ASSIGNMENT)
    os.environ[sandbox.ROOT_ENV] = str(tmp_path)
    warm_kernel_server({"metadata": {"path": str(work)},
                        "nbgrader": {"notebook": "00_setup", "student": "s"}})
    assert kernel_server._SERVER.current is None  # not run at grading: no server for it
    warm_kernel_server({"metadata": {"path": str(work)},
                        "nbgrader": {"notebook": "01_arithmetic_intensity", "student": "s"}})
    early = kernel_server._SERVER.current
    assert early is not None and early.alive
    out = _run([PROBE], tmp_path)
    assert out[0].split("\n")[0] == "preloaded", out
    assert kernel_server._SERVER.current is early and early.alive


def test_the_precheck_starts_the_server_before_its_checks(monkeypatch) -> None:
    """TrustedPrecheck asks for the server first, then runs its checks."""
    from autograder.grading import trusted

    order: list[str] = []
    monkeypatch.setattr(trusted, "warm_kernel_server", lambda res: order.append("server"))
    monkeypatch.setattr(trusted.TrustedPrecheck, "run_checks",
                        lambda self, nb, res: order.append("checks") or {})
    trusted.TrustedPrecheck().preprocess(nbformat.v4.new_notebook(), {})
    assert order == ["server", "checks"]


@needs_bwrap
def test_the_forked_kernel_is_in_its_notebooks_cgroups(tmp_path: Path) -> None:
    parents, why = limits_mod.find_parents()
    if not parents:
        pytest.skip(f"no cgroups here: {why}")
    out = _run(["print(open('/proc/self/cgroup').read())"], tmp_path)
    server = kernel_server._SERVER.current
    names = {g.name for g in server.box.groups.values()}
    mine = {line.rsplit("/", 1)[-1] for line in out[0].splitlines()
            if line.count(":") >= 2 and line.split(":")[1] in parents}
    assert mine and not (mine & names), (mine, names)  # a box of its own, not the server's
    assert all("-" in n for n in mine), out


@needs_bwrap
def test_another_student_gets_another_server(tmp_path: Path) -> None:
    _run(["print(1)"], tmp_path, student="ann")
    first = kernel_server._SERVER.current
    _run(["print(2)"], tmp_path, student="ben")
    second = kernel_server._SERVER.current
    assert second is not first and not first.alive and second.alive
    assert not first.run.exists()  # its folders are gone with it


@needs_bwrap
def test_a_dead_server_gives_a_cold_kernel(tmp_path: Path, monkeypatch) -> None:
    _run(["print(1)"], tmp_path)
    dead = kernel_server._SERVER.current
    dead.proc.kill()
    dead.proc.wait()
    monkeypatch.setattr(kernel_server, "server_for", lambda *a, **k: dead)
    out = _run([PROBE], tmp_path)
    assert out[0].startswith("cold"), out


@needs_bwrap
def test_switched_off_every_kernel_is_cold(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(kernel_server.ENABLE_ENV, "0")
    out = _run([PROBE], tmp_path)
    assert out[0].startswith("cold") and kernel_server._SERVER.current is None


@needs_bwrap
def test_a_killed_launcher_takes_its_kernel_with_it(tmp_path: Path, monkeypatch) -> None:
    """Without cgroups to sweep, the server itself stops a kernel whose launcher is gone."""
    monkeypatch.setattr(limits_mod, "find_parents", lambda *a, **k: ({}, "test: no cgroups"))
    work = tmp_path / "autograded" / "s" / "week4"
    work.mkdir(parents=True)
    server = kernel_server.server_for(work, tmp_path, limits_mod.Limits.from_env())
    assert server is not None
    conn_dir = Path(server.ro, "k")
    conn_dir.mkdir()
    conn = conn_dir / "kernel.json"
    ipc = server.rw / "k"
    ipc.mkdir()
    conn.write_text(json.dumps({"transport": "ipc", "ip": str(ipc / "kernel"), "shell_port": 1,
                                "iopub_port": 2, "stdin_port": 3, "control_port": 4,
                                "hb_port": 5, "key": "", "signature_scheme": "hmac-sha256"}))
    env = {**os.environ, kernel_server.SERVER_ENV: str(server.info_file)}
    launcher = subprocess.Popen([sys.executable, "-m", "autograder.sandbox", "-f", str(conn)],
                                cwd=work, env=env)
    # The server may still be importing on a busy machine: the launcher waits READY_S for it.
    # Its imports may start a short-lived helper (matplotlib runs fc-list while it builds its
    # font cache), a third process that is not a kernel: only once the server has marked itself
    # ready does a third process mean the forked kernel.
    ready_mark = Path(f"{server.rw / 'server.sock'}.ready")

    def forked() -> bool:
        return ready_mark.exists() and len(_descendants(server.proc.pid)) >= 3

    deadline = time.monotonic() + kernel_server.READY_S + kernel_server.ANSWER_S
    while not forked() and launcher.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    ready = ready_mark.exists()
    assert ready and len(_descendants(server.proc.pid)) >= 3, (
        f"no kernel was forked: server ready={ready}"
        f", launcher exit={launcher.poll()}, launcher's children={_descendants(launcher.pid)}"
        f", server's stderr={(server.run / 'stderr.txt').read_text()[-2000:]!r}")
    launcher.send_signal(signal.SIGKILL)
    launcher.wait()
    deadline = time.monotonic() + 20
    while len(_descendants(server.proc.pid)) > 2 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(_descendants(server.proc.pid)) <= 2


def test_the_server_refuses_to_fork_with_cuda_loaded_or_a_thread() -> None:
    maps = ("7f00-7f01 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libcuda.so.580.1\n"
            "7f02-7f03 r-xp 0 08:01 2 /usr/lib/libc.so.6\n")
    assert forkserver.cuda_loaded(maps) is True
    assert forkserver.cuda_loaded("7f02-7f03 r-xp 0 08:01 2 /usr/lib/libc.so.6\n") is False
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert forkserver.fork_refusal() == "the server runs more than one thread"
    finally:
        stop.set()
        thread.join()


def test_the_server_runs_only_inside_bwrap() -> None:
    assert forkserver.in_sandbox(b"/usr/bin/bwrap\0--ro-bind\0/usr\0") is True
    assert forkserver.in_sandbox(b"/sbin/init\0") is False
    out = subprocess.run([sys.executable, "-m", "autograder.sandbox.forkserver", "/tmp/x.sock"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "only inside the grading sandbox" in out.stderr


def test_the_forked_kernel_is_found_by_its_namespace_id(tmp_path: Path) -> None:
    def proc(pid: int, ppid: int, nspid: str) -> None:
        d = tmp_path / str(pid)
        d.mkdir()
        (d / "status").write_text(f"Name:\tx\nPPid:\t{ppid}\nNSpid:\t{nspid}\n")

    proc(100, 1, "100")  # the server's bwrap
    proc(101, 100, "101\t1")  # bwrap's init
    proc(102, 101, "102\t2")  # the server
    proc(103, 102, "103\t3")  # the forked kernel
    proc(200, 1, "200\t3")  # pid 3 of another sandbox
    assert kernel_server.host_pid(100, 3, proc=tmp_path) == 103
    assert kernel_server.host_pid(100, 9, proc=tmp_path) is None


def test_the_launcher_finds_the_course_without_importing_it() -> None:
    code = ("import sys\nfrom autograder.sandbox import bwrap\n"
            "print(bwrap._package_dir('course').name, 'course' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.split() == ["course", "False"]
