"""One student's kernel fork-server, from the grader's side: start it, ask it for a kernel.

Grading runs every notebook of a student in a fresh sandboxed IPython kernel. Started cold,
each of them paid Python's start-up and the imports of IPython, NumPy, Numba's simulator and
matplotlib again — about a third of a full submission's CPU on a GPU machine (issue 39,
docs/grading-cost.md). :class:`KernelServer` starts, for one student, one sandbox running
:mod:`autograder.sandbox.forkserver`, which imports those once and forks a kernel per notebook.

What stays exactly as with a cold kernel:

* **the world**: the server runs in the same ``bwrap`` sandbox a cold kernel gets (same
  mounts, environment allow-list, no network, no GPU), bound to the student's folder; each
  kernel gets the notebook's own environment (its language, its replay file);
* **the limits**: the kernel is moved into its notebook's own cgroups before it runs a line
  (:func:`start_forked`, by the launcher, which can see the host's process ids), so memory and
  processes are bounded per notebook as before; the rlimits are the same values, inherited;
  after each kernel the server stops whatever it left behind and empties ``/tmp``;
* **one student**: a server is keyed by the student's folder and stopped when another student
  comes (:func:`server_for`), when grading ends, or when it dies;
* **never a lost grade**: anything that goes wrong before the kernel runs (no server, a dead
  one, a refusal — e.g. the CUDA library loaded in it —, no answer in time) makes the launcher
  start the kernel cold, as without a server.

``COURSE_KERNEL_FORK=0`` turns the server off (every kernel cold).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from autograder.sandbox import bwrap as sandbox
from autograder.sandbox import limits as limits_mod
from autograder.sandbox.forkserver import read_message
from autograder.sandbox.warm import WarmOne

#: the kernel's environment names the server's info file with this (never seen inside: the
#: sandbox's environment allow-list drops it)
SERVER_ENV = "COURSE_KERNEL_SERVER"
#: "0": start every kernel cold
ENABLE_ENV = "COURSE_KERNEL_FORK"
INFO_FILE = "server.json"
#: seconds the launcher waits for a server still importing (then: a cold kernel)
READY_S = 120.0
#: seconds for each answer of the server before the kernel runs (then: a cold kernel)
ANSWER_S = 30.0


def enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Whether kernels are forked from a server (bubblewrap present, not switched off)."""
    env = os.environ if environ is None else environ
    return env.get(ENABLE_ENV, "1") != "0" and sandbox.bwrap_path() is not None


@dataclass
class KernelServer:
    """One student's fork-server: its sandboxed process, cgroups and folders."""

    key: tuple
    run: Path  # ro/ (connection and replay files, read-only inside), rw/ (sockets)
    workdir: Path
    proc: subprocess.Popen
    box: limits_mod.Box
    stderr: Any = field(default=None, repr=False)

    @property
    def ro(self) -> Path:
        return self.run / "ro"

    @property
    def rw(self) -> Path:
        return self.run / "rw"

    @property
    def info_file(self) -> Path:
        return self.run / INFO_FILE

    @classmethod
    def start(cls, key: tuple, *, workdir: Path, course_root: Path,
              limits: limits_mod.Limits) -> KernelServer:
        run = Path(tempfile.mkdtemp(prefix="week4-kernel-server-"))
        (run / "ro").mkdir()
        (run / "rw").mkdir()
        sock = run / "rw" / "server.sock"
        box = limits_mod.Box.create(limits)
        try:
            command = sandbox.wrap(
                [sys.executable, "-m", "autograder.sandbox.forkserver", str(sock)],
                course_root=course_root, workdir=workdir, gpu=False, box=box,
                extra_ro=(run / "ro",), extra_rw=(run / "rw",))
            err = open(run / "stderr.txt", "w")  # noqa: SIM115 - closed in close()
            proc = subprocess.Popen(command.launcher_argv(), env=command.env, cwd=workdir,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=err)
        except BaseException:
            box.remove()
            shutil.rmtree(run, ignore_errors=True)
            raise
        server = cls(key, run, workdir.resolve(), proc, box, stderr=err)
        server.info_file.write_text(json.dumps({
            "socket": str(sock), "pid": proc.pid, "workdir": str(server.workdir)}))
        return server

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def close(self) -> None:
        """Stop the server and everything in its sandbox; remove its cgroups and folders."""
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        self.proc.wait()
        self.box.remove()
        if self.stderr is not None:
            self.stderr.close()
        shutil.rmtree(self.run, ignore_errors=True)


#: the server of the student being graded in this process (at most one)
_SERVER: WarmOne[KernelServer] = WarmOne()
#: stop this process's kernel server, if any (the next student, the end of grading)
close_kernel_server = _SERVER.close


def server_for(workdir: Path, course_root: Path,
               limits: limits_mod.Limits) -> KernelServer | None:
    """The live server for this student's folder, else a new one (stopping another's).

    None where kernels are not forked (:func:`enabled`) or the server cannot be started: the
    kernels then start cold.
    """
    if not enabled():
        return None
    key = (str(workdir.resolve()), str(course_root.resolve()), limits)
    try:
        return _SERVER.get(key, lambda: KernelServer.start(
            key, workdir=workdir, course_root=course_root, limits=limits))
    except (OSError, sandbox.SandboxUnavailableError):
        return None


# ---------------------------------------------------------------------------------------------
# The launcher's side (host): ask for a kernel, put it in its cgroups, wait for it.


def _status_fields(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        name, _, value = line.partition(":")
        out[name] = value.strip()
    return out


def host_pid(root: int, inner: int, proc: Path = Path("/proc")) -> int | None:
    """The host's id of the process that is ``inner`` in the PID namespace under ``root``.

    ``root`` is the server's bwrap (a host id); the answer is the descendant of ``root`` whose
    innermost namespace id (the last of ``NSpid``) is ``inner``.
    """
    parents: dict[int, int] = {}
    inner_ids: dict[int, int] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = _status_fields((entry / "status").read_text())
            parents[int(entry.name)] = int(fields.get("PPid", "0"))
            ns = fields.get("NSpid", "").split()
            if ns:
                inner_ids[int(entry.name)] = int(ns[-1])
        except (OSError, ValueError):
            continue
    for pid, ns_id in inner_ids.items():
        if ns_id != inner or pid == root:
            continue
        seen, up = set(), parents.get(pid)
        while up and up not in seen:
            if up == root:
                return pid
            seen.add(up)
            up = parents.get(up)
    return None


def _connect(info: dict[str, Any]) -> socket.socket | None:
    """Connect to the server once it is ready (it may still be importing)."""
    sock = Path(str(info["socket"]))
    ready = Path(f"{sock}.ready")
    deadline = time.monotonic() + READY_S
    while not ready.exists():
        if time.monotonic() > deadline or not Path(f"/proc/{int(info['pid'])}").exists():
            return None
        time.sleep(0.02)
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(ANSWER_S)
    try:
        conn.connect(str(sock))
    except OSError:
        conn.close()
        return None
    return conn


def start_forked(info_file: str, *, argv: list[str], cwd: Path, env: Mapping[str, str],
                 groups: Mapping[str, str]) -> socket.socket | None:
    """Have the server fork this notebook's kernel and put it in ``groups`` (its cgroups).

    Returns the connection to wait on (:func:`wait_forked`) once the kernel runs, or None
    when it could not be started that way — nothing of it runs then, and the caller starts
    the kernel cold.
    """
    try:
        info = json.loads(Path(info_file).read_text())
        if Path(str(info["workdir"])) != cwd.resolve():
            return None  # another folder than the student's: not this server's world
        conn = _connect(info)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if conn is None:
        return None
    try:
        conn.sendall(json.dumps({"argv": argv, "cwd": str(cwd.resolve()),
                                 "env": dict(env)}).encode() + b"\n")
        answer = read_message(conn, limit=1 << 16)
        inner = answer.get("pid") if answer else None
        if not isinstance(inner, int):
            raise OSError("no kernel forked")
        if groups:
            pid = host_pid(int(info["pid"]), inner)
            if pid is None:
                raise OSError("the forked kernel was not found")
            for group in groups.values():
                Path(group, "cgroup.procs").write_text(str(pid))
        conn.sendall(b'{"go": true}\n')
    except (OSError, ValueError):
        conn.close()  # the server kills a child whose launcher is gone
        return None
    return conn


def wait_forked(conn: socket.socket) -> int:
    """Wait for the forked kernel to end; its exit code (1 if the server went away)."""
    conn.settimeout(None)
    try:
        answer = read_message(conn, limit=1 << 16)
    except OSError:
        answer = None
    code = answer.get("exit") if answer else None
    return code if isinstance(code, int) and 0 <= code < 256 else 1
