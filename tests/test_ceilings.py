"""Tests for course.perf.ceilings: the vector-add check, measured ceilings and the roof to plot.

Without a GPU every measurement must raise NoGPUError (never a made-up number) and the roof
must be the datasheet roof of the default simulator device, said in words. The check of the
student's ``vector_add`` runs on the simulator and is shown to fail on typical wrong kernels.
The measurement itself runs only on a GPU (``-m gpu``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import cuda  # noqa: E402  (after course: the simulator must be chosen first)

import course  # noqa: F401  (chooses GPU or simulator before numba is imported)
from course.checks import vector_add as vector_add_check
from course.checks.vector_add import check_grids, check_vector_add
from course.gemm.launch import NotAKernelError
from course.perf import ceilings
from course.perf.ceilings import (
    VECTOR_ADD_AI,
    Ceiling,
    MissingDependencyError,
    VectorAddCheckError,
    check_copies,
    copy_bytes,
    copy_launches,
    measure_bandwidth,
    measure_copy_bandwidth,
    measure_fp32_peak,
    vector_add_bytes,
    vector_add_launch,
)
from course.perf.roof import ceilings_for_plot, compare_with_datasheet
from course.perf.timing import Timing
from course.runtime import backend, gpu_classes
from course.runtime.backend import AUTOGRADE_ENV, TRUSTED_ENV, Backend, NoGPUError
from course.runtime.devices import DEFAULT_SIMULATOR_DEVICE, lookup

ROOT = Path(__file__).resolve().parents[1]
ROOFLINE_NOTEBOOK = ROOT / "source" / "week4" / "05_roofline.ipynb"

on_simulator = pytest.mark.skipif(backend.detect().kind == "gpu",
                                  reason="checks the behaviour without a GPU")


@cuda.jit
def vector_add(a, b, c):
    for i in range(cuda.grid(1), c.size, cuda.gridsize(1)):
        c[i] = a[i] + b[i]


@cuda.jit
def one_element_per_thread(a, b, c):  # last week's habit: no loop
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


@cuda.jit
def loop_one_too_far(a, b, c):
    i = cuda.grid(1)
    while i <= c.size:
        c[i] = a[i] + b[i]
        i += cuda.gridsize(1)


@cuda.jit
def subtracts(a, b, c):
    for i in range(cuda.grid(1), c.size, cuda.gridsize(1)):
        c[i] = a[i] - b[i]


@cuda.jit
def thread_index_only(a, b, c):  # starts at threadIdx: later blocks redo block 0's elements
    for i in range(cuda.threadIdx.x, c.size, cuda.gridsize(1)):
        c[i] = a[i] + b[i]


@cuda.jit
def every_block_does_everything(a, b, c):  # right values, each element done once per block
    for i in range(cuda.threadIdx.x, c.size, cuda.blockDim.x):
        c[i] = a[i] + b[i]


@cuda.jit
def block_stride(a, b, c):  # right values, but blocks overlap: elements done several times
    for i in range(cuda.grid(1), c.size, cuda.blockDim.x):
        c[i] = a[i] + b[i]


@cuda.jit
def unit_stride(a, b, c):  # right values, each thread runs to the end: n²/2 work
    for i in range(cuda.grid(1), c.size):
        c[i] = a[i] + b[i]


@cuda.jit
def writes_into_a(a, b, c):
    for i in range(cuda.grid(1), c.size, cuda.gridsize(1)):
        a[i] = a[i] + b[i]


@cuda.jit
def off_by_one(a, b, c):
    for i in range(cuda.grid(1), c.size - 1, cuda.gridsize(1)):
        c[i] = a[i] + b[i]


@cuda.jit
def not_written(a, b, c):
    raise NotImplementedError()


def _timing(ms: float = 1.0) -> Timing:
    return Timing("t", ms, ms, ms, 5, 0.0, 0.0)


# --------------------------------------------------------------------------- pure logic


def test_launch_and_byte_counts():
    assert vector_add_launch(1, sm_count=132) == (1, 256)
    assert vector_add_launch(256, sm_count=132) == (1, 256)
    assert vector_add_launch(257, sm_count=132) == (2, 256)
    assert vector_add_launch(2**27, sm_count=132) == (32 * 132, 256)  # grid-stride beyond
    assert vector_add_launch(2**27, sm_count=40) == (32 * 40, 256)
    assert vector_add_launch(10_000) == (32, 256)  # the simulator counts as one SM
    assert vector_add_bytes(1000) == 12_000
    assert vector_add_bytes(1000, bytes_per_element=8) == 24_000
    assert copy_bytes(1000) == 8_000
    assert 1000 / vector_add_bytes(1000) == pytest.approx(VECTOR_ADD_AI)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="n must be a positive integer"):
            vector_add_launch(bad)


def test_ceiling_units_are_kept_apart():
    bw = Ceiling("copy", 300.0, "GB/s", _timing(), "note")
    peak = Ceiling("sgemm", 4000.0, "GFLOP/s", _timing())
    assert bw.value_gbs == 300.0 and peak.value_gflops == 4000.0
    with pytest.raises(ValueError, match="not a compute rate"):
        bw.value_gflops  # noqa: B018
    with pytest.raises(ValueError, match="not a bandwidth"):
        peak.value_gbs  # noqa: B018
    assert str(bw) == "copy: 300 GB/s (median 1.000 ms of 5 runs); note"


def test_compare_with_datasheet():
    text = compare_with_datasheet([Ceiling("copy", 256.0, "GB/s", _timing()),
                                   Ceiling("sgemm", 4070.5, "GFLOP/s", _timing())], "Tesla T4")
    assert "320 GB/s" in text and "80 %" in text
    assert "8,141 GFLOP/s" in text and "50 %" in text
    unknown = compare_with_datasheet([Ceiling("copy", 256.0, "GB/s", _timing())], "RTX 9999")
    assert "no datasheet entry for RTX 9999" in unknown and "—" in unknown


@on_simulator
def test_ceilings_for_plot_without_a_gpu_is_the_datasheet_roof():
    roof, source = ceilings_for_plot()
    spec = lookup(DEFAULT_SIMULATOR_DEVICE)
    assert (roof.peak_gflops, roof.bandwidth_gbs) == (spec.fp32_peak_gflops, spec.bandwidth_gbs)
    assert "datasheet" in roof.name
    assert "No GPU" in source and DEFAULT_SIMULATOR_DEVICE in source
    assert "not a measurement" in source


@pytest.fixture
def fake_gpu(monkeypatch):
    monkeypatch.setattr(backend, "detect", lambda: Backend("gpu", device_name="Tesla T4"))


def test_ceilings_for_plot_uses_measured_ceilings(fake_gpu):
    bw = Ceiling("device-to-device copy bandwidth", 250.0, "GB/s", _timing())
    peak = Ceiling("FP32 rate of cuBLAS SGEMM", 4500.0, "GFLOP/s", _timing())
    roof, source = ceilings_for_plot(bw, peak)
    assert (roof.peak_gflops, roof.bandwidth_gbs) == (4500.0, 250.0)
    assert "measured" in roof.name
    assert "250 GB/s" in source and "4,500 GFLOP/s" in source


def test_ceilings_for_plot_falls_back_to_the_datasheet_peak_without_cupy(fake_gpu, monkeypatch):
    def no_cupy(*args, **kwargs):
        raise MissingDependencyError("measuring the FP32 peak needs CuPy")

    monkeypatch.setattr(ceilings, "measure_fp32_peak", no_cupy)
    bw = Ceiling("copy", 250.0, "GB/s", _timing())
    roof, source = ceilings_for_plot(bw)
    assert roof.peak_gflops == lookup("Tesla T4").fp32_peak_gflops
    assert "datasheet FP32 peak" in source and "CuPy is not installed" in source

    monkeypatch.setattr(backend, "detect", lambda: Backend("gpu", device_name="RTX 9999"))
    with pytest.raises(MissingDependencyError, match="no datasheet peak"):
        ceilings_for_plot(bw)


def test_ceilings_for_plot_refuses_a_compute_rate_as_bandwidth(fake_gpu):
    peak = Ceiling("sgemm", 4500.0, "GFLOP/s", _timing())
    with pytest.raises(ValueError, match="not a bandwidth"):
        ceilings_for_plot(peak, peak)


def test_missing_cupy_is_a_clear_error_and_tf32_is_off(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes `import cupy` raise ImportError
    monkeypatch.delenv("CUPY_TF32", raising=False)
    with pytest.raises(MissingDependencyError, match="pip install cupy-cuda12x"):
        ceilings._import_cupy()
    import os

    assert os.environ["CUPY_TF32"] == "0"


# --------------------------------------------------------------------------- no GPU


@on_simulator
@pytest.mark.parametrize("measure", [
    lambda: measure_bandwidth(vector_add),
    lambda: measure_copy_bandwidth(1024),
    lambda: measure_fp32_peak(64),
], ids=["bandwidth", "copy", "fp32_peak"])
def test_measurements_need_a_gpu(measure):
    with pytest.raises(NoGPUError, match="needs a real CUDA GPU"):
        measure()


def test_every_reference_copy_really_copies():
    """The copies the copy ceiling is taken from run (on the simulator here) and copy."""
    from numba import cuda

    host = np.arange(300, dtype=np.float32)
    src = cuda.to_device(host)
    names = list(copy_launches(src, cuda.device_array_like(src)))
    assert names[:2] == ["cudaMemcpyDeviceToDevice", "Numba copy kernel"]
    for name in names:
        dst = cuda.to_device(np.zeros_like(host))
        copy_launches(src, dst)[name]()
        np.testing.assert_array_equal(dst.copy_to_host(), host, err_msg=name)
    check_copies(257)  # raises if one of them does not copy


def test_a_copy_that_does_not_copy_is_refused(monkeypatch):
    from course.perf import ceilings

    monkeypatch.setattr(ceilings, "copy_launches", lambda src, dst: {"lazy copy": lambda: None})
    with pytest.raises(RuntimeError, match="the lazy copy did not copy its input"):
        check_copies(10)


# --------------------------------------------------------------------------- check_vector_add


def test_check_vector_add_passes_a_correct_kernel(capsys):
    report = check_vector_add(vector_add, sizes=(600, 1, 257), seed=1)
    assert report.sizes == (1, 257, 600)  # small sizes first
    out = capsys.readouterr().out
    assert "✓ vector_add is correct" in out and "c the same array as a" in out


def test_check_grids_cover_one_block_an_odd_grid_and_one_thread_per_element():
    assert check_grids(1) == [1, 3]
    assert check_grids(257) == [1, 3, 2]
    assert check_grids(10_000) == [1, 3, 40]


@pytest.mark.parametrize(("kernel", "message"), [
    (one_element_per_thread, "each of the grid's 256 threads handled one element"),
    (loop_one_too_far, "loop only while i < c.size"),  # simulator: index error
    (subtracts, "Your kernel stores a[i] − b[i]"),
    (thread_index_only, "only the first block's elements were written"),
    (every_block_does_everything, "added 3 times, so more than one thread handled that"),
    (block_stride, "not blockDim.x, not 1"),
    (unit_stride, "more than one thread handled that element"),
    (writes_into_a, "your kernel changed a"),
    (off_by_one, "run up to c.size"),
    (not_written, "not written yet"),
], ids=lambda x: getattr(x, "__name__", "")[:20] if callable(x) else "")
def test_check_vector_add_fails_wrong_kernels_with_a_hint(kernel, message):
    with pytest.raises(VectorAddCheckError) as info:
        check_vector_add(kernel, sizes=(1, 257, 600), seed=2, quiet=True)
    assert message in str(info.value)


def test_check_vector_add_finds_the_missing_tail():
    with pytest.raises(VectorAddCheckError, match="the last elements are missing"):
        check_vector_add(off_by_one, sizes=(300,), seed=3, quiet=True)


def test_diagnosis_of_a_store_past_the_end():
    """On a GPU nothing raises: a loop that runs too far shows up as a changed guard region."""
    a = np.ones(3, dtype=np.float32)
    message = vector_add_check._diagnose(3, 1, a, a, a + a, wrote_outside=True, changed_inputs="")
    assert "wrote past the end of c" in message and "range(cuda.grid(1), c.size" in message
    assert vector_add_check._diagnose(3, 1, a, a, a + a, wrote_outside=False,
                                      changed_inputs="") is None


def test_diagnosis_of_an_element_added_twice():
    a = np.zeros(4, dtype=np.float32)
    b = np.full(4, 0.5, dtype=np.float32)
    assert vector_add_check._diagnose_aliased(4, a, b, a + b) is None
    twice = a + b
    twice[2] += b[2]
    message = vector_add_check._diagnose_aliased(4, a, b, twice)
    assert "c[2] got b[2] added 2 times" in message


def test_check_vector_add_wants_a_kernel():
    def plain(a, b, c):
        pass

    with pytest.raises(NotAKernelError, match="@cuda.jit"):
        check_vector_add(plain)


def test_check_vector_add_also_runs_in_the_students_kernel_during_autograde(monkeypatch):
    monkeypatch.setenv(AUTOGRADE_ENV, "autograde")
    monkeypatch.delenv(TRUSTED_ENV, raising=False)
    check_vector_add(vector_add, sizes=(5,), quiet=True)


# --------------------------------------------------------------------------- notebook 05


def test_roofline_notebook_solutions_pass_the_grader_whitelist():
    """The reference answers of notebook 05 must survive the grader's source rebuild."""
    from course.trust.kernel_source import bundle_from_cells

    nb = json.loads(ROOFLINE_NOTEBOOK.read_text())
    cells = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"
             and not c["metadata"].get("nbgrader", {}).get("grade")]
    names = {"attainable_gflops", "critical_ai", "bound", "vector_add"}
    ns = bundle_from_cells(cells, names).load()
    assert ns["critical_ai"](8141.0, 320.0) == pytest.approx(25.440625)
    assert ns["bound"](ns["critical_ai"](8000.0, 320.0), 8000.0, 320.0) == "compute"
    got = ns["attainable_gflops"](np.array([0.25, 25.0, 100.0]), 8000.0, 320.0)
    np.testing.assert_allclose(got, [80.0, 8000.0, 8000.0])


# --------------------------------------------------------------------------- on a GPU


@pytest.mark.gpu
def test_vector_add_reaches_most_of_the_copy_bandwidth():
    copy = measure_copy_bandwidth()
    add = measure_bandwidth(vector_add)
    print(f"\n{copy}\n{add}")
    bar = gpu_classes.for_device(backend.detect().device_name,
                                 backend.detect().compute_capability).bandwidth_bar
    assert add.value_gbs >= bar * copy.value_gbs, (add, copy, bar)
    spec = lookup(backend.detect().device_name or "")
    if spec is not None:
        assert copy.value_gbs <= 1.05 * spec.bandwidth_gbs, "faster than the datasheet?"


@pytest.mark.gpu
def test_fp32_peak_is_below_the_datasheet():
    pytest.importorskip("cupy")
    peak = measure_fp32_peak(4096, repeats=5)
    spec = lookup(backend.detect().device_name or "")
    print(f"\n{peak}")
    assert peak.value_gflops > 0
    if spec is not None:
        assert peak.value_gflops <= 1.1 * spec.fp32_peak_gflops, "TF32 left on?"
