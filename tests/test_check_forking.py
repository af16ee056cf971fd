"""Tests for course.trust.forking: GPU check processes forked from a pre-imported server.

The server forks, so each scenario runs in a fresh Python of its own (a pytest worker runs
threads, and a fork server refuses to fork beside a thread). Here, without a GPU, the jobs
run on Numba's simulator, which the server imported: what is tested is the way a job travels
(its folder, environment, result, output and exit) and what happens when it hangs, dies or is
refused — the GPU run of the same path is ``session.sh profile`` and ``class``
(docs/grading-cost.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from course.runtime import backend
from course.trust import forking
from course.trust import runner as isolated

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(backend.detect().kind != "simulator",
                                reason="the forked jobs here run on the CUDA simulator")

PRELUDE = """
import json, os, sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
import kernels_for_tests as kft
from course.trust import forking
from course.trust import runner
from course.trust.kernel_source import bundle_from_objects

bundle = bundle_from_objects({{"make_gemm_tiled": kft.make_gemm_tiled}})
JOB = {{"task": "inspect", "bundles": {{"bundle": bundle.to_json()}}, "kind": "tiled",
       "tile": 4, "shape": [7, 5, 11], "seed": 5, "env": {{}}}}
spins = bundle_from_objects({{"make_gemm_tiled": kft.make_gemm_tiled_spins_at_large_k}})
HUNG = dict(JOB, bundles={{"bundle": spins.to_json()}}, shape=[1, 1, 1000])


def forked(job, timeout_s=120.0, before_wait=None):
    '''What run_job does with a GPU job, but in the simulator's environment (the server
    imported Numba's simulator here): a folder, the job file, a forked child, the wait.'''
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        job_path, result_path = Path(tmp, "job.json"), Path(tmp, "result.json")
        job_path.write_text(json.dumps(job))
        child = forking.spawn(job_path, result_path, tmp, dict(os.environ))
        if child is None:
            return {{"cold": True}}
        try:
            if before_wait:
                before_wait(child)
            runner._wait(child, result_path, timeout_s, None)
            return dict(json.loads(result_path.read_text()), pid=child.pid)
        except runner.IsolatedRunError as exc:
            return {{"raised": str(exc), "pid": child.pid}}
        finally:
            child.close()


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{{pid}}/stat").exists() and \\
        Path(f"/proc/{{pid}}/stat").read_text().split(")")[1].split()[0] != "Z"
"""


def _scenario(body: str, **env: str) -> dict:
    """Run PRELUDE + ``body`` in a fresh Python; ``body`` sets ``seen`` (printed as JSON)."""
    code = PRELUDE.format(tests=str(ROOT / "tests")) + textwrap.dedent(body) + \
        "\nprint('SEEN ' + json.dumps(seen))\n"
    run_env = dict(os.environ, PYTHONPATH=str(ROOT), COURSE_CHECK_FORK="1")
    run_env.update(env)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=run_env, cwd=str(ROOT), timeout=300)
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("SEEN ")]
    assert done.returncode == 0 and lines, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads(lines[-1][5:])


def test_jobs_fork_from_one_server_and_match_a_cold_process():
    seen = _scenario("""
        cold = runner.run_job(JOB, simulator=True, timeout_s=120)
        started = forking.start_server()
        server = forking._SERVER[0].pid
        first, second = forked(JOB), forked(dict(JOB, seed=6))
        seen = {"started": started, "cold": cold, "first": first, "second": second,
                "same_server": forking._SERVER[0].pid == server, "me": os.getpid(),
                "server_alive": alive(server)}
    """)
    assert seen["started"] and seen["same_server"] and seen["server_alive"]
    first, second, cold = seen["first"], seen["second"], seen["cold"]
    assert first["pid"] != second["pid"] != seen["me"], "a job ran in the asking process"
    assert first["reads_a"] == cold["reads_a"] > 0 and first["problem"] is None
    assert {k: v for k, v in first.items() if k != "pid"} == cold
    assert second["reads_a"] == cold["reads_a"]


def test_a_hung_job_is_killed_and_the_next_job_gets_a_new_child():
    seen = _scenario("""
        forking.start_server()
        hung = forked(HUNG, timeout_s=2)
        after = forked(JOB)
        seen = {"hung": hung, "hung_alive": alive(hung["pid"]), "after": after,
                "server": bool(forking._SERVER)}
    """)
    assert "did not finish within 2 s" in seen["hung"]["raised"]
    assert not seen["hung_alive"], "the hung job's process was left running"
    assert seen["server"] and seen["after"]["reads_a"] > 0
    assert seen["after"]["pid"] != seen["hung"]["pid"]


def test_a_child_that_dies_says_so_with_its_exit():
    seen = _scenario("""
        import signal
        forking.start_server()

        def kill_it(child):
            time.sleep(1.0)
            os.kill(child.pid, signal.SIGKILL)

        died = forked(HUNG, timeout_s=60, before_wait=kill_it)
        seen = {"died": died, "after": forked(JOB)}
    """)
    assert "the check process died (exit code -9)" in seen["died"]["raised"]
    assert seen["after"]["reads_a"] > 0


def test_run_job_runs_a_job_again_cold_when_its_forked_process_dies():
    """A forked process that crashes may owe it to the fork: its job runs again in a cold
    process (here the cold one times out on the spinning kernel, which says it ran), and the
    server is stopped."""
    seen = _scenario("""
        import signal, threading
        forking.start_server()
        real_spawn, forked_pids = forking.spawn, []

        def spawn_then_kill(*args):
            child = real_spawn(*args)
            forked_pids.append(child.pid)
            threading.Timer(1.0, os.kill, (child.pid, signal.SIGKILL)).start()
            return child

        forking.spawn = spawn_then_kill
        try:
            runner.run_job(HUNG, simulator=False, timeout_s=6)
            outcome = "returned"
        except runner.IsolatedRunError as exc:
            outcome = str(exc)
        seen = {"outcome": outcome, "forked": len(forked_pids), "server": bool(forking._SERVER)}
    """)
    assert seen["forked"] == 1 and not seen["server"]
    assert "did not finish within 6 s" in seen["outcome"], seen


def test_a_job_that_prints_and_fails_reports_like_a_cold_one():
    # an unknown task: the child writes its error as the result, exactly as a cold one does
    seen = _scenario("""
        forking.start_server()
        bad = dict(JOB, task="no_such_task")
        seen = {"forked": forked(bad), "cold": runner.run_job(bad, simulator=True)}
    """)
    assert seen["forked"]["error"] == seen["cold"]["error"]
    assert "no task named 'no_such_task'" in seen["forked"]["error"]


def test_a_server_that_cannot_prepare_refuses_and_jobs_start_cold():
    seen = _scenario("""
        forking.PRELOAD = ("course_no_such_module",)
        forking.start_server()
        seen = {"first": forked(JOB), "server": bool(forking._SERVER),
                "second": forked(JOB)}
    """)
    assert seen["first"] == {"cold": True} and seen["second"] == {"cold": True}
    assert not seen["server"], "a refusing server was kept"


def test_no_server_where_the_cuda_library_is_loaded_or_forking_is_off():
    seen = _scenario("""
        forking.cuda_library_loaded = lambda maps=None: True
        seen = {"loaded": forking.start_server(), "refusal": forking.refusal()}
    """)
    assert seen == {"loaded": False,
                    "refusal": "the CUDA driver library is loaded in the fork server"}
    for value in ("0", ""):  # off, and off by default (not verified on a GPU yet)
        off = _scenario("""
            seen = {"started": forking.start_server(), "job": forked(JOB)}
        """, COURSE_CHECK_FORK=value)
        assert off == {"started": False, "job": {"cold": True}}


def test_the_server_ends_with_the_process_that_started_it():
    seen = _scenario("""
        import subprocess
        child = subprocess.run([sys.executable, "-c",
            "import os, time; from course.trust import forking; forking.start_server(); "
            "print(forking._SERVER[0].pid, flush=True); os._exit(0)"],
            capture_output=True, text=True, env=os.environ)
        server = int(child.stdout.split()[0])
        for _ in range(100):
            if not alive(server):
                break
            time.sleep(0.05)
        seen = {"alive": alive(server)}
    """)
    assert seen == {"alive": False}, "a fork server outlived its re-check process"


def test_the_trusted_recheck_chooses_the_simulator_where_the_driver_sees_no_gpu():
    """The re-check counts GPUs in a child (its own process must not load the driver before
    it forks its server) and makes ``import course``'s choice: no GPU here, the simulator."""
    seen = _scenario("""
        from autograder.grading import trusted_child
        os.environ.pop("NUMBA_ENABLE_CUDASIM")
        counted = trusted_child._gpu_count_in_a_child()
        on_gpu = trusted_child._choose_target_without_the_driver()
        seen = {"counted": counted, "on_gpu": on_gpu,
                "simulator": os.environ.get("NUMBA_ENABLE_CUDASIM"),
                "loaded_here": forking.cuda_library_loaded()}
    """)
    assert seen == {"counted": 0, "on_gpu": False, "simulator": "1", "loaded_here": False}
    # where the driver sees GPUs (its count stood in for), the choice is the GPU, and the
    # course's import is told not to count again
    seen = _scenario("""
        from autograder.grading import trusted_child
        from course.runtime import backend
        os.environ.pop("NUMBA_ENABLE_CUDASIM")
        backend.driver_gpu_count = lambda: (3, "")
        seen = {"counted": trusted_child._gpu_count_in_a_child(),
                "on_gpu": trusted_child._choose_target_without_the_driver(),
                "simulator": os.environ.get("NUMBA_ENABLE_CUDASIM"),
                "no_count": os.environ.get("COURSE_NO_SIMULATOR")}
    """)
    assert seen == {"counted": 3, "on_gpu": True, "simulator": None, "no_count": "1"}


def test_cuda_library_loaded_reads_the_maps():
    assert forking.cuda_library_loaded("7f00-7f01 r-xp 0 08:01 1 /usr/lib/libcuda.so.580.1\n")
    assert not forking.cuda_library_loaded("7f00-7f01 r-xp 0 08:01 1 /usr/lib/libc.so.6\n")


def test_run_job_starts_a_gpu_job_cold_without_a_server(monkeypatch, tmp_path):
    """Without a server (a student's notebook, a profiler's wrapper) a GPU job starts cold."""
    asked, started = [], []

    def spawn(*args):
        asked.append(args)
        return None

    class Cold:
        def __init__(self, args, folder, simulator, wrapper=(), **popen):
            started.append((args, simulator))
            Path(args[1]).write_text(json.dumps({"cold": True}))

        alive = False
        proc = subprocess.CompletedProcess([], 0)  # a wrapped job waits for its end
        proc.wait = lambda timeout=None: 0

        def exit_code(self):
            return 0

        def close(self):
            pass

    monkeypatch.setattr(forking, "spawn", spawn)
    monkeypatch.setattr(isolated, "_Child", Cold)
    assert isolated.run_job({"task": "speedup"}, simulator=False) == {"cold": True}
    assert len(asked) == 1 and started[0][1] is False
    assert isolated.run_job({"task": "speedup"}, simulator=False, wrapper=["nsys"]) == \
        {"cold": True}
    assert len(asked) == 1, "a profiler's wrapped job went to the fork server"
