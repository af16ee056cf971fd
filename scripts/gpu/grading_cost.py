"""What grading costs, measured one way by every grading benchmark, and the history they keep.

    from grading_cost import measure, per_100_minutes, append_history

* :func:`measure` runs a command and counts **the CPU seconds of its own process tree**, not
  the machine's (which, on a shared machine, holds other people's work too):
  ``getrusage(RUSAGE_CHILDREN)`` before and after, this process made a *child subreaper*
  (``prctl(PR_SET_CHILD_SUBREAPER)``) so that a grandchild whose parent exits without waiting
  for it is reparented here and reaped, its CPU counted, instead of vanishing into init.
  Sandboxed processes count too: bubblewrap's init reaps what runs inside a sandbox, and its
  parent reaps bubblewrap.
* :func:`per_100_minutes` turns one submission's CPU into the minutes 100 take on a machine's
  cores when they are all busy: a floor, as if no core ever waited (for the GPU, a kernel's
  start, a lock).
* :func:`append_history` adds a row to ``docs/grading-history.md`` (date, machine, GPU,
  versions, commit, command, CPU per submission, projected minutes per 100), so that the
  numbers of every run, here or on a GPU box, stay side by side in the repository.
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import os
import platform
import resource
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from common import ROOT, versions

HISTORY = ROOT / "docs" / "grading-history.md"
HISTORY_HEAD = [
    "# Grading's cost, run by run",
    "",
    "One row per run of `make bench-grading` (`scripts/gpu/bench_grading.py`), "
    "`bash scripts/gpu/session.sh throughput16` (`scripts/gpu/throughput.py`) and "
    "`bash scripts/gpu/session.sh profile` (`scripts/gpu/profile_grading.py`), appended by "
    "the script itself (on a GPU box: copied back from the session's `$OUT`). "
    "What the columns mean: [grading-cost.md](grading-cost.md), \"Benchmarks and their history\".",
    "",
    "| date (UTC) | machine | GPU | versions | commit | command | CPU-s per full submission "
    "| projected min per 100 | notes |",
    "|---|---|---|---|---|---|---|---|---|",
]
PR_SET_CHILD_SUBREAPER = 36


@dataclass(frozen=True)
class Run:
    """One measured command: its CPU seconds (its process tree), wall seconds, exit code."""

    label: str
    cpu_s: float
    wall_s: float
    returncode: int
    output: str = ""


def children_cpu() -> float:
    """User + system seconds of every child this process has waited for so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def become_subreaper() -> bool:
    """Make orphaned descendants this process's children (Linux); False where it cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def reap_orphans(wait_s: float = 30.0) -> int:
    """Wait for the orphans reparented here (see :func:`become_subreaper`), up to ``wait_s``;
    return how many were still running then (their CPU is not counted)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return 0
        if pid:
            continue
        if time.monotonic() > deadline:
            return len([p for p in _children() if p != os.getpid()])
        time.sleep(0.1)


def _children() -> list[int]:
    with contextlib.suppress(OSError):
        text = Path(f"/proc/self/task/{os.getpid()}/children").read_text()
        return [int(p) for p in text.split()]
    return []


def measure(label: str, command: Sequence[str], *, cwd: Path, env: dict[str, str] | None = None,
            on_line: Callable[[str], None] | None = None) -> Run:
    """Run ``command`` (output streamed to ``on_line``, line by line); its :class:`Run`. Call
    :func:`become_subreaper` once first, and start no other process meanwhile."""
    cpu0, wall0 = children_cpu(), time.monotonic()
    lines = []
    with subprocess.Popen(list(command), cwd=cwd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace") as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if on_line is not None:
                on_line(line.rstrip("\n"))
    wall = time.monotonic() - wall0
    left = reap_orphans()
    output = "".join(lines)
    if left:
        output += f"\n({left} orphaned process(es) still running: their CPU is not counted)\n"
    return Run(label, children_cpu() - cpu0, wall, proc.returncode, output)


def per_100_minutes(cpu_s: float, cores: int, submissions: int = 100) -> float:
    """Minutes ``submissions`` take at ``cpu_s`` each on ``cores`` cores, every core busy."""
    if cores < 1:
        raise ValueError(f"cores must be at least 1, got {cores}")
    return submissions * cpu_s / cores / 60


def gpu_name() -> str:
    """The GPUs' model (``nvidia-smi``), ``1× NVIDIA H200``; ``none (simulator)`` without."""
    smi = shutil.which("nvidia-smi")
    if smi:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            names = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"],
                                   capture_output=True, text=True, timeout=20).stdout.split("\n")
            names = [n.strip() for n in names if n.strip()]
            if names:
                return ", ".join(f"{names.count(n)}× {n}" for n in dict.fromkeys(names))
    return "none (simulator)"


def commit() -> str:
    """This checkout's commit (``-dirty`` with uncommitted changes to tracked files outside
    ``docs/``, where the history itself is written);
    ``COURSE_COMMIT`` first when set: a GPU box gets a copy of the working tree whose git
    (where it has one) names an older commit, as on 2026-12-02."""
    if os.environ.get("COURSE_COMMIT"):
        return os.environ["COURSE_COMMIT"]
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, timeout=20)
        if head.returncode == 0 and head.stdout.strip():
            dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", ".", ":!docs"],
                                   cwd=ROOT, capture_output=True, timeout=20).returncode != 0
            return head.stdout.strip() + ("-dirty" if dirty else "")
    return "unknown (no git; set COURSE_COMMIT)"


def machine() -> str:
    """``2 cores x86_64, 24 GiB``."""
    memory = ""
    with contextlib.suppress(OSError, ValueError, IndexError):
        kib = int(Path("/proc/meminfo").read_text().split("\n", 1)[0].split()[1])
        memory = f", {kib / 2**20:.0f} GiB"
    return f"{os.cpu_count()} cores {platform.machine()}{memory}"


#: switches that change how grading runs: a row's command names those set when it was measured
SWITCHES = ("COURSE_CHECK_FORK", "COURSE_KERNEL_FORK", "COURSE_GRADING_STAGGER")


def history_row(command: Sequence[str] | str, cpu_per_submission: float, minutes_per_100: float,
                notes: str = "", when: datetime.datetime | None = None) -> str:
    """One Markdown row of the history table."""
    when = when or datetime.datetime.now(datetime.UTC)
    text = command if isinstance(command, str) else shlex.join(command)
    switches = " ".join(f"{name}={os.environ[name]}" for name in SWITCHES if name in os.environ)
    text = f"{switches} {text}" if switches else text
    cells = [f"{when:%Y-%m-%d %H:%M}", machine(), gpu_name(), versions(), f"`{commit()}`",
             f"`{text}`", f"{cpu_per_submission:.1f}", f"{minutes_per_100:.1f}", notes]
    return "| " + " | ".join(c.replace("|", "/").replace("\n", " ") for c in cells) + " |"


def append_history(row: str, path: Path = HISTORY) -> Path:
    """Append ``row`` to the history file (written with its head if it is new)."""
    lines = path.read_text().rstrip("\n").split("\n") if path.exists() else list(HISTORY_HEAD)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([*lines, row]) + "\n")
    return path
