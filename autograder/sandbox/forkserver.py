"""Inside one student's sandbox: import the kernel's libraries once, fork a kernel per notebook.

``python -m autograder.sandbox.forkserver SOCKET`` runs in the sandbox that
:class:`autograder.sandbox.kernel_server.KernelServer` builds for one student (the same
``bwrap`` world as a notebook's kernel: no network, the student's folder, a private ``/tmp``,
the limits). It imports what every notebook's kernel imports anyway (IPython's kernel, NumPy,
Numba and its CUDA simulator, matplotlib) and then, for each notebook, forks a child that
becomes that notebook's IPython kernel — so the student pays the interpreter and those imports
once, not once per notebook (on a 16-core GPU machine a cold kernel to its first figure cost
about 1.4 CPU-s, a forked one about 0.25; docs/grading-cost.md).

``course`` itself is *not* imported here: importing it installs the student-facing traceback
handler into the running IPython shell, which exists only in the child.

One request at a time, on a Unix socket, from the kernel's launcher
(:mod:`autograder.sandbox.launcher`, host side), each a JSON line:

1. ``{"argv": [...], "cwd": ..., "env": {...}}`` — the server forks; the child starts a
   session of its own and waits; the server answers ``{"pid": <pid in the sandbox>}``.
2. The launcher puts the child in the notebook's cgroups (it knows the host's pid; the
   sandbox does not) and sends ``{"go": true}``; the child takes the notebook's environment
   and working folder and runs the kernel.
3. When the child ends, the server answers ``{"exit": <code>}``, stops anything the kernel
   left behind in the sandbox and empties ``/tmp`` of what the kernel wrote there, so the next
   notebook starts as clean as a cold one.

If the launcher goes away (it was killed: the kernel's shutdown, a timeout, a limit), the
kernel is killed with it. The server refuses to fork once the CUDA driver library is loaded
in it (a fork would share a CUDA context) or while it runs a thread besides its own; the
launcher then starts the kernel cold, as without a server.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

#: what every notebook's kernel imports (the setup cell's ``import course`` pulls in the rest)
PRELOAD = ("numpy", "numba", "numba.cuda", "matplotlib", "matplotlib.pyplot",
           "IPython", "ipykernel.kernelapp",
           "ipykernel.ipkernel", "ipywidgets")
MAX_LINE = 1 << 20


def preload() -> list[str]:
    """Import :data:`PRELOAD` (what is missing is skipped); return what could not be imported."""
    # What ipykernel sets before a kernel's first import of matplotlib: matplotlib reads it
    # once, at its import, here.
    if not os.environ.get("MPLBACKEND"):
        os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    missing = []
    for name in PRELOAD:
        try:
            __import__(name)
        except Exception:  # noqa: BLE001 - a library missing here is imported by the kernel
            missing.append(name)
    return missing


def cuda_loaded(maps: str | None = None) -> bool:
    """Whether the CUDA driver library is mapped into this process (then it must not fork)."""
    if maps is None:
        try:
            maps = Path("/proc/self/maps").read_text()
        except OSError:
            return True  # cannot tell: do not fork
    return any("libcuda.so" in line for line in maps.splitlines())


def fork_refusal() -> str | None:
    """Why this process must not fork a kernel now, or None."""
    if cuda_loaded():
        return "the CUDA driver library is loaded in the server"
    if threading.active_count() > 1:
        return "the server runs more than one thread"
    return None


def read_message(conn: socket.socket, limit: int = MAX_LINE) -> dict[str, Any] | None:
    """One JSON object sent as a line on ``conn`` (both sides of the server's protocol); None
    for the end of the connection, a line over ``limit`` bytes or anything but an object."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
        if len(data) > limit:
            return None
    try:
        message = json.loads(data)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _send(conn: socket.socket, message: dict[str, Any]) -> bool:
    try:
        conn.sendall(json.dumps(message).encode() + b"\n")
        return True
    except OSError:
        return False


def _become_kernel(request: dict[str, Any], go: int) -> None:
    """In the child: wait for the launcher's go, take the notebook's world, run the kernel."""
    os.setsid()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    if os.read(go, 1) != b"1":
        os._exit(70)
    os.close(go)
    cwd = str(request["cwd"])
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})
    sys.path[0] = cwd  # as ``python -m ipykernel_launcher`` started in the folder would have it
    sys.argv = ["ipykernel_launcher", *[str(a) for a in request["argv"]]]
    _reread_library_settings()
    _reseed()
    from ipykernel import kernelapp

    kernelapp.launch_new_instance()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _reread_library_settings() -> None:
    """Numba read its settings from the server's environment at import: read the kernel's."""
    for name in ("numba.core.config", "numba.cuda.core.config"):
        module = sys.modules.get(name)
        reload = getattr(module, "reload_config", None)
        if reload is not None:
            # a failure leaves the kernel with the server's settings, which match the kernel's
            with contextlib.suppress(Exception):
                reload()


def _reseed() -> None:
    """A fork copies the server's random state: give each kernel its own, as a cold one has."""
    import random

    random.seed()
    numpy_random = sys.modules.get("numpy.random")
    if numpy_random is not None:
        numpy_random.seed()


def _exit_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1


def _stop_leftovers(keep: set[int]) -> None:
    """SIGKILL every process of the sandbox but the server and bwrap's init (pid 1)."""
    for _ in range(20):
        others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) not in keep]
        if not others:
            break
        for pid in others:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
        try:
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        except ChildProcessError:
            pass


def _empty_tmp(kept: set[str]) -> None:
    """Remove what a kernel left in ``/tmp`` (the server's own entries stay)."""
    import shutil

    tmp = Path("/tmp")
    for entry in tmp.iterdir():
        if entry.name in kept:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                entry.unlink()


def _serve_one(conn: socket.socket, listener: socket.socket, keep: set[int],
               tmp_kept: set[str]) -> None:
    request = read_message(conn)
    if request is None or not all(k in request for k in ("argv", "cwd", "env")):
        _send(conn, {"error": "bad request"})
        return
    why = fork_refusal()
    if why:
        _send(conn, {"error": why})
        return
    go_read, go_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child becomes the kernel (tested end to end)
        try:
            listener.close()
            conn.close()
            os.close(go_write)
            _become_kernel(request, go_read)
        finally:
            os._exit(71)
    os.close(go_read)
    try:
        if not _send(conn, {"pid": pid}):
            raise OSError
        go = read_message(conn)
        if not go or go.get("go") is not True:
            raise OSError
        os.write(go_write, b"1")
        os.close(go_write)
        go_write = -1
        conn.settimeout(0.2)
        status = None
        while status is None:
            done, raw = os.waitpid(pid, os.WNOHANG)
            if done:
                status = raw
                break
            try:
                if conn.recv(1) == b"":  # the launcher is gone: so is its kernel
                    raise OSError
            except TimeoutError:
                continue
        _send(conn, {"exit": _exit_code(status)})
    except OSError:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)  # reaped: no zombie left for the next notebook
    finally:
        if go_write >= 0:
            os.close(go_write)
        _stop_leftovers(keep)
        _empty_tmp(tmp_kept)


def in_sandbox(cmdline: bytes | None = None) -> bool:
    """Whether this process is inside bubblewrap's PID namespace (pid 1 is bwrap's init):
    only there may the server stop every other process it sees."""
    if cmdline is None:
        try:
            cmdline = Path("/proc/1/cmdline").read_bytes()
        except OSError:
            return False
    return Path(cmdline.split(b"\0")[0].decode(errors="replace")).name in ("bwrap", "bubblewrap")


def serve(path: str) -> int:
    """Preload, then serve kernel requests on the Unix socket ``path`` until killed."""
    if not in_sandbox():
        print("autograder.sandbox.forkserver runs only inside the grading sandbox (bwrap)",
              file=sys.stderr)
        return 2
    preload()
    keep = {1, os.getpid()}
    tmp_kept = {e.name for e in Path("/tmp").iterdir()} if Path("/tmp").is_dir() else set()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(4)
    Path(path + ".ready").write_text(str(os.getpid()))
    while True:
        conn, _ = listener.accept()
        with conn:
            _serve_one(conn, listener, keep, tmp_kept)


if __name__ == "__main__":
    raise SystemExit(serve(sys.argv[1]))
