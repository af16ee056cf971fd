"""Grading isolation: student code reaches no network, no instructor file or secret, and no
more than its share of memory, processes, output and time (issue 10).

Three levels: the sandbox alone (``sandbox.wrap``), a notebook run through the grading
kernel (``SurvivingExecute``: ipc transport, watchdog, budget), and the trusted re-check
(``trusted_process.run_jobs``). The end-to-end run of the hostile sample students through
``nbgrader autograde`` is part of the one sample-class run (tests/test_sample_class.py), so
the class is graded once per test session.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import nbformat
import pytest
from loopback import Listener

from autograder.grading import config
from autograder.sandbox import bwrap as sandbox
from autograder.sandbox import limits

ROOT = Path(__file__).resolve().parents[1]
needs_bwrap = pytest.mark.skipif(sandbox.bwrap_path() is None,
                                 reason="bubblewrap is not installed (make system-deps)")
PARENTS, WHY_NO_CGROUP = limits.find_parents()


def needs_cgroup(ctl: str):
    return pytest.mark.skipif(ctl not in PARENTS, reason=f"no writable {ctl} cgroup here "
                              f"({WHY_NO_CGROUP}); only the rlimits apply")


# ---------------------------------------------------------------------------------------------
# Limits and discovery, without a sandbox.


def test_limits_come_from_the_environment_and_bad_values_are_named() -> None:
    got = limits.Limits.from_env({"COURSE_MEMORY_LIMIT": "2G", "COURSE_MAX_PROCESSES": "99",
                                  "COURSE_OUTPUT_LIMIT": "64K", "COURSE_AFTER_TIMEOUT": "7.5"})
    assert (got.memory, got.processes, got.output, got.after_timeout) == \
        (2 * 2**30, 99, 64 * 2**10, 7.5)
    assert limits.Limits.from_env({}) == limits.Limits()
    with pytest.raises(ValueError, match="COURSE_MEMORY_LIMIT"):
        limits.Limits.from_env({"COURSE_MEMORY_LIMIT": "lots"})
    with pytest.raises(ValueError, match="COURSE_MAX_PROCESSES"):
        limits.Limits.from_env({"COURSE_MAX_PROCESSES": "0"})


def test_scrubbed_env_keeps_only_the_allow_list() -> None:
    env = sandbox.scrubbed_env({"PATH": "/usr/bin", "LC_ALL": "C", "CUDA_VISIBLE_DEVICES": "0",
                                "NUMBA_OPT": "2", "JUPYTERHUB_API_TOKEN": "t",
                                "AWS_SECRET_ACCESS_KEY": "k", "COURSE_GRADING_ROOT": "/c",
                                "HOME": "/root"})
    assert env["PATH"] == "/usr/bin" and env["LC_ALL"] == "C" and env["NUMBA_OPT"] == "2"
    assert env["CUDA_VISIBLE_DEVICES"] == "0" and env["HOME"] == "/tmp"
    for gone in ("JUPYTERHUB_API_TOKEN", "AWS_SECRET_ACCESS_KEY", "COURSE_GRADING_ROOT"):
        assert gone not in env


def test_sandboxed_processes_get_one_blas_thread_unless_the_instructor_chose() -> None:
    """OpenBLAS starts a thread per core at ``import numpy`` (0.9 CPU-s per process on a
    16-core machine); each sandboxed process gets one unless the instructor set a number."""
    env = sandbox.scrubbed_env({"PATH": "/usr/bin"})
    assert env["OPENBLAS_NUM_THREADS"] == env["OMP_NUM_THREADS"] == "1"
    chosen = sandbox.scrubbed_env({"PATH": "/usr/bin", "OMP_NUM_THREADS": "4"})
    assert chosen["OMP_NUM_THREADS"] == "4" and chosen["OPENBLAS_NUM_THREADS"] == "1"


def test_blas_starts_one_thread_in_a_sandboxed_environment() -> None:
    """What the default does to a real process: numpy's BLAS reports one thread."""
    pytest.importorskip("threadpoolctl")
    code = ("import numpy, threadpoolctl, json; "
            "print(json.dumps([p['num_threads'] for p in threadpoolctl.threadpool_info() "
            "if p['user_api'] == 'blas']))")
    env = {**os.environ, **sandbox.ENV_THREAD_DEFAULTS}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) and set(json.loads(out)) == {1}


def test_cuda_driver_is_found_in_each_place_it_can_live(tmp_path: Path) -> None:
    dirs = {}
    for name in ("maps", "ldconfig", "ldpath", "smi/lib64"):
        d = tmp_path / name
        d.mkdir(parents=True)
        (d / "libcuda.so.1").write_text("")
        dirs[name] = d
    (tmp_path / "smi" / "bin").mkdir()
    (tmp_path / "smi" / "bin" / "nvidia-smi").write_text("")
    maps = f"7f00-7f01 r-xp 00000000 08:01 42   {dirs['maps']}/libcuda.so.550.54\n"
    ldconfig = ("1 libs found in cache\n\tlibcuda.so.1 (libc6,x86-64) => "
                f"{dirs['ldconfig']}/libcuda.so.1\n\tlibz.so.1 (libc6,x86-64) => /nowhere/libz")
    found = sandbox.cuda_driver_dirs(maps=maps, ldconfig=ldconfig,
                                     environ={"LD_LIBRARY_PATH": f"/none:{dirs['ldpath']}"},
                                     nvidia_smi=str(tmp_path / "smi" / "bin" / "nvidia-smi"))
    assert found == [dirs["maps"], dirs["ldconfig"], dirs["ldpath"], dirs["smi/lib64"]]
    assert sandbox.cuda_driver_dirs(maps="", ldconfig="", environ={}, nvidia_smi=None) == []


def _fake_v2(tmp_path: Path) -> Path:
    root = tmp_path / "cg2"
    root.mkdir()
    (root / "cgroup.subtree_control").write_text("memory pids\n")
    return root


def test_cgroup_v2_is_used_where_delegated(tmp_path: Path, monkeypatch) -> None:
    """The v2 code path on a fake cgroup tree (this machine has cgroup v1)."""
    root = _fake_v2(tmp_path)
    mountinfo = f"30 20 0:26 / {root} rw - cgroup2 cgroup2 rw\n"
    parents, why = limits.find_parents(mountinfo=mountinfo, own="0::/user.slice\n",
                                       environ={})
    assert parents == {"memory": root / limits.GROUP_DIR, "pids": root / limits.GROUP_DIR}
    (root / "cgroup.subtree_control").write_text("cpu\n")  # not delegated: said why
    parents, why = limits.find_parents(mountinfo=mountinfo, own="0::/\n", environ={})
    assert parents == {} and "memory and pids" in why
    (root / "cgroup.subtree_control").write_text("memory pids\n")

    # Box.create writes the limits; a fake kernel writes the files a real one would.
    real_mkdir = Path.mkdir

    def mkdir(self, *a, **k):
        real_mkdir(self, *a, **k)
        if self.parent.name == limits.GROUP_DIR:
            for f in ("memory.max", "memory.events", "pids.max", "pids.events",
                      "cgroup.procs"):
                (self / f).write_text("")
        elif self.name == limits.GROUP_DIR:
            (self / "cgroup.subtree_control").write_text("")

    monkeypatch.setattr(Path, "mkdir", mkdir)
    lim = limits.Limits(memory=123456789, processes=77)
    box = limits.Box.create(lim, parents={"memory": root / limits.GROUP_DIR})
    group = box.groups["memory"]
    assert (group / "memory.max").read_text() == "123456789"
    assert box.breach() is None
    (group / "memory.events").write_text("low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n")
    assert "memory" in box.breach()


def test_a_box_half_full_says_how_much_memory_it_uses(tmp_path: Path) -> None:
    """At least half its limit in use, a box reports it (a timeout then names memory; a
    slow fill can reach the time limit first); never a breach (page cache fills boxes)."""
    gib = 2**30
    for usage_file in ("memory.current", "memory.usage_in_bytes"):  # cgroup v2, v1
        group = tmp_path / usage_file
        group.mkdir()
        box = limits.Box(limits.Limits(memory=4 * gib), groups={"memory": group})
        assert box.memory_in_use() is None  # nothing to read
        (group / usage_file).write_text(str(2 * gib - 1))
        assert box.memory_in_use() is None  # under half
        (group / usage_file).write_text(str(3880 * 2**20))
        assert box.memory_in_use() == 3880 * 2**20 and box.breach() is None
        assert limits.human(3880 * 2**20, 2) == "3.8 GiB"
    assert limits.Box(limits.Limits(memory=gib)).memory_in_use() is None  # no memory cgroup


# ---------------------------------------------------------------------------------------------
# The sandbox itself.


def _sandboxed(code: str, tmp_path: Path, **kw) -> subprocess.CompletedProcess:
    course, work = tmp_path / "course", tmp_path / "course" / "w"
    work.mkdir(parents=True, exist_ok=True)
    box = limits.Box.create(limits.Limits.from_env())
    try:
        command = sandbox.wrap([sys.executable, "-c", code], course_root=course, workdir=work,
                               box=box, **kw)
        return subprocess.run(command.launcher_argv(), env=command.env, capture_output=True,
                              text=True, timeout=120)
    finally:
        box.remove()


@pytest.fixture
def planted(tmp_path: Path):
    """A secret in files outside the course (home, /var/tmp, /srv, /opt, /mnt) and in env."""
    secret = f"planted-{uuid.uuid4().hex}"
    places = [Path.home() / f".week4-secret-{secret[-8:]}.txt"]
    for folder in ("/var/tmp", "/srv", "/opt", "/mnt"):
        if os.access(folder, os.W_OK):
            places.append(Path(folder) / f"week4-secret-{secret[-8:]}.txt")
    for place in places:
        place.write_text(secret)
    old = {k: os.environ.get(k) for k in ("JUPYTERHUB_API_TOKEN", "WEEK4_PLANTED_SECRET")}
    os.environ.update(JUPYTERHUB_API_TOKEN=secret, WEEK4_PLANTED_SECRET=secret)
    yield secret, places
    for place in places:
        place.unlink(missing_ok=True)
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


SCAN = """
import glob, os
secret = {reversed_secret!r}[::-1]  # not literally in this process's command line
hits = []
for path in {paths!r} + glob.glob('/proc/*/environ') + glob.glob('/proc/*/cmdline'):
    try:
        if secret.encode() in open(path, 'rb').read():
            hits.append(path)
    except OSError:
        pass
if secret in repr(dict(os.environ)):
    hits.append('os.environ')
print('HITS', hits)
print('ROOT', sorted(os.listdir('/')))
print('PIDS', sorted(p for p in os.listdir('/proc') if p.isdigit()))
"""


@needs_bwrap
def test_planted_files_and_env_secrets_are_invisible(tmp_path: Path, planted) -> None:
    secret, places = planted
    code = SCAN.format(paths=[str(p) for p in places], reversed_secret=secret[::-1])
    for gpu in (False, True):
        out = _sandboxed(code, tmp_path, gpu=gpu)
        assert out.returncode == 0, out.stderr
        assert "HITS []" in out.stdout, out.stdout
        top = set(eval(out.stdout.split("ROOT ", 1)[1].splitlines()[0]))  # noqa: S307
        allowed = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc", "dev",
                   "proc", "tmp"} | {p.parts[1] for p in sandbox._python_paths()} | \
            {ROOT.parts[1]}
        assert top <= allowed, top - allowed
        for gone in ("home", "srv", "mnt", "var", "opt", "boot", "run", "sys"):
            assert gone not in top or gone in {p.parts[1] for p in sandbox._python_paths()}
    # The check can fail: the same scan outside the sandbox finds every planted secret.
    plain = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    for place in places:
        assert str(place) in plain.stdout
    assert "os.environ" in plain.stdout


@needs_bwrap
def test_gpu_devices_and_driver_only_where_asked(tmp_path: Path) -> None:
    dev, driver = tmp_path / "fakedev", tmp_path / "nvidia" / "lib64"
    dev.mkdir()
    driver.mkdir(parents=True)
    for name in ("nvidia0", "nvidiactl", "nvidia-uvm"):
        (dev / name).write_text("")
    (driver / "libcuda.so.1").write_text("fake driver")
    code = (f"import os; print(sorted(p for p in os.listdir('/dev') if 'nvidia' in p)); "
            f"print(os.path.exists({str(driver / 'libcuda.so.1')!r})); "
            "print(os.environ.get('LD_LIBRARY_PATH', '')); "
            "print(os.environ.get('NUMBA_ENABLE_CUDASIM'))")
    with_gpu = _sandboxed(code, tmp_path, gpu=True, dev=dev, driver_dirs=[driver])
    assert with_gpu.returncode == 0, with_gpu.stderr
    lines = with_gpu.stdout.splitlines()
    assert lines[0] == "['nvidia-uvm', 'nvidia0', 'nvidiactl']" and lines[1] == "True"
    assert str(driver) in lines[2].split(":")
    assert lines[3] == str(os.environ.get("NUMBA_ENABLE_CUDASIM"))  # inherited, not forced
    without = _sandboxed(code, tmp_path, gpu=False, dev=dev, driver_dirs=[driver])
    assert without.stdout.splitlines()[:2] == ["[]", "False"]
    assert without.stdout.splitlines()[3] == "1"  # the notebook kernel runs on the simulator


# ---------------------------------------------------------------------------------------------
# A notebook in the grading kernel.


def _run_notebook(sources: list[str], tmp_path: Path, timeout: int = 60,
                  resources: dict | None = None, metadata: list[dict] | None = None):
    """Run ``sources`` as one notebook's cells in the grading kernel: (outputs, dead kernel,
    notes, seconds). ``resources``, when given, is the dict the grading fills (read what it
    recorded there afterwards); ``metadata``, each cell's metadata as handed in."""
    from autograder.grading.execute import DEAD_KERNEL_KEY, NOTES_KEY, SurvivingExecute

    course = tmp_path / "course"
    work = course / "autograded" / "s" / "week4"
    work.mkdir(parents=True, exist_ok=True)
    os.environ["JUPYTER_PATH"] = str(config.install_sandboxed_kernelspec(course))
    os.environ[sandbox.ROOT_ENV] = str(course)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    for cell, handed_in in zip(nb.cells, metadata or [], strict=False):
        cell.metadata.update(handed_in)
    ex = SurvivingExecute(kernel_name=config.KERNEL_NAME, timeout=timeout,
                          interrupt_on_timeout=True)
    resources = {} if resources is None else resources
    resources.setdefault("metadata", {"path": str(work)})
    started = time.monotonic()
    nb, res = ex.preprocess(nb, resources)
    outputs = []
    for cell in nb.cells:
        text = ""
        for o in cell.outputs:
            text += o.get("text", "") + o.get("ename", "") + o.get("evalue", "")
            text += json.dumps(o["data"]) if "data" in o else ""
        outputs.append(text)
    return outputs, res.get(DEAD_KERNEL_KEY), res.get(NOTES_KEY, []), \
        time.monotonic() - started


@pytest.fixture
def kernel_env(monkeypatch):
    monkeypatch.setenv("JUPYTER_PATH", os.environ.get("JUPYTER_PATH", ""))
    monkeypatch.setenv(sandbox.ROOT_ENV, os.environ.get(sandbox.ROOT_ENV, ""))
    return monkeypatch


@needs_bwrap
def test_kernel_talks_over_ipc_and_reaches_no_network(tmp_path: Path, kernel_env) -> None:
    listener = Listener()
    try:
        outputs, dead, _, _ = _run_notebook([
            "from ipykernel.connect import get_connection_info\n"
            "print(get_connection_info(unpack=True)['transport'])",
            f"import socket\nsocket.create_connection(('127.0.0.1', {listener.port}), "
            "timeout=3).sendall(b'leak')",
        ], tmp_path)
        assert dead is None
        assert outputs[0].strip() == "ipc"
        assert "refused" in outputs[1] or "unreachable" in outputs[1], outputs[1]
        time.sleep(0.5)
        assert listener.got == []
        # The check can fail: from outside the sandbox the listener hears everything.
        socket.create_connection(("127.0.0.1", listener.port)).sendall(b"hello")
        time.sleep(0.5)
        assert listener.got == [b"hello"]
    finally:
        listener.close()


@needs_bwrap
def test_the_kernel_reads_the_rechecks_record_and_cannot_change_it(tmp_path: Path,
                                                                   kernel_env) -> None:
    """The trusted re-check's recorded outcomes reach the kernel read-only (to replay them,
    course/trust/replay.py); the grader's own environment is left as it was."""
    from autograder.grading.execute import PRECHECK_KEY

    outputs, dead, _, _ = _run_notebook([
        "import os\np = os.environ['COURSE_CHECK_REPLAY']\nprint(open(p).read())",
        "try:\n    open(p, 'a').write('x')\n    print('written')\n"
        "except OSError as exc:\n    print('refused', type(exc).__name__)",
    ], tmp_path, resources={PRECHECK_KEY: {"replay": '{"key": "k"}'}})
    assert dead is None
    assert outputs[0].strip() == '{"key": "k"}'
    assert outputs[1].startswith("refused"), outputs[1]
    assert sandbox.REPLAY_ENV not in os.environ


@needs_bwrap
def test_kernel_launcher_refuses_tcp(tmp_path: Path) -> None:
    conn = tmp_path / "kernel.json"
    conn.write_text(json.dumps({"transport": "tcp", "ip": "127.0.0.1"}))
    out = subprocess.run([sys.executable, "-m", "autograder.sandbox", "-f", str(conn)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert out.returncode == 2 and "ipc transport" in out.stderr


@needs_bwrap
def test_huge_allocation_is_a_memory_error(tmp_path: Path, kernel_env) -> None:
    outputs, dead, _, _ = _run_notebook(["bytearray(100 * 10**9)", "print('still here')"],
                                        tmp_path)
    assert "MemoryError" in outputs[0] and outputs[1].strip() == "still here" and dead is None


@needs_bwrap
@needs_cgroup("memory")
def test_memory_past_the_cgroup_limit_stops_the_kernel_with_the_reason(
        tmp_path: Path, kernel_env) -> None:
    kernel_env.setenv("COURSE_MEMORY_LIMIT", "512M")
    fill = ("import mmap\nm = mmap.mmap(-1, 2**30)\n"
            "for i in range(0, 2**30, 4096):\n    m[i] = 1\nprint('filled 1 GiB')")
    outputs, dead, _, _ = _run_notebook([fill, "print('after')"], tmp_path)
    assert dead and "more than 512 MiB of memory" in dead, (dead, outputs)
    assert "filled" not in outputs[0] and outputs[1] == ""


@needs_bwrap
@needs_cgroup("pids")
def test_fork_bomb_stops_the_kernel_with_the_reason(tmp_path: Path, kernel_env) -> None:
    kernel_env.setenv("COURSE_MAX_PROCESSES", "100")
    bomb = ("import os, time\nfor _ in range(1000):\n    if os.fork() == 0:\n"
            "        time.sleep(30)\n        os._exit(0)\nprint('all forked')")
    outputs, dead, notes, seconds = _run_notebook([bomb, "print('after')"], tmp_path)
    assert "all forked" not in outputs[0] and seconds < 60, (dead, outputs)
    # Contained either way: the box's watchdog stops the kernel and says why, or (where the
    # kernel refuses the fork before the watchdog looks, as on a 2-core CI machine) the cell
    # shows the refused fork; the grader's note names the limit whenever the cgroup reports it.
    if dead:
        assert "more than 100 processes" in dead, (dead, outputs)
    else:
        assert "Resource temporarily unavailable" in outputs[0], outputs
        assert outputs[1].strip() == "after", outputs


@needs_bwrap
def test_output_beyond_the_cap_is_dropped(tmp_path: Path, kernel_env) -> None:
    kernel_env.setenv("COURSE_OUTPUT_LIMIT", "20K")
    outputs, _, notes, _ = _run_notebook([
        "for i in range(2000):\n    print('x' * 1000)",
        "print('later output is dropped too')",
        "raise ValueError('but errors still count')",
    ], tmp_path)
    assert len(outputs[0]) < 25_000 and "output cut" in outputs[0]
    assert outputs[1] == "" and "but errors still count" in outputs[2]
    assert any("was dropped" in n for n in notes)


@needs_bwrap
def test_one_timeout_then_a_short_budget_for_the_rest(tmp_path: Path, kernel_env) -> None:
    """… and each cell the grading ran has its seconds, by its own clock: what the notebook
    was handed in with (a student's own timestamps, or anything) is not read."""
    from autograder.grading.execute import KERNEL_SECONDS_KEY

    kernel_env.setenv("COURSE_AFTER_TIMEOUT", "3")
    theirs = {"execution": {"iopub.status.busy": "2026-11-30T09:00:00Z",
                            "shell.execute_reply": "2026-11-30T09:00:50Z"}}
    odd = {"execution": {"iopub.status.busy": "2026-11-30T09:00:00",  # no time zone
                         "shell.execute_reply": "2026-11-30T09:00:09Z"}}
    recorded: dict = {}
    outputs, dead, notes, seconds = _run_notebook([
        "import time\ntime.sleep(100)",  # times out after the cell timeout (6 s)
        "print('quick')",
        "time.sleep(100)",  # gets what is left of the 3 s
        "print('never run')",
    ], tmp_path, timeout=6, resources=recorded, metadata=[{}, theirs, {}, odd])
    assert dead is None
    assert "CellTimeoutError" in outputs[0] and outputs[1].strip() == "quick"
    assert "CellTimeoutError" in outputs[2] and "not run" in outputs[3]
    assert any("timed out after 6 s" in n for n in notes), notes
    assert any("1 later cell(s) not run" in n for n in notes), notes
    assert seconds < 6 + 3 + 90  # kernel start and shutdown included (a busy machine)
    timed = recorded[KERNEL_SECONDS_KEY]
    assert set(timed) == {"cell 0", "cell 1", "cell 2"}, timed  # the cell not run: none
    assert 5.5 <= timed["cell 0"] < 6 + 30, timed  # ran to the limit
    assert timed["cell 1"] < 30, timed  # its own run, not the 50 s it was handed in with
    assert 0 < timed["cell 2"] < 3 + 30, timed  # the rest of the budget


@needs_bwrap
def test_a_cell_that_ignores_the_interrupt_stops_the_kernel(tmp_path: Path, kernel_env) -> None:
    stubborn = ("import time\nwhile True:\n    try:\n        time.sleep(100)\n"
                "    except KeyboardInterrupt:\n        pass")
    outputs, dead, _, seconds = _run_notebook([stubborn, "print('after')"], tmp_path,
                                              timeout=4)
    assert dead and "did not stop when interrupted" in dead
    assert outputs[1] == "" and seconds < 60


@needs_bwrap
def test_a_timeout_with_the_memory_half_full_names_memory(tmp_path: Path, kernel_env) -> None:
    """A cell that runs out of time filling memory (seen in a fresh-clone run: a hoarding cell
    still short of the limit after 30 s on a loaded machine) says how much it used, stuck or
    interrupted."""
    kernel_env.setenv("COURSE_AFTER_TIMEOUT", "3")
    kernel_env.setattr(limits.Box, "memory_in_use", lambda self: 3880 * 2**20)
    stubborn = ("import time\nwhile True:\n    try:\n        time.sleep(100)\n"
                "    except KeyboardInterrupt:\n        pass")
    _, dead, _, _ = _run_notebook([stubborn], tmp_path, timeout=4)
    memory = limits.human(limits.Limits.from_env().memory)
    assert dead and f"with 3.8 GiB of its {memory} of memory in use" in dead, dead
    assert "did not stop when interrupted" in dead
    _, dead, notes, _ = _run_notebook(["import time\ntime.sleep(100)"], tmp_path, timeout=4)
    assert dead is None
    assert any(f"timed out after 4 s with 3.8 GiB of its {memory} of memory in use" in n
               for n in notes), notes


# ---------------------------------------------------------------------------------------------
# The trusted re-check.


def _job(grade_id: str, code: str) -> dict:
    return {"grade_id": grade_id, "code": code, "bundle": {"source": "\n", "names": []},
            "setup_error": None}


@needs_bwrap
def test_trusted_checks_share_a_short_budget_after_a_timeout(tmp_path: Path, planted) -> None:
    from autograder.grading import trusted_process

    secret, places = planted
    notes: list[str] = []
    jobs = [_job("quick", "print('ok')"),
            _job("hangs", "while True:\n    pass"),
            _job("spy", SCAN.format(paths=[str(p) for p in places], reversed_secret=secret[::-1])
                 + "import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=2)"),
            _job("loud", "print('y' * 10**7)"),
            _job("hangs_too", "while True:\n    pass"),
            _job("late", "print('late')")]
    # Both hangs spin a CPU for as long as they are let: 10 s, then what is left of 7.
    results = trusted_process.run_jobs(jobs, course_root=tmp_path / "course", timeout_s=10,
                               notes=notes, limits=limits.Limits(after_timeout=7))
    by = {r["grade_id"]: r for r in results}
    assert by["quick"]["status"] == "pass" and by["hangs"]["ename"] == "Timeout", results
    assert "HITS []" in by["spy"]["stdout"] and by["spy"]["status"] == "fail", by["spy"]
    assert "refused" in by["spy"]["evalue"] or "unreachable" in by["spy"]["evalue"]
    assert by["loud"]["status"] == "pass" and len(by["loud"]["stdout"]) < 5000
    assert "characters of output cut" in by["loud"]["stdout"]
    assert by["hangs_too"]["ename"] == "Timeout" and by["late"]["ename"] == "NotRun"
    assert any("timed out after 10 s" in n for n in notes), notes
    # The second hang was cut by the budget (7 s of checking after the first timeout, shared
    # with spy and loud), not given a full timeout of its own. (Clocks run once the child is
    # ready: a busy machine's slow start costs no student time, so the wall time is not
    # asserted.)
    assert by["hangs"]["seconds"] >= 10 and by["hangs_too"]["seconds"] < 9, results
