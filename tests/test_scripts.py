"""The GPU scripts and the notebook runner work here too, as far as no GPU is needed.

Their GPU paths ran on the H200 (docs/results-gpu.md); these tests keep the rest from rotting
between GPU sessions: imports, the extra vector-add kernel, the "needs a GPU" exit, and the
runner's report of failing cells.
"""

from __future__ import annotations

import copy
import importlib.util
import re
import shutil
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

import course  # noqa: F401  (chooses GPU or simulator before numba is imported)
from course.runtime import backend

ROOT = Path(__file__).resolve().parents[1]
GPU_SCRIPTS = ROOT / "scripts" / "gpu"
sys.path.insert(0, str(GPU_SCRIPTS))  # as when they run: `from common import …` finds theirs


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, GPU_SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def test_versions_line_names_the_packages():
    common = load_script("common")
    line = common.versions()
    assert "numba" in line and "numpy" in line and line.rstrip().split()[-2] == "Python"


def test_a_report_starts_with_its_date_the_gpu_and_the_versions():
    from types import SimpleNamespace

    common = load_script("common")
    gpu = SimpleNamespace(device_name="NVIDIA H200", compute_capability=(9, 0), sm_count=132,
                          driver_cuda="13.0")
    title, blank, gpu_line, versions = common.report_head("Roofline ceilings", gpu,
                                                          when="%Y-%m-%d %H:%M UTC")
    assert re.fullmatch(r"# Roofline ceilings, \d{4}-\d\d-\d\d \d\d:\d\d UTC", title)
    assert blank == "" and versions == f"- Versions: {common.versions()}"
    assert gpu_line == "- GPU: NVIDIA H200, cc (9, 0), 132 SMs, driver CUDA 13.0"


@pytest.mark.skipif(backend.detect().kind == "gpu", reason="checks the behaviour without a GPU")
def test_ceilings_script_without_a_gpu(capsys, monkeypatch):
    from numba import cuda

    script = load_script("ceilings")
    a = np.arange(600, dtype=np.float32)
    b = np.ones(600, dtype=np.float32)
    c = cuda.device_array(600, np.float32)
    script.one_per_thread[3, 256](cuda.to_device(a), cuda.to_device(b), c)
    np.testing.assert_array_equal(c.copy_to_host(), a + b)
    vector_add = script.solution_vector_add()  # the notebook-05 solution, as the grader reads it
    c = cuda.device_array(600, np.float32)
    vector_add[1, 256](cuda.to_device(a), cuda.to_device(b), c)
    np.testing.assert_array_equal(c.copy_to_host(), a + b)
    monkeypatch.setattr(sys, "argv", ["ceilings.py"])
    assert script.main() == 0
    assert "needs a GPU" in capsys.readouterr().out


def test_notebook_runner_reports_errors_and_graded_stderr():
    runner = load_script("run_notebooks")
    nb = nbformat.v4.new_notebook()
    ok = nbformat.v4.new_code_cell("x = 1")
    ok.outputs = [nbformat.v4.new_output("stream", name="stdout", text="fine\n")]
    broken = nbformat.v4.new_code_cell("1 / 0")
    broken.outputs = [nbformat.v4.new_output("error", ename="ZeroDivisionError",
                                             evalue="division by zero", traceback=[])]
    graded = nbformat.v4.new_code_cell("check()")
    graded.metadata["nbgrader"] = {"grade": True, "grade_id": "t", "points": 1}
    graded.outputs = [nbformat.v4.new_output("stream", name="stderr", text="Warning: slow\n")]
    ungraded = nbformat.v4.new_code_cell("warn()")
    ungraded.outputs = [nbformat.v4.new_output("stream", name="stderr", text="Warning\n")]
    nb.cells = [ok, broken, graded, ungraded]
    broken.id, ungraded.id = "divide", "warns"
    found = runner.problems(nb)
    assert found == ["cell 1 (divide): ZeroDivisionError: division by zero",
                     "cell 2 (t, graded) wrote to stderr: Warning: slow\n"]
    assert runner.problems(nb, allow=["ZeroDivisionError"]) == found[1:]
    # the GPU session's notebook runs report every cell that wrote to stderr
    everything = runner.problems(nb, any_stderr=True)
    assert everything == [*found, "cell 3 (warns, not graded) wrote to stderr: Warning\n"]


def test_notebook_runner_picks_by_prefix():
    runner = load_script("run_notebooks")
    assert [p.name for p in runner.pick(["05"])] == ["05_roofline.ipynb"]
    assert len(runner.pick([])) == len(list((ROOT / "source" / "week4").glob("*.ipynb")))
    with pytest.raises(SystemExit, match="no notebook"):
        runner.pick(["99"])


def test_notebook_runner_leaves_the_other_track_out():
    runner = load_script("run_notebooks")
    assert runner.left_out(None) == set()
    assert runner.left_out("cuda") == {"02_naive_gemm.ipynb", "03_tiled_gemm.ipynb"}
    assert runner.left_out("numba") == {"02c_naive_gemm_cuda.ipynb", "03c_tiled_gemm_cuda.ipynb"}
    week = {p.name for p in (ROOT / "source" / "week4").glob("*.ipynb")}
    assert runner.left_out("cuda") | runner.left_out("numba") <= week


def test_part_of_the_sample_class_can_be_staged_and_compared(tmp_path):
    """`harness demo --students …` and `compare_scores.py --only-present`, for short GPU runs."""
    import sample_class as samples

    ids = samples.build_class(ROOT, tmp_path, only=["nia_one_thread_per_element"])
    assert ids == ["nia_one_thread_per_element"]
    assert [p.name for p in tmp_path.iterdir()] == ["nia_one_thread_per_element"]
    with pytest.raises(ValueError, match="no sample student called nobody"):
        samples.build_class(ROOT, tmp_path, only=["nobody"])
    table = {"nia_one_thread_per_element": {"scores": {"05_roofline": [10.0, 13.0]}}}
    assert samples.compare(table, only_present=True) == []
    assert "ada_correct: missing from the grade table" in samples.compare(table)
    table["nia_one_thread_per_element"]["scores"]["05_roofline"] = [13.0, 13.0]
    assert samples.compare(table, only_present=True) == [
        "nia_one_thread_per_element 05_roofline: got 13, expected 10"]


def test_throughput_script_without_a_gpu(tmp_path, capsys, monkeypatch):
    """The throughput script's parts that need no grading: staging replicas, reading the
    progress lines and the speedup cells, the verdict check and the projection."""
    from autograder.engines.progress import StudentResult
    from course.runtime import backend as course_backend

    script = load_script("throughput")
    root = tmp_path / "course"
    (root / "release").mkdir(parents=True)
    shutil.copytree(ROOT / "release" / "week4", root / "release" / "week4")
    shutil.copytree(ROOT / "source", root / "source")
    bases = script.stage(root, "ada_correct", 2, ["ivy_global_inner_loop"])
    assert bases == {"ada_correct_r001": "ada_correct", "ada_correct_r002": "ada_correct",
                     "ivy_global_inner_loop_r001": "ivy_global_inner_loop"}
    handed_in = list((root / "submitted" / "ada_correct_r002" / "week4").glob("*.ipynb"))
    assert len(handed_in) == len(list((ROOT / "release" / "week4").glob("*.ipynb")))
    assert [p.name for p in (root / "submitted" / "ivy_global_inner_loop_r001" / "week4")
            .iterdir()] == ["03_tiled_gemm.ipynb"]

    stdout = "\n".join([StudentResult("ada_correct_r001", 8, 48, 50, 93.0).line(),
                        "$ nbgrader export", StudentResult("ivy_r001", 1, 8, 50, 7.4).line()])
    assert script.parse_lines(stdout) == {"ada_correct_r001": 93.0, "ivy_r001": 7.0}

    folder = root / "autograded" / "ada_correct_r001" / "week4"
    folder.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("check_speedup(...)")
    cell.metadata["nbgrader"] = {"grade": True, "grade_id": "tiled_gemm_speedup", "points": 3}
    cell.outputs = [nbformat.v4.new_output(
        "stream", name="stdout", text="✓ tile 32 at 2048³: 5.61× the speed of the course's "
        "naive kernel, 5.70× the speed of your naive kernel (threshold 2.0×)\n")]
    nb.cells = [cell]
    nbformat.write(nb, folder / "03_tiled_gemm.ipynb")
    assert script.speedup_ratios(root, ["ada_correct_r001", "nobody"]) == {
        "ada_correct_r001": ("pass", 5.61)}

    good = {"scores": {"01_arithmetic_intensity": [11, 11], "02_naive_gemm": [6, 6],
                       "03_tiled_gemm": [14, 14], "02c_naive_gemm_cuda": [6, 6],
                       "03c_tiled_gemm_cuda": [14, 14], "05_roofline": [13, 13],
                       "06_tile_sweep": [5, 7], "07_bonus_register_tiling": [3, 3]}}
    table = {"ada_correct_r001": good, "ada_correct_r002": copy.deepcopy(good)}
    table["ada_correct_r002"]["scores"]["03_tiled_gemm"] = [11, 14]  # the speedup lost
    only_ada = {k: v for k, v in bases.items() if k.startswith("ada")}
    assert script.verdict_problems(table, only_ada, gpu=True) == [
        "ada_correct_r002 03_tiled_gemm: got 11, expected 14"]
    assert script.projected(300.0, 10) == 3000.0
    with pytest.raises(ValueError):
        script.projected(300.0, 0)

    monkeypatch.setattr(course_backend, "driver_gpu_count", lambda: (0, "no driver here"))
    assert script.main([]) == 0
    assert "needs a GPU: no driver here" in capsys.readouterr().out


def test_device_print_cost_script_without_a_gpu(capsys, monkeypatch):
    """Issue 32's measure: it refuses without a GPU, and its Numba half times the sample
    student's kernel, with and without the print, at a size the simulator can run."""
    script = load_script("device_print_cost")
    monkeypatch.setattr(sys, "argv", ["device_print_cost.py"])
    assert script.main() == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err
    seconds = script.numba_kernels(4, 2)
    assert set(seconds) == {"numba naive", "numba naive + print"}
    assert all(len(t) == 2 and min(t) > 0 for t in seconds.values())
    assert "row 3 col 3 acc" in capsys.readouterr().out  # the student's line, every thread


def test_simulator_cost_script_measures_both_runners_and_restores_the_greenlets(
        capsys, monkeypatch):
    if backend.detect().kind != "simulator":
        pytest.skip("the simulator's cost: measured where kernels run on the simulator")
    from numba.cuda.simulator import kernel

    cost = load_script("simulator_cost")
    monkeypatch.setattr(sys, "argv", ["simulator_cost.py", "--sizes", "16"])
    cost.main()
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 16 ")]
    assert len(rows) == 1 and rows[0].startswith("| 16 | 1 × 256 | "), rows
    assert getattr(kernel.BlockManager.run, "_course_greenlets", False)
