"""Where grading's CPU time goes: a per-notebook, per-process-kind profile of one grading run.

    .venv/bin/python scripts/gpu/profile_grading.py --out profile.md
    .venv/bin/python scripts/gpu/profile_grading.py -- python -m sample_class --class full \
        --students ada_correct

It runs the command (by default the one above: one full correct submission, graded end to end
with the verdict audit on) and counts **the CPU time of that command's own process tree**, not
the machine's: other people's work on a shared machine is left out.

* **Total** (exact): ``getrusage(RUSAGE_CHILDREN)`` around the command — user + system seconds of
  every process of the tree that was waited for (bubblewrap reaps what runs inside a sandbox, so
  the sandboxed kernels and check processes are included).
* **By kind and notebook** (sampled): every 50 ms the tree under the command is read from
  ``/proc`` (each process's ``utime + stime``, threads included, and its command line), and each
  interval's CPU is given to the kind of process that used it and to the notebook being graded
  then (the one whose kernel started last). Kinds: the harness, nbgrader's own work (the grading
  worker, nbgrader commands), the notebook's sandboxed kernel, the fresh processes a check starts
  from that kernel (``course._isolated``), the trusted re-check process, and the fresh processes
  a check starts from it. What the sampling misses (processes shorter than 50 ms, the last
  interval of each process) is shown as "not attributed".
* **Start-up costs** (``--startup``): the CPU of starting a bare Python, ``import numpy``,
  ``import numba.cuda`` on the simulator, ``import course``, and the trusted re-check's and the
  check process's imports, each in a fresh process — the fixed price each process kind pays.
* **The machine** (``/proc/stat``, all cores): printed beside the total for comparison. On a shared
  machine it includes everyone's work; it equals the total only when nothing else runs.
* **Per submission** (issue 39's measure): the notebooks' rows summed — the release and staging
  before the first notebook and the class's feedback, export and table after the last are paid
  once per class and left out — and the minutes 100 such submissions take when every core of
  this machine is busy (a floor). Printed, and appended to ``docs/grading-history.md``
  (``--history``, ``--no-history``; on a GPU box ``session.sh`` copies the file to ``$OUT``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import platform
import re
import resource
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

from common import ROOT  # first: the shared setup (common.py)
from grading_cost import (
    HISTORY,
    append_history,
    become_subreaper,
    history_row,
    per_100_minutes,
    reap_orphans,
)

from autograder.grading.ungraded import nothing_graded

TICK = os.sysconf("SC_CLK_TCK")
#: a grading kernel's own folder (autograder.grading.execute), in the command line of its processes
KERNEL_DIR = re.compile(r"week4-kernel-(?:server-[A-Za-z0-9_]+/ro/kernel-)?[A-Za-z0-9_]+")
DEFAULT = [sys.executable, "-m", "sample_class", "--class", "full",
           "--students", "ada_correct"]
KINDS = {
    "harness": "the harness (staging, table)",
    "nbgrader": "nbgrader (worker: conversions, gradebook; release, feedback, export)",
    "kernel": "notebook kernel (sandboxed IPython)",
    "kernel-isolated": "checks' fresh processes started from the kernel",
    "trusted": "trusted re-check process",
    "trusted-isolated": "checks' fresh processes started from the trusted re-check",
}
STARTUP = {
    "python -c pass": "pass",
    "import numpy": "import numpy",
    "import numba.cuda (simulator)": "from numba import cuda",
    "import course": "import course",
    "trusted re-check's imports": "import course.checks.speedup, course.trust.kernel_source",
    "check process's imports (course._isolated)": "import course._isolated.tasks",
}


def _machine_busy() -> float:
    """Seconds all cores spent busy since boot (``/proc/stat``: everything but idle and iowait)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / TICK


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _snapshot() -> dict[int, tuple[int, float, str, float]]:
    """pid → (ppid, cpu seconds, command line, start tick) for every process visible."""
    procs = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            cmd = Path(entry.path, "cmdline").read_bytes().replace(b"\0", b" ").decode(
                errors="replace")
        except OSError:
            continue
        rest = stat[stat.rindex(")") + 2:].split()
        procs[int(entry.name)] = (int(rest[1]), (int(rest[11]) + int(rest[12])) / TICK, cmd,
                                  float(rest[19]))
    return procs


def _kind(pid: int, procs: dict, root: int) -> str:
    """What kind of process ``pid`` is, from its own and its ancestors' command lines."""
    chain, p = [], pid
    while p in procs and p != root:
        chain.append(procs[p][2])
        p = procs[p][0]
    isolated = any("course._isolated" in c for c in chain)
    if any("autograder.grading.trusted_child" in c for c in chain):
        return "trusted-isolated" if isolated else "trusted"
    if any("ipykernel" in c or "autograder.sandbox -f" in c
           or "autograder.sandbox.forkserver" in c for c in chain):
        return "kernel-isolated" if isolated else "kernel"
    if any("nbgrader" in c or "autograder.runner.worker" in c for c in chain):
        return "nbgrader"
    return "harness"


CGROUP_BASE = Path("/sys/fs/cgroup/cpuacct")


class Groups:
    """One cpuacct cgroup (v1) per process kind under a cgroup of the profiled command: exact
    CPU time per kind, read at notebook boundaries. None where cpuacct cannot be used."""

    def __init__(self) -> None:
        self.root = CGROUP_BASE / f"week4-profile-{os.getpid()}"
        self.root.mkdir()
        for kind in KINDS:
            (self.root / kind).mkdir()

    @staticmethod
    def create() -> Groups | None:
        try:
            return Groups()
        except OSError:
            return None

    def join(self, kind: str, pid: int) -> None:
        with contextlib.suppress(OSError):  # gone already
            (self.root / kind / "cgroup.procs").write_text(str(pid))

    def usage(self) -> dict[str, float]:
        """CPU seconds of each kind's group so far (their descendants included)."""
        return {k: int((self.root / k / "cpuacct.usage").read_text()) / 1e9 for k in KINDS}

    def total(self) -> float:
        return int((self.root / "cpuacct.usage").read_text()) / 1e9

    def remove(self) -> None:
        for kind in KINDS:
            with contextlib.suppress(OSError):
                (self.root / kind).rmdir()
        with contextlib.suppress(OSError):
            self.root.rmdir()


class Sampler(threading.Thread):
    """Watches the process tree under ``root``: puts each process in its kind's cgroup (or, with
    no cgroups, samples each process's CPU) and gives CPU to the notebook being graded then."""

    def __init__(self, root: int, notebooks: list[str], groups: Groups | None,
                 period: float = 0.05) -> None:
        super().__init__(daemon=True)
        self.root, self.notebooks, self.groups, self.period = root, notebooks, groups, period
        self.stop = threading.Event()
        self.cpu: dict[tuple[str, str], float] = defaultdict(float)
        self.seen: dict[tuple[int, float], float] = {}
        self.where: dict[tuple[int, float], tuple[str, str]] = {}
        self.kernels: list[tuple[int, float]] = []
        self.counts: dict[str, set] = defaultdict(set)
        self._last = {k: 0.0 for k in KINDS}
        self.after = False
        self.has_kernel: str | None = None  # the current notebook's kernel folder, once seen
        self.known: set[tuple[tuple[int, float], str]] = set()
        self.feedback = threading.Event()  # the harness said "$ nbgrader generate_feedback"
        self.requests: dict[str, int] = {}  # a warm trusted process's folder -> requests seen

    def _tree(self, procs: dict) -> set[int]:
        kids: dict[int, list[int]] = defaultdict(list)
        for pid, (ppid, *_rest) in procs.items():
            kids[ppid].append(pid)
        out, todo = set(), [self.root]
        while todo:
            p = todo.pop()
            out.add(p)
            todo += kids.get(p, [])
        return out

    def _notebook(self) -> str:
        n = len(self.kernels)
        if self.after:
            return "(feedback, export, table)"
        if n == 0:
            return "(before the first notebook)"
        return self.notebooks[n - 1] if n <= len(self.notebooks) else f"notebook {n}"

    def _begins_notebook(self, cmd: str) -> bool:
        """A notebook's grading begins with its trusted re-check (run before the notebook) or,
        when it has no test cells, its kernel; the one before it has had its kernel by then.
        A kernel's processes are recognised by its own folder (``week4-kernel-…``)."""
        first = not self.kernels or self.has_kernel is not None
        kernel = None if "autograder.sandbox.forkserver" in cmd else KERNEL_DIR.search(cmd)
        if kernel:
            new = kernel.group(0) != self.has_kernel
            begins = new and first
            self.has_kernel = kernel.group(0)
            return begins
        return False

    def _new_trusted_request(self, pid: int) -> bool:
        """A student's warm trusted process (autograder/grading/trusted_process.py) got a notebook's
        request: a new ``request-N`` folder in its working folder. That begins the notebook
        (its re-check runs before its kernel), as a new trusted process did before."""
        try:
            folder = os.readlink(f"/proc/{pid}/cwd")
            count = len([n for n in os.listdir(folder) if n.startswith("request-")])
        except OSError:
            return False
        if count <= self.requests.get(folder, 0):
            return False
        self.requests[folder] = count
        if self.kernels and self.has_kernel is None:
            return False  # the notebook before had no kernel yet: still its checks
        self.has_kernel = None
        return True

    def _flush(self) -> None:
        """Give the kinds' CPU since the last flush to the notebook graded meanwhile."""
        if self.groups is None:
            return
        now = self.groups.usage()
        for kind, v in now.items():
            self.cpu[(self._notebook(), kind)] += v - self._last[kind]
        self._last = now

    def run(self) -> None:
        while True:
            stopping = self.stop.is_set()
            procs = _snapshot()
            for pid in sorted(self._tree(procs), key=lambda p: procs.get(p, (0, 0, "", 0))[3]):
                if pid not in procs:
                    continue
                _ppid, cpu, cmd, start = procs[pid]
                key = (pid, start)
                kind = _kind(pid, procs, 0)
                if self.feedback.is_set() and not self.after:
                    self._flush()
                    self.after = True
                if "autograder.grading.trusted_child" in cmd and "python" in cmd.split()[0] \
                        and self._new_trusted_request(pid):
                    self._flush()
                    self.kernels.append(key)
                if (key, cmd) not in self.known:  # first sight (or a new program: exec)
                    self.known.add((key, cmd))
                    if self._begins_notebook(cmd):
                        self._flush()  # a new notebook: what came before was the last one's
                        self.kernels.append(key)
                if "python" in cmd:
                    self.counts[kind].add(key)
                if self.groups is not None:
                    if self.where.get(key) != (cmd, kind):
                        self.groups.join(kind, pid)
                        self.where[key] = (cmd, kind)
                    continue
                before = self.seen.get(key, 0.0)
                if cpu > before:
                    self.cpu[(self._notebook(), kind)] += cpu - before
                    self.seen[key] = cpu
            if stopping:
                self._flush()
                return
            self.stop.wait(self.period)


def startup_costs(repeats: int = 2) -> dict[str, float]:
    """CPU seconds of each start-up in a fresh process (the best of ``repeats``)."""
    # the repository first, then whatever else the caller's path holds (a GPU machine's
    # carried wheels in /tmp/site, say)
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1", PYTHONPATH=os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    out = {}
    for label, code in STARTUP.items():
        best = float("inf")
        for _ in range(repeats):
            before = _children_cpu()
            subprocess.run([sys.executable, "-c", code], env=env, check=True, cwd=ROOT)
            best = min(best, _children_cpu() - before)
        out[label] = best
    return out


def profile(command: list[str], notebooks: list[str]) -> dict:
    """Run ``command``; return the total, the machine's busy time and the sampled breakdown."""
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                  os.environ.get("PATH", "")]))
    groups = Groups.create()
    become_subreaper()  # orphans are reaped here: the rusage total counts them
    cpu0, busy0, wall0 = _children_cpu(), _machine_busy(), time.monotonic()
    join = (lambda: groups.join("harness", os.getpid())) if groups else None
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, preexec_fn=join)
    sampler = Sampler(proc.pid, notebooks, groups)
    sampler.start()
    lines = []
    assert proc.stdout is not None
    for line in proc.stdout:  # feedback and export run in the harness: its words mark them
        lines.append(line)
        # the class's own work after the last notebook: feedback for students no grading slot
        # wrote it for (each slot now writes its student's, which stays in the submission) and
        # the export (the table follows it)
        if line.startswith(("$ nbgrader generate_feedback", "$ nbgrader export")):
            sampler.feedback.set()
    proc.wait()
    wall = time.monotonic() - wall0
    reap_orphans()
    output = "".join(lines)
    sampler.stop.set()
    sampler.join()
    total = _children_cpu() - cpu0
    how = "this command's process tree, rusage (orphans reaped here)"
    if groups is not None:
        total, how = groups.total(), "this command's cgroup (cpuacct)"
        groups.remove()
    return {"total": total, "how": how, "machine": _machine_busy() - busy0,
            "wall": wall, "cpu": dict(sampler.cpu),
            "processes": {k: len(v) for k, v in sampler.counts.items()},
            "returncode": proc.returncode, "output": output}


#: the rows that are not one submission's: paid once per class
CLASS_ROWS = ("(before the first notebook)", "(feedback, export, table)")


def per_submission(result: dict) -> float:
    """CPU seconds of the notebooks' rows (see the module's docstring)."""
    return sum(v for (nb, _kind), v in result["cpu"].items() if nb not in CLASS_ROWS)


def per_submission_line(result: dict, cores: int) -> str:
    """The per-submission CPU and the minutes 100 take, as printed."""
    each = per_submission(result)
    return (f"**Per full submission: {each:.1f} CPU-s** (the notebooks' rows; the release, "
            f"staging, class feedback, export and table left out); 100 such on {cores} cores, "
            f"every core busy: **{per_100_minutes(each, cores):.1f} min**.")


def report(result: dict, command: list[str], startup: dict[str, float] | None) -> str:
    """The Markdown table of one profile."""
    cpu = result["cpu"]
    notebooks = sorted({nb for nb, _ in cpu}, key=lambda s: (s.startswith("(f"),
                                                             not s.startswith("("), s))
    kinds = [k for k in KINDS if any(kk == k for _, kk in cpu)]
    lines = [f"Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; machine: "
             f"{platform.node()}, {os.cpu_count()} cores ({platform.machine()}); "
             f"command: `{' '.join(Path(c).name if i == 0 else c for i, c in enumerate(command))}`",
             "",
             f"**Total: {result['total']:.1f} CPU-s** ({result['how']}), "
             f"{result['wall']:.0f} s wall; the whole machine meanwhile (`/proc/stat`, "
             f"everyone's work): {result['machine']:.1f} CPU-s. Exit code {result['returncode']}.",
             "", "| notebook | " + " | ".join(kinds) + " | all |",
             "|---" * (len(kinds) + 2) + "|"]
    for nb in notebooks:
        row = [cpu.get((nb, k), 0.0) for k in kinds]
        lines.append(f"| {nb} | " + " | ".join(f"{v:.1f}" for v in row)
                     + f" | {sum(row):.1f} |")
    col = [sum(v for (_, k), v in cpu.items() if k == kind) for kind in kinds]
    lines.append("| **all** | " + " | ".join(f"**{v:.1f}**" for v in col)
                 + f" | **{sum(col):.1f}** |")
    lines += ["", per_submission_line(result, os.cpu_count() or 1),
              "", f"Not attributed (no cgroups: processes shorter than a sample, last "
              f"intervals): {result['total'] - sum(col):.1f} CPU-s.",
              "Python processes started, by kind: " + ", ".join(
                  f"{k} {n}" for k, n in sorted(result["processes"].items())) + ".", ""]
    for k in kinds:
        lines.append(f"* {k}: {KINDS[k]}")
    if startup:
        lines += ["", "| start-up, in a fresh process | CPU-s |", "|---|---|"]
        lines += [f"| {k} | {v:.2f} |" for k, v in startup.items()]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, help="also write the Markdown report here, and "
                        "the command's output beside it (the same name, .log)")
    parser.add_argument("--startup", action="store_true",
                        help="also measure the start-up cost of each process kind")
    parser.add_argument("--history", type=Path, default=None,
                        help="append the result here (default: docs/grading-history.md)")
    parser.add_argument("--no-history", action="store_true", help="append no history row")
    parser.add_argument("command", nargs="*", help="the command to profile (after --)")
    args = parser.parse_args()
    command = args.command or DEFAULT
    # notebooks with nothing graded are not run at grading (autograder/grading/ungraded.py)
    notebooks = sorted(p.stem for p in (ROOT / "release" / "week4").glob("*.ipynb")
                       if not nothing_graded(ROOT, {"nbgrader": {"notebook": p.stem}}))
    startup = startup_costs() if args.startup else None
    result = profile(command, notebooks)
    text = report(result, command, startup)
    print(result["output"][-3000:])
    print(text)
    if args.out:
        args.out.write_text(text)
        # the command's own output beside the report: what a non-zero exit code means (a GPU
        # session keeps only the tail of what is printed)
        args.out.with_suffix(".log").write_text(result["output"])
    if not args.no_history:
        each, cores = per_submission(result), os.cpu_count() or 1
        shown = " ".join(Path(c).name if i == 0 else c for i, c in enumerate(command))
        row = history_row(shown, each, per_100_minutes(each, cores),
                          f"profile: the notebooks' rows ({result['how'].split(',')[0]}); whole "
                          f"command {result['total']:.1f} CPU-s, {result['wall']:.0f} s wall; "
                          f"min per 100 = CPU ÷ cores; exit {result['returncode']}")
        print(f"history: a row appended to {append_history(row, args.history or HISTORY)}")
    return result["returncode"]


if __name__ == "__main__":
    raise SystemExit(main())
