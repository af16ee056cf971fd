"""`make bench-grading` (scripts/gpu/bench_grading.py) and the cost helpers the grading
benchmarks share (scripts/gpu/grading_cost.py): plain nbgrader's four-line configuration, the
alternating order, the ratio and its verdict from stand-in runs, an orphaned grandchild's CPU
counted, the history file, and the whole script run on stand-in grading commands (the real
grading takes minutes: `make bench-grading` is measured in docs/grading-cost.md)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from traitlets.config import Config

from autograder.runner.names import ASSIGNMENT, COURSE_ID

ROOT = Path(__file__).resolve().parents[1]
GPU_SCRIPTS = ROOT / "scripts" / "gpu"
sys.path.insert(0, str(GPU_SCRIPTS))  # as when they run: `from common import …` finds theirs


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, GPU_SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


cost = _load("grading_cost")
bench = _load("bench_grading")


def test_plain_nbgrader_gets_four_lines_and_nothing_of_the_course() -> None:
    text = bench.plain_config(600)
    assert len(text.strip().splitlines()) == 4
    assert "autograder" not in text.replace("bench_grading", "") and "course." not in text
    c = Config()
    exec(text, {"get_config": lambda: c})  # noqa: S102 - our own four lines
    assert c.CourseDirectory.course_id == COURSE_ID
    assert c.Execute.timeout == 600 and c.Execute.interrupt_on_timeout is True
    assert "Autograde" not in c and "SurvivingExecute" not in c  # no preprocessor, no sandbox


def test_the_sides_alternate() -> None:
    assert bench.order(1) == ["course", "plain"]
    assert bench.order(3) == ["course", "plain"] * 3
    with pytest.raises(ValueError, match="at least 1"):
        bench.order(0)
    course = bench.course_commands(Path("/c"), "ada_correct")
    plain = bench.plain_commands(Path("/c"), "ada_correct")
    assert course[0][1:4] == ["-m", "autograder", "grade"] and "--root" in course[0]
    assert [cmd[3] for cmd in plain] == ["autograde", "generate_feedback"]
    assert all(ASSIGNMENT in cmd and "ada_correct" in cmd for cmd in plain)


def _result(side: str, i: int, cpu: float, ok: bool = True):
    return bench.Result(side, i, cpu, cpu * 1.1, ok, "" if ok else "exited 1")


def test_the_ratio_is_of_medians_and_failed_runs_are_left_out() -> None:
    results = [_result("course", 1, 40.0), _result("plain", 1, 50.0),
               _result("course", 2, 44.0), _result("plain", 2, 60.0),
               _result("course", 3, 400.0, ok=False)]
    assert bench.median(results, "course") == 42.0
    assert bench.ratio(results) == pytest.approx(42.0 / 55.0)
    lines = bench.report(results, "none (simulator)")
    assert lines[-1] == ("course ÷ plain CPU = 0.76×: within issue 39's goal of at most 1.0× "
                         "(stated for a 2-core machine without a GPU)")
    assert sum(1 for line in lines if line.startswith("| ") and "side" not in line) == 5
    assert any("FAILED: exited 1" in line for line in lines)
    assert "NOT within" in bench.verdict(1.3) and "1.30×" in bench.verdict(1.3)
    assert "within" in bench.verdict(1.0) and "NOT" not in bench.verdict(1.0)
    with pytest.raises(ValueError, match="no successful plain run"):
        bench.ratio([_result("course", 1, 1.0), _result("plain", 1, 1.0, ok=False)])


def test_a_failed_command_fails_its_run() -> None:
    good = cost.Run("plain: autograde", 10.0, 12.0, 0)
    bad = cost.Run("plain: generate_feedback", 1.0, 2.0, 3, "Traceback …\nKeyError: x")
    result = bench.combine("plain", 1, [good, bad])
    assert not result.ok and result.cpu_s == 11.0 and result.wall_s == 14.0
    assert "generate_feedback exited 3" in result.problem and "KeyError" in result.problem
    assert bench.combine("plain", 1, [good]).ok


BURN = "import time\nt = time.process_time()\nwhile time.process_time() - t < {s}: pass\n"


def test_an_orphaned_grandchilds_cpu_is_counted(tmp_path: Path) -> None:
    """The grandchild outlives its parent, which never waits for it: without the subreaper its
    CPU would be nobody's. Run in a fresh process, so that this one's children stay its own."""
    grandchild = tmp_path / "burn.py"
    grandchild.write_text(BURN.format(s=0.6))
    parent = (f"import subprocess, sys; subprocess.Popen([sys.executable, {str(grandchild)!r}], "
              "start_new_session=True)")
    driver = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(GPU_SCRIPTS)!r})
        from pathlib import Path
        import grading_cost
        subreaper = {{subreaper}}
        if subreaper:
            assert grading_cost.become_subreaper()
        run = grading_cost.measure("t", [sys.executable, "-c", {parent!r}], cwd=Path("."))
        print(run.cpu_s, run.returncode)
    """)
    out = subprocess.run([sys.executable, "-c", driver.format(subreaper=True)],
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    cpu, rc = out.stdout.split()
    assert rc == "0" and float(cpu) >= 0.55
    out = subprocess.run([sys.executable, "-c", driver.format(subreaper=False)],
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    assert float(out.stdout.split()[0]) < 0.5  # what the subreaper is there for


def test_the_history_keeps_one_head_and_a_row_per_run(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("COURSE_COMMIT", "abc1234")
    for name in cost.SWITCHES:
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "history.md"
    row = cost.history_row("make bench-grading", 47.25, cost.per_100_minutes(47.25, 2),
                           "ratio 0.98×")
    cost.append_history(row, path)
    cost.append_history(row.replace("47.2", "48.0"), path)
    text = path.read_text()
    assert text.startswith("# Grading's cost, run by run") and text.count("| date (UTC)") == 1
    rows = [line for line in text.splitlines() if line.startswith("| 20")]
    assert len(rows) == 2 and rows[0].count(" | ") == 8
    assert "`make bench-grading`" in rows[0] and "| 47.2 |" in rows[0]
    assert f"| {100 * 47.25 / 2 / 60:.1f} |" in rows[0] and "ratio 0.98×" in rows[0]
    assert cost.per_100_minutes(35.0, 16) == pytest.approx(100 * 35 / 16 / 60)
    monkeypatch.setenv("COURSE_CHECK_FORK", "1")  # a switch set when measured: in the row
    assert "`COURSE_CHECK_FORK=1 make bench-grading`" in cost.history_row("make bench-grading",
                                                                        1.0, 1.0)
    with pytest.raises(ValueError):
        cost.per_100_minutes(1.0, 0)


def test_the_script_end_to_end_on_stand_in_graders(tmp_path: Path, monkeypatch, capsys) -> None:
    """main() with the grading replaced by commands that burn a known CPU time and write what
    grading writes: the runs alternate, each is measured, the ratio and its verdict printed,
    a history row appended; a run that writes no feedback fails."""
    student = "ada_correct"

    def base(scratch: Path, who: str, progress) -> Path:
        folder = scratch / "base" / "submitted" / who / ASSIGNMENT
        folder.mkdir(parents=True)
        for nb in ("01_a", "02_b"):
            (folder / f"{nb}.ipynb").write_text("{}")
        return scratch / "base"

    def grader(seconds: float, feedback: bool = True):
        script = BURN.format(s=seconds) + textwrap.dedent(f"""
            from pathlib import Path
            for nb in ("01_a", "02_b"):
                for top, ext in (("autograded", "ipynb"), ("feedback", "html")):
                    if top == "feedback" and not {feedback}:
                        continue
                    out = Path(top) / {student!r} / {ASSIGNMENT!r} / f"{{nb}}.{{ext}}"
                    out.parent.mkdir(parents=True, exist_ok=True)
                    out.write_text("x")
        """)
        return lambda root, who: [[sys.executable, "-c", script]]

    monkeypatch.setattr(bench, "build_base", base)
    monkeypatch.setattr(bench, "course_commands", grader(0.15))
    monkeypatch.setattr(bench, "plain_commands", grader(0.3))
    monkeypatch.setattr(bench, "become_subreaper", lambda: True)  # this process stays as it is
    monkeypatch.setattr(cost, "reap_orphans", lambda wait_s=30.0: 0)
    history = tmp_path / "history.md"
    status = bench.main(["--rounds", "2", "--keep", str(tmp_path / "scratch"),
                         "--history", str(history)])
    out = capsys.readouterr().out
    assert status == 0, out
    runs = [line for line in out.splitlines() if "CPU-s," in line and "run " in line]
    assert [r.split(": ")[1].split()[0] for r in runs] == ["course", "plain"] * 2
    cpu = {side: [float(r.split(": ")[2].split()[0]) for r in runs if f": {side} " in r]
           for side in ("course", "plain")}
    assert all(0.14 <= v < 1.5 for v in cpu["course"]) and all(0.29 <= v < 3 for v in cpu["plain"])
    ratio = bench.statistics.median(cpu["course"]) / bench.statistics.median(cpu["plain"])
    shown = float(out.split("course ÷ plain CPU = ")[1].split("×")[0])
    assert abs(shown - ratio) < 0.3 and "within issue 39's goal" in out  # (lines round to 0.1)
    assert "NOT within" not in out  # 0.15 against 0.3 CPU-s
    assert history.read_text().count("bench-grading: course") == 1

    monkeypatch.setattr(bench, "plain_commands", grader(0.01, feedback=False))
    assert bench.main(["--rounds", "1", "--keep", str(tmp_path / "scratch2"),
                       "--no-history"]) == 1
    assert "0 feedback pages" in capsys.readouterr().out


def test_the_profiles_per_submission_leaves_the_class_rows_out() -> None:
    profile = _load("profile_grading")
    result = {"cpu": {("(before the first notebook)", "nbgrader"): 5.0,
                      ("01_arithmetic_intensity", "kernel"): 2.0,
                      ("01_arithmetic_intensity", "trusted"): 1.0,
                      ("03_tiled_gemm", "kernel"): 4.5,
                      ("(feedback, export, table)", "harness"): 4.0}}
    assert profile.per_submission(result) == 7.5
    line = profile.per_submission_line(result, 16)
    assert "**Per full submission: 7.5 CPU-s**" in line
    assert f"**{100 * 7.5 / 16 / 60:.1f} min**" in line and "16 cores" in line
