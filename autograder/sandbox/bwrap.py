"""Run untrusted student code where it sees almost nothing of the grading machine.

During ``nbgrader autograde`` the student's notebook runs in a Jupyter kernel, and the
trusted re-checks run the student's (validated) kernels in child processes. Both would
otherwise run with the instructor's rights: they could read the solutions, the gradebook,
other submissions, the instructor's home and environment (API tokens), or reach the network.

Bubblewrap (``bwrap``) gives each of those processes its own world (see docs/grading.md,
"What the sandbox allows"):

* **filesystem** — an empty root with, read-only: ``/usr`` (and the ``/bin``, ``/lib*``,
  ``/sbin`` links or folders), the dynamic linker's files from ``/etc``, the Python
  installation and virtual environment, ``PYTHONPATH`` entries, and the ``course`` and
  ``autograder`` packages; read-write: the process's own working folder and a private,
  size-capped ``/tmp``; a minimal ``/dev`` and a ``/proc`` of its own. Nothing else: not the
  course directory, not ``/home`` or ``/root``, ``/srv``, ``/mnt``, ``/var``, ``/opt``.
* **GPU** (``gpu=True`` only, for the trusted re-checks): ``/dev/nvidia*`` and the CUDA
  driver's folders (:func:`cuda_driver_dirs`). The notebook kernel gets none and runs on
  Numba's simulator, so student code cannot disturb another student's timing on the GPU.
* **environment** — an allow-list (:func:`scrubbed_env`); bwrap itself is started with it,
  since in the sandbox's PID namespace ``/proc/1/environ`` is bwrap's environment.
* **no network** (own network namespace: only a loopback of its own), own PID, IPC, UTS and
  cgroup namespaces, a new session (no terminal injection), no capabilities, killed with
  its parent.
* **resource limits** (:mod:`autograder.sandbox.limits`): a cgroup and rlimits, applied by the
  launcher (``python -m autograder.sandbox``) just before it becomes bwrap.

Where bubblewrap is missing the grader refuses to run unless ``COURSE_ALLOW_UNSANDBOXED=1``
is set (then it says, in the grade table, that submissions were not isolated).
"""

from __future__ import annotations

import ctypes
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from autograder.sandbox import limits as limits_mod

UNSANDBOXED_ENV = "COURSE_ALLOW_UNSANDBOXED"
ROOT_ENV = "COURSE_GRADING_ROOT"
#: more folders to hide (os.pathsep-separated), e.g. the repository when grading a copy of it.
HIDE_ENV = "COURSE_SANDBOX_HIDE"
#: file (beside a kernel's connection file) with the cgroups and rlimits of its sandbox.
BOX_FILE = "box.json"
#: the file of the trusted re-check's recorded outcomes the kernel may replay (read-only);
#: the same name as ``course.trust.replay.REPLAY_ENV`` (not imported: the launcher stays light).
REPLAY_ENV = "COURSE_CHECK_REPLAY"

#: Environment variables student code may see (besides the prefixes below).
ENV_ALLOWED = frozenset({
    "PATH", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH", "PYTHONPATH", "NBGRADER_EXECUTION",
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS", "MPLBACKEND", "PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONUTF8", "PYDEVD_DISABLE_FILE_VALIDATION",
    "COURSE_REFERENCE_NAIVE", "COURSE_NO_SIMULATOR", "COURSE_TRUSTED_RUN", REPLAY_ENV,
    "COURSE_VERDICT_AUDIT",
    "COURSE_LANG",  # the language the checks speak (course.runtime.i18n), set per notebook
    # the GPU lock between graders (course.gpulock): where it is, the queue's heartbeat
    "COURSE_GPU_LOCK", "COURSE_GPU_LOCK_HEARTBEAT", "COURSE_GPU_LOCK_MAX_WAIT",
    "COURSE_GPU_LOCK_LOG",  # measuring: log each exclusive hold (scripts/gpu/throughput.py)
    "COURSE_GPU_LAUNCH_LIMIT",  # seconds one launch may hold the lock shared
    "COURSE_CHECK_FORK",  # 1: GPU checks forked from a warm server (course.trust.forking)
})
ENV_PREFIXES = ("LC_", "CUDA_", "NVIDIA_", "NUMBA_", "CUPY_")
#: Set inside every sandbox: writable places are all under the private /tmp.
ENV_FIXED = {"HOME": "/tmp", "TMPDIR": "/tmp", "MPLCONFIGDIR": "/tmp/mpl",
             "NUMBA_CACHE_DIR": "/tmp/numba", "IPYTHONDIR": "/tmp/ipy"}
#: Set inside every sandbox unless the instructor's environment sets them: one BLAS/OpenMP thread
#: per process. Grading runs many processes at once, each owed one share of the machine; and
#: OpenBLAS otherwise starts a thread per core at ``import numpy``, which on a 16-core GPU
#: machine cost about 0.9 CPU-s per process (``import numpy``: 1.04 CPU-s, 0.12 with one thread,
#: measured on the H200 box; docs/grading-cost.md) — some 60 processes per submission.
ENV_THREAD_DEFAULTS = {name: "1" for name in (
    "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS")}
#: From /etc: only what the dynamic linker (finding libcuda too) and time zones need.
ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
             "/etc/alternatives")
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


class SandboxUnavailableError(RuntimeError):
    """bubblewrap is missing or does not work here, and running without it was not allowed."""


@lru_cache(maxsize=1)
def bwrap_path() -> str | None:
    """The bwrap binary, if it exists *and* can create this module's sandbox here."""
    exe = os.environ.get("COURSE_BWRAP") or shutil.which("bwrap")
    if not exe:
        return None
    probe = subprocess.run([exe, *_system_args(), "--dev", "/dev", "--proc", "/proc",
                            "--unshare-pid", "--unshare-net", "true"], capture_output=True)
    return exe if probe.returncode == 0 else None


def course_root() -> Path:
    """The course directory, which every sandbox hides: ``COURSE_GRADING_ROOT`` (set by the
    grader's configuration, and in the grading kernelspec's environment), else this folder."""
    return Path(os.environ.get(ROOT_ENV) or os.getcwd())


def sandbox_status() -> str:
    """One line for the grade table: how submissions were isolated."""
    if bwrap_path():
        return ("bubblewrap (minimal read-only filesystem without the course directory, "
                "no network, allow-listed environment, no capabilities); limits: "
                + limits_mod.enforcement())
    if os.environ.get(UNSANDBOXED_ENV) == "1":
        return "NONE: bubblewrap unavailable and COURSE_ALLOW_UNSANDBOXED=1 was set"
    return "unavailable"


# ---------------------------------------------------------------------------------------------
# What the sandbox contains.


def scrubbed_env(environ: Mapping[str, str] | None = None,
                 extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allow-listed part of ``environ`` over one-thread defaults, plus the sandbox's fixed
    values and ``extra``."""
    env = os.environ if environ is None else environ
    kept = {k: v for k, v in env.items() if k in ENV_ALLOWED or k.startswith(ENV_PREFIXES)}
    return {**ENV_THREAD_DEFAULTS, **kept, **ENV_FIXED, **(extra or {})}


def _system_args() -> list[str]:
    """System folders read-only; merged-usr links (``/bin -> usr/bin``) as links."""
    args: list[str] = []
    for name in SYSTEM_DIRS:
        p = Path(name)
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), name]
        elif p.is_dir():
            args += ["--ro-bind", name, name]
    for name in ETC_FILES:
        if os.path.exists(name):
            args += ["--ro-bind", name, name]
    return args


def _under(path: Path, roots: Iterable[Path]) -> bool:
    return any(path == r or path.is_relative_to(r) for r in roots)


def _system_roots() -> list[Path]:
    return [Path(p).resolve() for p in SYSTEM_DIRS if os.path.isdir(p)]


def _python_paths() -> list[Path]:
    """The Python installation this grader runs: prefixes and every import folder."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             str(Path(sys.executable).parent)}
    paths |= {p for p in sys.path if p and os.path.isabs(p)}
    paths |= {p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p}
    return [Path(p) for p in sorted(paths)]


def _package_dir(name: str) -> Path:
    """The folder of package ``name``, found without importing it: importing ``course`` in
    every kernel's launcher cost 0.5 CPU-s and a CUDA initialisation on a GPU machine."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None or not spec.origin.endswith("__init__.py"):
        raise RuntimeError(f"package {name!r} has no __init__.py, so no folder to mount")
    return Path(spec.origin).resolve().parent


def cuda_driver_dirs(maps: str | None = None, ldconfig: str | None = None,
                     environ: Mapping[str, str] | None = None,
                     nvidia_smi: str | None | bool = True) -> list[Path]:
    """Folders holding the NVIDIA driver's user-space libraries (libcuda, libnvidia-*).

    Looked for in four places, so that a driver outside the usual system folders (e.g. a
    container's ``/usr/local/nvidia/lib64``) is found too:

    1. the libcuda that this process actually loads (``ctypes``, then ``/proc/self/maps``);
    2. ``ldconfig -p`` (the linker cache);
    3. ``LD_LIBRARY_PATH`` entries that hold a ``libcuda.so*``;
    4. beside ``nvidia-smi``: ``<prefix>/lib64`` and ``<prefix>/lib`` of its ``<prefix>/bin``.

    The arguments replace those sources in tests (``nvidia_smi``: a path, or None for none).
    """
    env = os.environ if environ is None else environ
    found: list[Path] = []

    def add(path: str | Path) -> None:
        p = Path(path).resolve()
        if p.is_dir() and p not in found:
            found.append(p)

    if maps is None:
        for name in ("libcuda.so.1", "libcuda.so"):
            try:
                ctypes.CDLL(name)  # dlopen only; cuInit is not called
                break
            except OSError:
                continue
        maps = Path("/proc/self/maps").read_text()
    for line in maps.splitlines():
        path = line.split(maxsplit=5)[-1] if len(line.split()) >= 6 else ""
        if "/libcuda.so" in path:
            add(Path(path).parent)
    if ldconfig is None:
        exe = shutil.which("ldconfig") or "/sbin/ldconfig"
        try:
            ldconfig = subprocess.run([exe, "-p"], capture_output=True, text=True,
                                      timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            ldconfig = ""
    for line in ldconfig.splitlines():
        name, _, target = line.strip().partition(" => ")
        if target and name.startswith(("libcuda.so", "libnvidia-")):
            add(Path(target).parent)
    for entry in env.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        if entry and glob.glob(os.path.join(entry, "libcuda.so*")):
            add(entry)
    smi = shutil.which("nvidia-smi") if nvidia_smi is True else nvidia_smi
    if smi:
        prefix = Path(smi).resolve().parent.parent
        for lib in ("lib64", "lib"):
            if glob.glob(str(prefix / lib / "libcuda.so*")):
                add(prefix / lib)
    return found


def gpu_devices(dev: Path = Path("/dev")) -> list[Path]:
    """NVIDIA device files: ``/dev/nvidia0``…, ``nvidiactl``, ``nvidia-uvm``, ``nvidia-caps``."""
    return sorted(p for p in dev.glob("nvidia*"))


@dataclass
class SandboxCommand:
    """A bwrap command line and the (scrubbed) environment to start it with."""

    argv: list[str]
    env: dict[str, str]
    box: dict = field(default_factory=dict)  # cgroups and rlimits the launcher applies

    def launcher_argv(self) -> list[str]:
        """Start through ``python -m autograder.sandbox exec``: limits first, then bwrap."""
        if not self.box:
            return self.argv
        return [sys.executable, "-m", "autograder.sandbox", "exec", json.dumps(self.box),
                "--", *self.argv]


def wrap(argv: list[str], *, course_root: Path, workdir: Path,
         extra_ro: tuple[Path, ...] = (), extra_rw: tuple[Path, ...] = (),
         gpu: bool = False, env: Mapping[str, str] | None = None,
         env_extra: Mapping[str, str] | None = None, dev: Path = Path("/dev"),
         driver_dirs: list[Path] | None = None, box: limits_mod.Box | None = None
         ) -> SandboxCommand:
    """The sandbox for ``argv`` (see the module doc); run it with ``.env`` as environment.

    ``gpu``: give the process the NVIDIA devices and driver (trusted re-checks); without it
    the process sees no GPU and ``course`` runs kernels on Numba's simulator.
    ``dev``/``driver_dirs`` replace the real ``/dev`` and driver search in tests.
    """
    exe = bwrap_path()
    inner_env = scrubbed_env(env, env_extra)
    if not gpu:
        inner_env["NUMBA_ENABLE_CUDASIM"] = "1"
    if exe is None:
        if os.environ.get(UNSANDBOXED_ENV) == "1":
            return SandboxCommand(argv, {**ENV_THREAD_DEFAULTS,
                                         **dict(os.environ if env is None else env),
                                         **(env_extra or {})})
        raise SandboxUnavailableError(
            "bubblewrap (bwrap) is not available, so student code could read the solutions "
            "and the gradebook. Install it (Debian/Ubuntu: apt-get install bubblewrap) or set "
            f"{UNSANDBOXED_ENV}=1 to grade without isolation (not for real classes)."
        )
    limits = box.limits if box else limits_mod.Limits.from_env()
    hidden = [course_root.resolve()] + [
        Path(p).resolve() for p in os.environ.get(HIDE_ENV, "").split(os.pathsep) if p]
    never_whole = [*hidden, Path.home().resolve(), Path("/")]
    system = _system_roots()
    cwd = Path.cwd().resolve()

    mounts: list[tuple[Path, list[str]]] = []  # (where, bwrap args), mounted parents first

    def bind(path: Path, flag: str = "--ro-bind") -> None:
        if not path.exists():
            return
        src = path.resolve()
        if flag == "--ro-bind" and _under(src, system):
            return  # already visible, read-only
        mounts.append((src, [flag, str(src), str(src)]))

    for path in _python_paths():
        p = path.resolve() if path.exists() else path
        if p == cwd or any(h == p or h.is_relative_to(p) for h in never_whole):
            continue  # e.g. PYTHONPATH=<course root>: binding it would undo the hiding
        bind(p)
    for path in (_package_dir("course"), _package_dir("autograder"), *extra_ro):
        bind(path)
    mounts.append((Path("/tmp"), ["--size", str(limits.disk), "--tmpfs", "/tmp"]))
    gpu_args: list[str] = []
    if gpu:
        dirs = cuda_driver_dirs() if driver_dirs is None else driver_dirs
        outside = [d for d in dirs if not _under(d, system)]
        for d in outside:
            bind(d)
        for name in ("CUDA_HOME", "CUDA_PATH"):
            if inner_env.get(name):
                bind(Path(inner_env[name]))
        for cuda in sorted(glob.glob("/usr/local/cuda*")):
            bind(Path(cuda))
        ld = [p for p in inner_env.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p]
        ld = [*(str(d) for d in outside if str(d) not in ld), *ld]
        if ld:  # the driver's folder, where only nvidia-smi's location revealed it
            inner_env["LD_LIBRARY_PATH"] = os.pathsep.join(ld)
        for device in gpu_devices(dev):
            gpu_args += ["--dev-bind", str(device), f"/dev/{device.name}"]
    for path in (workdir, *extra_rw):
        bind(path, "--bind")
    for src, args in list(mounts):  # a hidden folder inside something bound: cover it
        for h in hidden:
            if h != src and h.is_relative_to(src) and args[0] in ("--ro-bind", "--bind"):
                mounts.append((h, ["--tmpfs", str(h)]))
    mounts.sort(key=lambda m: len(m[0].parts))  # stable: parents before what is inside
    ro = [src for src, args in mounts if args[0] == "--ro-bind"]
    covers = [src for src, args in mounts if args[0] == "--tmpfs"]

    def covered(src: Path) -> bool:  # inside a read-only bind, with no hiding in between
        return any(r != src and src.is_relative_to(r) and not any(
            t.is_relative_to(r) and src.is_relative_to(t) for t in covers) for r in ro)

    mounts = [(src, args) for src, args in mounts
              if not (args[0] == "--ro-bind" and covered(src))]
    cmd = [exe, *_system_args()]
    for _, args in mounts:
        cmd += args
    cmd += ["--dev", "/dev", *gpu_args, "--proc", "/proc",
            "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--hostname", "grading", "--new-session",
            "--die-with-parent", "--cap-drop", "ALL", "--chdir", str(workdir.resolve()), "--"]
    return SandboxCommand(cmd + argv, inner_env, box.to_json() if box else {})
