"""Run untrusted student code where it cannot see the course directory.

During ``nbgrader autograde`` the student's notebook runs in a Jupyter kernel, and the
trusted re-checks run the student's (validated) kernels in child processes. Both would
otherwise run with the instructor's rights and could read ``source/`` (the solutions),
``gradebook.db`` (the hidden tests), other students' submissions, or rewrite ``course``.

Bubblewrap (``bwrap``) gives each of those processes its own view of the filesystem:
everything read-only, a private ``/tmp``, and the course directory replaced by an empty
tmpfs into which only what the process needs is mounted back — the Python environment and
the ``course`` package read-only, and its own working folder. No capabilities, own PID
namespace, killed with its parent. GPUs stay reachable (``/dev`` is passed through).

Where bubblewrap is missing the grader refuses to run unless ``COURSE_ALLOW_UNSANDBOXED=1``
is set (then it says, in the grade table, that submissions were not isolated).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

UNSANDBOXED_ENV = "COURSE_ALLOW_UNSANDBOXED"
ROOT_ENV = "COURSE_GRADING_ROOT"
#: more folders to hide (os.pathsep-separated), e.g. the repository when grading a copy of it.
HIDE_ENV = "COURSE_SANDBOX_HIDE"


class SandboxUnavailableError(RuntimeError):
    """bubblewrap is missing or does not work here, and running without it was not allowed."""


@lru_cache(maxsize=1)
def bwrap_path() -> str | None:
    """The bwrap binary, if it exists *and* can create a sandbox on this machine."""
    exe = os.environ.get("COURSE_BWRAP") or shutil.which("bwrap")
    if not exe:
        return None
    probe = subprocess.run([exe, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                            "--unshare-pid", "true"], capture_output=True)
    return exe if probe.returncode == 0 else None


def sandbox_status() -> str:
    """One line for the grade table: how submissions were isolated."""
    if bwrap_path():
        return "bubblewrap (course directory hidden, read-only system, no capabilities)"
    if os.environ.get(UNSANDBOXED_ENV) == "1":
        return "NONE: bubblewrap unavailable and COURSE_ALLOW_UNSANDBOXED=1 was set"
    return "unavailable"


def _package_dir(name: str) -> Path:
    spec = __import__(name)
    return Path(spec.__file__).resolve().parent


def wrap(argv: list[str], *, course_root: Path, workdir: Path,
         extra_ro: tuple[Path, ...] = (), extra_rw: tuple[Path, ...] = ()) -> list[str]:
    """Return ``argv`` prefixed with a bwrap invocation that hides ``course_root``."""
    exe = bwrap_path()
    if exe is None:
        if os.environ.get(UNSANDBOXED_ENV) == "1":
            return argv
        raise SandboxUnavailableError(
            "bubblewrap (bwrap) is not available, so student code could read the solutions "
            "and the gradebook. Install it (Debian/Ubuntu: apt-get install bubblewrap) or set "
            f"{UNSANDBOXED_ENV}=1 to grade without isolation (not for real classes)."
        )
    hidden = [course_root.resolve()] + [
        Path(p).resolve() for p in os.environ.get(HIDE_ENV, "").split(os.pathsep) if p]
    cmd = [exe, "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--proc", "/proc",
           "--tmpfs", "/tmp"]
    for path in sorted(set(hidden), key=lambda p: len(p.parts)):
        if path.exists():
            cmd += ["--tmpfs", str(path)]
    # Put back, read-only, what the process needs from inside the hidden course directory.
    # (PYTHONPATH entries too: on a machine where packages were installed with --target
    # into /tmp, the private /tmp would otherwise hide them.)
    search = [Path(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    needed = [Path(sys.prefix), _package_dir("course"), *search, *extra_ro]
    seen: set[Path] = set()
    for path in needed:
        path = path.resolve()
        if path in seen or not path.exists():
            continue
        if any(h.is_relative_to(path) for h in hidden):
            continue  # e.g. PYTHONPATH=<course root>: binding it would undo the hiding
        seen.add(path)
        if any(path.is_relative_to(h) for h in [*hidden, Path("/tmp")]):
            cmd += ["--ro-bind", str(path), str(path)]
    for path in (workdir, *extra_rw):
        cmd += ["--bind", str(path.resolve()), str(path.resolve())]
    cmd += ["--unshare-pid", "--unshare-ipc", "--die-with-parent", "--cap-drop", "ALL",
            # ipykernel exits when it cannot see its parent's PID, which a PID namespace hides;
            # --die-with-parent does that job instead.
            "--unsetenv", "JPY_PARENT_PID",
            "--setenv", "HOME", "/tmp", "--setenv", "MPLCONFIGDIR", "/tmp/mpl",
            "--setenv", "NUMBA_CACHE_DIR", "/tmp/numba", "--setenv", "IPYTHONDIR", "/tmp/ipy",
            "--chdir", str(workdir.resolve()), "--"]
    return cmd + argv


def _kernel_main(argv: list[str]) -> int:
    """Kernelspec entry point: ``python -m autograder.sandbox -f CONNECTION_FILE``.

    Started by nbclient (through nbgrader's Execute) in the notebook's folder; re-executes
    an IPython kernel inside the sandbox with the same connection file.
    """
    conn = Path(argv[argv.index("-f") + 1]).resolve()
    root = Path(os.environ.get(ROOT_ENV) or os.getcwd())
    cmd = wrap([sys.executable, "-m", "ipykernel_launcher", "-f", str(conn),
                "--HistoryManager.hist_file=:memory:"],
               course_root=root, workdir=Path.cwd(), extra_ro=(conn,))
    os.execv(cmd[0], cmd)
    return 1  # pragma: no cover


if __name__ == "__main__":
    raise SystemExit(_kernel_main(sys.argv[1:]))
