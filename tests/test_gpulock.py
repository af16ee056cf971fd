"""The GPU lock: shared among checks, exclusive for timings, freed by a dead holder, hidden
from the notebook kernel but reachable by trusted children in their sandbox.

Each test runs real processes against a real lock directory (no GPU needed: the lock is plain
``flock``); waits are short so the whole file takes a few seconds.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from autograder.sandbox import bwrap as sandbox
from autograder.sandbox import gpulock as placement
from course.runtime import gpulock

ROOT = Path(__file__).resolve().parents[1]

HOLDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from course.runtime.gpulock import GpuLock
    lock = GpuLock(Path(sys.argv[1]))
    lock.acquire(sys.argv[2])
    print("held", time.time(), flush=True)
    if sys.argv[3] == "until-told":
        sys.stdin.readline()
    else:
        time.sleep(float(sys.argv[3]))
    print("released", time.time(), flush=True)
    lock.release()
    time.sleep(float(sys.argv[4]) if len(sys.argv) > 4 else 0)
""")


def _holder(lock_dir: Path, mode: str, hold_s: float | str, linger_s: float = 0.0,
            argv_prefix: tuple[str, ...] = ()) -> subprocess.Popen:
    """A process that takes the lock, says so, holds it ``hold_s`` seconds (or until a line
    arrives on its stdin), then lets go."""
    proc = subprocess.Popen([*argv_prefix, sys.executable, "-c", HOLDER, str(lock_dir), mode,
                             str(hold_s), str(linger_s)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    line = proc.stdout.readline()
    assert line.startswith("held"), line + proc.stderr.read()
    return proc


def _released_at(proc: subprocess.Popen) -> float:
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    return float(next(ln for ln in out.splitlines() if ln.startswith("released")).split()[1])


def test_an_exclusive_holder_excludes_another_process(tmp_path: Path) -> None:
    other = _holder(tmp_path, "exclusive", 1.0)
    mine = gpulock.GpuLock(tmp_path, max_wait_s=0.3)
    with pytest.raises(gpulock.GpuLockTimeout, match="busy"):
        mine.acquire("shared")  # the lock really is held: a short wait gives up
    mine.max_wait_s = 30
    mine.acquire("exclusive")
    got = time.time()
    mine.release()
    assert got >= _released_at(other), "got the GPU while another process held it alone"


def test_shared_holders_share_and_exclude_a_timing(tmp_path: Path) -> None:
    first = _holder(tmp_path, "shared", 1.0)
    started = time.monotonic()
    second = gpulock.GpuLock(tmp_path, max_wait_s=5)
    second.acquire("shared")  # shared with a shared holder: at once
    assert time.monotonic() - started < 0.5
    second.release()
    timing = gpulock.GpuLock(tmp_path, max_wait_s=30)
    timing.acquire("exclusive")
    got = time.time()
    timing.release()
    assert got >= _released_at(first)


def test_a_killed_holder_lets_go_at_once(tmp_path: Path) -> None:
    holder = _holder(tmp_path, "exclusive", 600)
    waiter = gpulock.GpuLock(tmp_path, max_wait_s=0.3)
    with pytest.raises(gpulock.GpuLockTimeout):
        waiter.acquire("exclusive")
    holder.send_signal(signal.SIGKILL)
    holder.wait(timeout=10)
    waiter.max_wait_s = 5
    started = time.monotonic()
    waiter.acquire("exclusive")
    assert time.monotonic() - started < 1.0
    waiter.release()


def _wait_until_turnstile_taken(lock_dir: Path) -> None:
    fd = os.open(lock_dir / "turnstile.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
                time.sleep(0.02)
            except BlockingIOError:
                return
        raise AssertionError("the writer never queued at the turnstile")
    finally:
        os.close(fd)


def test_a_waiting_timing_goes_before_later_checks(tmp_path: Path) -> None:
    """Writer preference: checks arriving while a timing waits queue behind it."""
    reader = _holder(tmp_path, "shared", "until-told")
    writer = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path), "exclusive", "0.5"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)))
    _wait_until_turnstile_taken(tmp_path)  # the writer now waits there for the reader
    late_got: list[float] = []

    def late_check() -> None:
        late = gpulock.GpuLock(tmp_path, max_wait_s=30)
        late.acquire("shared")
        late_got.append(time.time())
        late.release()

    thread = threading.Thread(target=late_check)
    thread.start()
    time.sleep(0.5)  # a stream of checks would keep the first reader's hold alive…
    reader.stdin.write("go\n")
    reader.stdin.flush()
    _released_at(reader)
    thread.join(timeout=30)
    out, err = writer.communicate(timeout=30)
    assert writer.returncode == 0, err
    writer_held = float(out.split()[1])
    assert late_got and late_got[0] >= writer_held, "a later check overtook the waiting timing"


def test_exclusive_inside_shared_comes_back_shared_and_heartbeats(tmp_path: Path,
                                                                 monkeypatch) -> None:
    beat = tmp_path / "beat"
    monkeypatch.setenv(gpulock.LOCK_ENV, str(tmp_path))
    monkeypatch.setenv(gpulock.HEARTBEAT_ENV, str(beat))
    other = _holder(tmp_path, "shared", 1.5)
    seen = []
    watcher = threading.Thread(target=lambda: [seen.append(gpulock.heartbeat_fresh(beat))
                                               or time.sleep(0.1) for _ in range(12)])
    gpulock.ensure_shared()
    assert gpulock.current().mode == "shared"
    watcher.start()
    with gpulock.exclusive():  # waits for the other reader, beating the heartbeat
        assert gpulock.current().mode == "exclusive"
        assert not beat.exists(), "the heartbeat outlived the wait"
        with gpulock.exclusive():  # nested: no change
            assert gpulock.current().mode == "exclusive"
        assert gpulock.current().mode == "exclusive"
    assert gpulock.current().mode == "shared"
    with gpulock.released():
        assert gpulock.current().mode is None
    assert gpulock.current().mode == "shared"
    gpulock.release()
    _released_at(other)
    watcher.join()
    assert any(seen), "no heartbeat while queueing"


def test_unconfigured_lock_does_nothing(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.delenv(gpulock.LOCK_ENV, raising=False)
    assert gpulock.current() is None
    with gpulock.exclusive(), gpulock.released():
        gpulock.ensure_shared()
    # A notebook kernel that inherited the variable cannot see the folder: no lock there…
    monkeypatch.setenv(gpulock.LOCK_ENV, str(tmp_path / "hidden"))
    monkeypatch.delenv("COURSE_TRUSTED_RUN", raising=False)
    assert gpulock.current() is None
    # …but in a trusted child the grader made it, so a missing folder is an error.
    monkeypatch.setenv("COURSE_TRUSTED_RUN", "1")
    with pytest.raises(FileNotFoundError, match="grader creates it"):
        gpulock.current()


def test_lock_placement_refuses_a_folder_student_code_can_see(tmp_path: Path,
                                                              monkeypatch) -> None:
    course = tmp_path / "course"
    course.mkdir()
    monkeypatch.setenv(gpulock.LOCK_ENV, str(Path.home() / "week4-gpu-lock"))
    with pytest.raises(placement.GpuLockPlacementError, match="visible to student code"):
        placement.lock_dir_for_children(course)
    monkeypatch.setenv(gpulock.LOCK_ENV, str(course / ".gpu-lock"))
    assert placement.lock_dir_for_children(course) == course / ".gpu-lock" / "all"
    monkeypatch.setenv("PYTHONPATH", str(course))
    with pytest.raises(placement.GpuLockPlacementError, match="PYTHONPATH"):
        placement.lock_dir_for_children(course)
    monkeypatch.delenv(gpulock.LOCK_ENV)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert placement.default_lock_dir().name == "gpus-2_3"


@pytest.mark.skipif(sandbox.bwrap_path() is None,
                    reason="bubblewrap is not installed (make system-deps)")
def test_trusted_children_reach_the_lock_and_the_notebook_kernel_does_not(
        tmp_path: Path, monkeypatch) -> None:
    course = tmp_path / "course"
    work = course / "work"
    work.mkdir(parents=True)
    monkeypatch.setenv(gpulock.LOCK_ENV, str(tmp_path / "lock"))
    lock_dir = placement.lock_dir_for_children(course)
    # The notebook kernel's sandbox (no extra binds): the folder does not exist for it.
    kernel = sandbox.wrap([sys.executable, "-c",
                           f"import os; print(os.path.exists({str(lock_dir)!r}))"],
                          course_root=course, workdir=work)
    out = subprocess.run(kernel.argv, env=kernel.env, capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
    # A trusted child's sandbox (lock bound read-write): its hold excludes this process.
    trusted = sandbox.wrap(["env", f"PYTHONPATH={ROOT}"], course_root=course, workdir=work,
                           extra_rw=(lock_dir,))
    child = _holder(lock_dir, "exclusive", 1.0, argv_prefix=tuple(trusted.argv))
    mine = gpulock.GpuLock(lock_dir, max_wait_s=30)
    mine.acquire("shared")
    got = time.time()
    mine.release()
    assert got >= _released_at(child), "the sandboxed holder did not exclude the host"


# For the clock test a light child speaks the trusted child's protocol: say it is ready, run
# each job's code, append one JSON line per job.
LIGHT_CHILD = textwrap.dedent("""
    import contextlib, io, json, os, pathlib, sys
    for line in sys.stdin:  # the serving protocol of grading.trusted_child, without Numba
        folder = pathlib.Path(line.strip())
        request = json.loads((folder / "request.json").read_text())
        os.environ.update(request["env"])
        (folder / "ready").touch()
        with open(folder / "results.jsonl", "a") as sink:
            for job in request["jobs"]:
                buf = io.StringIO()
                with contextlib.redirect_stdout(buf):
                    exec(job["code"], {})
                sink.write(json.dumps({"grade_id": job["grade_id"], "status": "pass",
                                       "stdout": buf.getvalue(), "ename": "",
                                       "evalue": ""}) + "\\n")
                sink.flush()
""")


def test_a_check_queueing_for_the_gpu_is_not_timed_out(tmp_path: Path, monkeypatch) -> None:
    """Time spent waiting for another grader's timing is not charged to the student; a
    cell that really hangs still times out."""
    from autograder.grading import trusted_process

    course = tmp_path / "course"
    course.mkdir()
    monkeypatch.setenv(gpulock.LOCK_ENV, str(tmp_path / "lock"))
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setattr(trusted_process.sandbox, "wrap",
                        lambda argv, **kw: trusted_process.sandbox.SandboxCommand(
                            [sys.executable, "-c", LIGHT_CHILD], dict(kw["env"])))
    lock_dir = placement.lock_dir_for_children(course)
    other = gpulock.GpuLock(lock_dir)
    other.acquire("exclusive")  # another student's timing, until 4 s after the check queues
    ready = lock_dir / "queued"

    def release_later() -> None:
        while not ready.exists():
            time.sleep(0.05)
        time.sleep(4.0)
        other.release()

    threading.Thread(target=release_later, daemon=True).start()
    queued = {"grade_id": "queued",
              "code": f"open({str(ready)!r}, 'w').close()\n"
                      "from course.runtime import gpulock\nwith gpulock.exclusive():\n"
                      "    print('timed alone')"}
    hangs = {"grade_id": "hangs", "code": "import time\ntime.sleep(6)"}
    results = trusted_process.run_jobs([queued, hangs], course_root=course, timeout_s=2.5)
    assert results[0]["status"] == "pass", results[0]
    assert "timed alone" in results[0]["stdout"]
    assert results[1]["status"] == "fail" and results[1]["ename"] == "Timeout", results[1]


def test_a_child_queueing_for_the_gpu_is_not_timed_out(tmp_path: Path, monkeypatch) -> None:
    """course.trust.runner.run_job: while the heartbeat is fresh its clock stops."""
    from course.trust import runner as isolated

    job = {"task": "speedup", "bundles": {"student": {"source": "x = 1\n", "names": ["x"]}},
           "size": 64, "tile": 4, "repeats": 1, "seed": 0}
    beat = tmp_path / "beat"
    monkeypatch.setenv(gpulock.HEARTBEAT_ENV, str(beat))
    isolated.stop_simulator()  # a cold start (imports) takes far longer than 0.3 s
    with pytest.raises(isolated.IsolatedRunError, match="did not finish within"):
        isolated.run_job(job, simulator=True, timeout_s=0.3)  # no heartbeat: too short
    stop = threading.Event()

    def beat_while_running() -> None:  # what a child queueing for the lock does
        while not stop.is_set():
            beat.touch()
            time.sleep(0.2)

    threading.Thread(target=beat_while_running, daemon=True).start()
    try:
        out = isolated.run_job(job, simulator=True, timeout_s=0.3)
    finally:
        stop.set()
    assert "make_gemm_tiled" in out["error"]  # it ran to the end and reported


def test_kernel_launches_take_the_lock_shared_for_the_launch_only(tmp_path: Path) -> None:
    """The launch hook finds Numba's launch path in the installed numba-cuda (checked in a
    process without the simulator, as on a GPU machine): a launch holds the lock shared while
    it runs and lets go after it (a waiting timing waits for launches, not for whole cells);
    a process that holds the lock already launches under its hold and keeps it."""
    probe = textwrap.dedent("""
        from course.runtime import gpulock
        from numba.cuda.dispatcher import _Kernel
        seen = []
        _Kernel.launch = lambda self, *a, **k: seen.append(gpulock.current().mode)
        gpulock._synchronize = lambda: seen.append("synchronized")
        assert gpulock.hold_shared_on_launch(), "numba-cuda's _Kernel.launch not found"
        assert gpulock.current().mode is None
        _Kernel.launch(object(), [], 1, 1)
        seen.append(gpulock.current().mode)
        with gpulock.exclusive():
            _Kernel.launch(object(), [], 1, 1)
            seen.append(gpulock.current().mode)
        print(" ".join(map(str, seen)))
    """)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(COURSE_NO_SIMULATOR="1", PYTHONPATH=str(ROOT),
               **{gpulock.LOCK_ENV: str(tmp_path)})
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["shared", "synchronized", "None", "exclusive", "exclusive"]


def test_a_launch_that_fails_lets_go_of_the_lock(tmp_path: Path) -> None:
    """A launch that raises (a bad argument, a dead context) never leaves the lock held."""
    probe = textwrap.dedent("""
        from course.runtime import gpulock
        from numba.cuda.dispatcher import _Kernel
        def broken(self, *a, **k):
            raise RuntimeError("launch failed")
        _Kernel.launch = broken
        assert gpulock.hold_shared_on_launch()
        try:
            _Kernel.launch(object(), [], 1, 1)
        except RuntimeError:
            pass
        print(gpulock.current().mode)
    """)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(COURSE_NO_SIMULATOR="1", PYTHONPATH=str(ROOT),
               **{gpulock.LOCK_ENV: str(tmp_path)})
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "None"


@pytest.mark.gpu
def test_a_real_kernel_launch_takes_the_lock_and_a_timing_excludes_it(tmp_path: Path) -> None:
    """On a GPU: a launch in a hooked process holds the lock shared while it runs and lets go
    after it; an exclusive holder elsewhere makes that launch wait (it never runs while another
    process times)."""
    probe = textwrap.dedent("""
        import time
        import numpy as np
        import course
        from course.runtime import gpulock
        from numba import cuda
        from numba.cuda.dispatcher import _Kernel
        real, during = _Kernel.launch, []
        def watched(self, *a, **k):  # the mode while the real launch runs, under the hook
            during.append(gpulock.current().mode)
            return real(self, *a, **k)
        _Kernel.launch = watched
        assert gpulock.hold_shared_on_launch()

        @cuda.jit
        def add_one(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] += 1

        x = cuda.to_device(np.zeros(64, dtype=np.float32))
        add_one[1, 64](x)
        assert x.copy_to_host()[0] == 1
        print(during[0], gpulock.current().mode, time.time(), flush=True)
    """)
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]  # keep carried wheels
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths), **{gpulock.LOCK_ENV: str(tmp_path)})
    timing = _holder(tmp_path, "exclusive", 2.0)
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    mode, after, launched = out.stdout.split()
    assert (mode, after) == ("shared", "None")
    assert float(launched) >= _released_at(timing), "a kernel ran during another's timing"


def test_a_cuda_c_launch_holds_the_lock_shared_only_while_it_runs(tmp_path: Path,
                                                                   monkeypatch) -> None:
    """course.gemm.cudac.gpu.launch (the CUDA C track's correctness runs) goes through
    shared_launch: shared for the launch, nothing after; under a timing's exclusive hold the
    launch runs under that hold and leaves it."""
    from course.gemm.cudac import gpu

    monkeypatch.setenv(gpulock.LOCK_ENV, str(tmp_path))
    seen: list[str | None] = []

    class FakeCupy:
        class cuda:  # noqa: N801 - CuPy's spelling
            class Device:
                def synchronize(self) -> None:
                    seen.append("synchronized")

    monkeypatch.setattr(gpu, "cupy_module", lambda: FakeCupy)
    kernel = lambda grid, block, args: seen.append(gpulock.current().mode)  # noqa: E731
    gpu.launch(kernel, (1, 1), (1, 1), ())
    seen.append(gpulock.current().mode)
    with gpulock.exclusive():
        gpu.launch(kernel, (1, 1), (1, 1), ())
        seen.append(gpulock.current().mode)
    gpulock.release()
    assert seen == ["shared", "synchronized", None, "exclusive", "synchronized", "exclusive"]


def test_a_launch_that_outlives_the_limit_is_ended_with_a_reason(tmp_path, monkeypatch):
    """The launch limit (``COURSE_GPU_LAUNCH_LIMIT``): a launch holding the lock shared longer
    is handed to the hung-launch handler, which ends the process in a grader (here it only
    records); a launch within the limit is left alone."""
    monkeypatch.setenv(gpulock.LOCK_ENV, str(tmp_path))
    monkeypatch.setenv(gpulock.LAUNCH_LIMIT_ENV, "0.3")
    told: list[str] = []
    gpulock.on_hung_launch(told.append)
    try:
        with gpulock.shared_launch() as took:
            assert took
        time.sleep(0.5)
        assert told == []
        with gpulock.shared_launch():
            time.sleep(0.8)
        assert len(told) == 1 and "did not finish within 0.3 s" in told[0]
    finally:
        gpulock.on_hung_launch(None)


@pytest.mark.gpu
def test_a_real_kernel_that_never_ends_frees_the_gpu_within_the_launch_limit(
        tmp_path: Path) -> None:
    """On a GPU: a check's kernel that spins forever, launched under the hook, holds the lock
    shared until the launch limit ends its process (exit code 70, the reason on stderr); a
    timing waiting for the GPU alone gets it within that limit, not after the cell's timeout."""
    probe = textwrap.dedent("""
        import numpy as np
        import course
        from course.runtime import gpulock
        from numba import cuda, float32
        assert gpulock.hold_shared_on_launch()

        @cuda.jit
        def spins(x):
            while x[0] == 0.0:  # an atomic: the compiler keeps the loop
                cuda.atomic.add(x, 1, float32(0.0))

        spins[1, 1](cuda.to_device(np.ones(2, dtype=np.float32)))  # compiled; returns at once
        x = cuda.to_device(np.zeros(2, dtype=np.float32))
        print("launching", flush=True)
        spins[1, 1](x)
        print("the launch returned", flush=True)
    """)
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]  # keep carried wheels
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(paths),
               **{gpulock.LOCK_ENV: str(tmp_path), gpulock.LAUNCH_LIMIT_ENV: "3"})
    hung = subprocess.Popen([sys.executable, "-c", probe], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    assert hung.stdout.readline().strip() == "launching"
    time.sleep(0.5)  # the launch has taken the lock
    timing = gpulock.GpuLock(tmp_path)
    asked = time.monotonic()
    timing.acquire("exclusive")
    waited = time.monotonic() - asked
    timing.release()
    _out, err = hung.communicate(timeout=60)
    assert hung.returncode == 70 and "did not finish within 3 s" in err, err
    assert 1.0 <= waited <= 3 + 2.0, f"the timing waited {waited:.1f} s for a hung launch"


def test_a_launch_limit_that_is_not_a_positive_number_means_the_default(monkeypatch):
    for bad in ("ten", "-1", "0", "nan?"):
        monkeypatch.setenv(gpulock.LAUNCH_LIMIT_ENV, bad)
        assert gpulock.launch_limit() == gpulock.LAUNCH_LIMIT_S
    monkeypatch.setenv(gpulock.LAUNCH_LIMIT_ENV, "2.5")
    assert gpulock.launch_limit() == 2.5
