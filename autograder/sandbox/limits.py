"""How much memory, how many processes, how much output and time one graded notebook may use.

Student code runs in a sandbox (:mod:`autograder.sandbox`); this module bounds what it may
*consume* there, so that one submission cannot take the grading machine from the others:

* **memory** — the sandbox's whole process tree is put in a memory cgroup
  (``COURSE_MEMORY_LIMIT``, default 4G): past it the kernel's OOM killer stops the tree, and
  the grade table says so. Every process also gets ``RLIMIT_DATA`` (``COURSE_DATA_LIMIT``,
  default 16G), so one huge allocation (``bytearray(100 * 10**9)``) fails at once with a
  ``MemoryError`` in the cell. RLIMIT_DATA counts address space, not memory in use, and
  Numba's simulator gives each of up to 1024 threads an 8 MiB stack: hence 16G, not 4G.
  (``RLIMIT_AS`` is not used: a CUDA context reserves a huge virtual range and breaks under it.)
* **processes** — a pids cgroup (``COURSE_MAX_PROCESSES``, default 2048; threads count, and
  the simulator runs one thread per CUDA thread of a block). ``RLIMIT_NPROC`` is set too; the
  kernel ignores it for root. When the cgroup refuses a fork, the whole sandbox is stopped.
* **disk** — ``RLIMIT_FSIZE`` and the size of the private ``/tmp`` (``COURSE_DISK_LIMIT``,
  default 512M).
* **output** — bytes of output kept per notebook (``COURSE_OUTPUT_LIMIT``, default 1M); the
  rest is dropped with a note (:mod:`autograder.grading.execute`,
  :mod:`autograder.grading.trusted`).
* **time** — after one cell of a notebook times out, the rest of that notebook shares
  ``COURSE_AFTER_TIMEOUT`` seconds (default 60), in the notebook run and in the trusted
  re-check: a hanging answer costs one cell timeout, not one per cell that calls it.

cgroups are used where this process may create them: cgroup v1 hierarchies (``memory``,
``pids``), or cgroup v2 where the controllers are delegated — ``COURSE_CGROUP`` may name a
v2 cgroup prepared for grading (writable, ``+memory +pids`` in its ``cgroup.subtree_control``),
else the v2 root is tried (works as root). Where neither works, only the rlimits apply:
memory per process, processes only for non-root users; :func:`enforcement` says which,
and the grade table prints it.
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import signal
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

GIB = 2**30
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
GROUP_DIR = "course-grading"


def parse_size(text: str, name: str) -> int:
    """``"4G"``, ``"512M"``, ``"1048576"`` → bytes; a clear error naming ``name`` otherwise."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*", text, re.I)
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"{name}={text!r} is not a size: write e.g. 4G, 512M or a number of "
                         "bytes (greater than 0)")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def _positive(text: str, name: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if value <= 0:
        raise ValueError(f"{name}={text!r} must be a number greater than 0")
    return value


def human(n: int, digits: int = 6) -> str:
    """Bytes in the unit a person would use: 4 GiB, 512 MiB (``digits``: significant ones)."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.{digits}g} {unit}"
    return f"{n} B"


@dataclass(frozen=True)
class Limits:
    """The limits of one notebook's sandbox, from ``COURSE_*`` variables (see module doc)."""

    memory: int = 4 * GIB
    data: int = 16 * GIB
    processes: int = 2048
    disk: int = 512 * 2**20
    output: int = 2**20
    after_timeout: float = 60.0

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Limits:
        env = os.environ if environ is None else environ
        d = cls()

        def size(name: str, default: int) -> int:
            return parse_size(env[name], name) if env.get(name) else default

        processes = d.processes
        if env.get("COURSE_MAX_PROCESSES"):
            processes = int(_positive(env["COURSE_MAX_PROCESSES"], "COURSE_MAX_PROCESSES"))
        after = d.after_timeout
        if env.get("COURSE_AFTER_TIMEOUT"):
            after = _positive(env["COURSE_AFTER_TIMEOUT"], "COURSE_AFTER_TIMEOUT")
        return cls(memory=size("COURSE_MEMORY_LIMIT", d.memory),
                   data=size("COURSE_DATA_LIMIT", d.data), processes=processes,
                   disk=size("COURSE_DISK_LIMIT", d.disk),
                   output=size("COURSE_OUTPUT_LIMIT", d.output), after_timeout=after)

    def rlimits(self) -> dict[str, int]:
        """The rlimits a sandboxed process gets (names of the ``resource`` module)."""
        return {"RLIMIT_DATA": self.data, "RLIMIT_NPROC": self.processes,
                "RLIMIT_FSIZE": self.disk, "RLIMIT_CORE": 0}


def apply_rlimits(rlimits: dict[str, int]) -> None:
    """Lower this process's rlimits (never raise one above its current hard limit)."""
    for name, value in rlimits.items():
        which = getattr(resource, name)
        _, hard = resource.getrlimit(which)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(which, (value, value))


# ---------------------------------------------------------------------------------------------
# cgroups


@dataclass(frozen=True)
class _Mount:
    path: Path  # where the hierarchy is mounted
    root: str  # which cgroup the mount shows at its top (cgroup namespaces)
    v2: bool
    controllers: frozenset[str]


def _mounts(mountinfo: str) -> list[_Mount]:
    out = []
    for line in mountinfo.splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] not in ("cgroup", "cgroup2"):
            continue
        opts = set(tail[2].split(","))
        out.append(_Mount(Path(fields[4].replace("\\040", " ")), fields[3],
                          tail[0] == "cgroup2", frozenset(opts)))
    return out


def _own_cgroups(text: str) -> dict[str, str]:
    """/proc/self/cgroup → {controller or '' (v2): path}."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for name in parts[1].split(",") if parts[1] else [""]:
                out[name] = parts[2]
    return out


def _inside(mount: _Mount, own: str) -> Path:
    rel = os.path.relpath(own, mount.root) if own.startswith(mount.root) else "."
    return (mount.path / rel).resolve() if rel != "." else mount.path


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


def _v2_ready(path: Path, wanted: set[str]) -> bool:
    try:
        enabled = set((path / "cgroup.subtree_control").read_text().split())
    except OSError:
        return False
    return wanted <= enabled and _writable_dir(path)


def find_parents(mountinfo: str | None = None, own: str | None = None,
                 environ: dict[str, str] | None = None) -> tuple[dict[str, Path], str]:
    """Where this process may create cgroups: {'memory'|'pids': parent dir}, and why not.

    v1: a ``course-grading`` folder inside this process's own cgroup of each hierarchy.
    v2: ``COURSE_CGROUP``, else the v2 root, if ``memory`` and ``pids`` are enabled for
    children there and it is writable. The arguments exist for tests.
    """
    env = os.environ if environ is None else environ
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text() if mountinfo is None else mountinfo
        own = Path("/proc/self/cgroup").read_text() if own is None else own
    except OSError as exc:
        return {}, f"cannot read this process's cgroups ({exc})"
    mounts, mine = _mounts(mountinfo), _own_cgroups(own)
    parents: dict[str, Path] = {}
    for ctl in ("memory", "pids"):
        for m in mounts:
            if not m.v2 and ctl in m.controllers:
                base = _inside(m, mine.get(ctl, "/"))
                if _writable_dir(base):
                    parents[ctl] = base / GROUP_DIR
    if len(parents) == 2:
        return parents, ""
    v2 = [m for m in mounts if m.v2]
    candidates = [Path(env["COURSE_CGROUP"])] if env.get("COURSE_CGROUP") else []
    candidates += [m.path for m in v2]
    missing = {"memory", "pids"} - set(parents)
    for cand in candidates:
        if _v2_ready(cand, missing):
            for ctl in missing:
                parents[ctl] = cand / GROUP_DIR
            return parents, ""
    why = ("no writable cgroup with the " + " and ".join(sorted(missing)) + " controller"
           + ("s" if len(missing) > 1 else "")
           + (f" (COURSE_CGROUP={env['COURSE_CGROUP']} is not a writable cgroup v2 folder "
              "with +memory +pids in cgroup.subtree_control)" if env.get("COURSE_CGROUP")
              else ""))
    return parents, why


@dataclass
class Box:
    """The cgroups one sandbox (a notebook's kernel, or a trusted re-check) runs in."""

    limits: Limits
    groups: dict[str, Path] = field(default_factory=dict)  # controller → cgroup folder
    why_not: str = ""

    @classmethod
    def create(cls, limits: Limits, parents: dict[str, Path] | None = None,
               why_not: str = "") -> Box:
        """Create and configure the cgroups (best effort: what cannot be made is said)."""
        if parents is None:
            parents, why_not = find_parents()
        box = cls(limits, why_not=why_not)
        name = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
        for ctl, parent in parents.items():
            try:
                _prepare_parent(parent, ctl)
                _sweep(parent)
                group = parent / name
                group.mkdir()
                if ctl == "memory":
                    _set_memory(group, limits.memory)
                else:
                    (group / "pids.max").write_text(str(limits.processes))
                box.groups[ctl] = group
            except OSError as exc:
                box.why_not = (box.why_not + "; " if box.why_not else "") + \
                    f"{ctl} cgroup under {parent}: {exc}"
        return box

    def enter(self, pid: int | None = None) -> None:
        """Move ``pid`` (default: this process) into the box's cgroups."""
        for group in self.groups.values():
            (group / "cgroup.procs").write_text(str(pid or os.getpid()))

    def to_json(self) -> dict:
        return {"groups": {k: str(v) for k, v in self.groups.items()},
                "rlimits": self.limits.rlimits()}

    def breach(self) -> str | None:
        """Why the box's limits stopped (or must stop) its processes, or None."""
        mem = self.groups.get("memory")
        # The kernel's own OOM kill, or usage past the limit where the controller counts but
        # does not enforce (seen on the H200's VM: the watchdog then stops the box itself).
        if mem and (_oom_kills(mem) > 0 or _memory_usage(mem) > self.limits.memory):
            return f"it used more than {human(self.limits.memory)} of memory"
        pids = self.groups.get("pids")
        if pids and _pids_refused(pids, self.limits.processes):
            return f"it tried to run more than {self.limits.processes} processes and threads"
        return None

    def memory_in_use(self) -> int | None:
        """The box's memory in use now when it is at least half its limit, else None: no breach,
        but a cell that timed out filling memory (slowly, near the limit) then names it."""
        mem = self.groups.get("memory")
        used = _memory_usage(mem) if mem is not None else 0
        return used if used >= self.limits.memory // 2 else None

    def pids(self) -> list[int]:
        found: set[int] = set()
        for group in self.groups.values():
            with contextlib.suppress(OSError):
                found |= {int(p) for p in (group / "cgroup.procs").read_text().split()}
        return sorted(found)

    def kill(self) -> None:
        """SIGKILL every process in the box (repeatedly: a fork bomb refills it)."""
        for group in self.groups.values():
            kill_file = group / "cgroup.kill"
            if kill_file.exists():
                with contextlib.suppress(OSError):
                    kill_file.write_text("1")
        for _ in range(50):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.02)

    def remove(self) -> None:
        """Kill what is left and delete the cgroups."""
        self.kill()
        for group in self.groups.values():
            for _ in range(20):
                try:
                    group.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.05)


def _prepare_parent(parent: Path, ctl: str) -> None:
    if not parent.exists():
        with contextlib.suppress(FileExistsError):
            parent.mkdir()
    control = parent / "cgroup.subtree_control"
    if control.exists() and ctl not in control.read_text().split():
        control.write_text(f"+{ctl}")  # v2: enable the controller for the boxes below


def _sweep(parent: Path) -> None:
    """Remove boxes left by graders that died (their pid, first in the name, is gone)."""
    for old in parent.iterdir():
        if not old.is_dir() or "-" not in old.name:
            continue
        pid = old.name.split("-", 1)[0]
        if pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                old.rmdir()


def _set_memory(group: Path, limit: int) -> None:
    if (group / "memory.max").exists():  # v2
        (group / "memory.max").write_text(str(limit))
        with contextlib.suppress(OSError):
            (group / "memory.swap.max").write_text("0")
        return
    (group / "memory.limit_in_bytes").write_text(str(limit))
    with contextlib.suppress(OSError):  # only where swap accounting is on
        (group / "memory.memsw.limit_in_bytes").write_text(str(limit))


def _counter(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == key:
                return int(parts[1])
    except (OSError, ValueError):
        pass
    return 0


def _pids_refused(group: Path, limit: int) -> bool:
    """Whether the pids cgroup refused a fork. Kernels report it in different files: the
    ``max`` event in ``pids.events`` (v1, v2), in ``pids.events.local`` (v2 from Linux 6.14,
    where ``pids.events`` may count only the hierarchy's), or a ``pids.peak`` at the limit."""
    if _counter(group / "pids.events", "max") > 0:
        return True
    if _counter(group / "pids.events.local", "max") > 0:
        return True
    try:
        return int((group / "pids.peak").read_text().split()[0]) >= limit
    except (OSError, ValueError, IndexError):
        return False


def _memory_usage(group: Path) -> int:
    """Bytes the cgroup uses now (v2 ``memory.current``, v1 ``memory.usage_in_bytes``)."""
    for name in ("memory.current", "memory.usage_in_bytes"):
        with contextlib.suppress(OSError, ValueError):
            return int((group / name).read_text().split()[0])
    return 0


def _oom_kills(group: Path) -> int:
    if (group / "memory.events").exists():
        return _counter(group / "memory.events", "oom_kill")
    return _counter(group / "memory.oom_control", "oom_kill")


def enforcement(limits: Limits | None = None) -> str:
    """One line for the grade table: which limits are enforced here, and how (the time limits
    are the grade table's own line, as the grading recorded them)."""
    limits = limits or Limits.from_env()
    parents, why = find_parents()
    mem = f"memory {human(limits.memory)}" + (
        " (cgroup)" if "memory" in parents else
        f" per process only (RLIMIT_DATA {human(limits.data)}; {why})")
    if "pids" in parents:
        procs = f"processes {limits.processes} (cgroup)"
    elif os.geteuid() != 0:
        procs = f"processes {limits.processes} (RLIMIT_NPROC, counts all of this user's)"
    else:
        procs = "processes NOT limited (root ignores RLIMIT_NPROC and no pids cgroup)"
    return (f"{mem}, {procs}, files and /tmp {human(limits.disk)}, output "
            f"{human(limits.output)} per notebook")
