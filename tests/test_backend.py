"""Tests for course.runtime.backend: where kernels run, what the student is told, autograding.

These tests run without a GPU: ``import course`` turns Numba's CUDA simulator on, so
``detect()`` must say "simulator" and give a reason a student can act on.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import course  # noqa: F401  (chooses GPU or simulator before numba is imported)
from course.runtime import backend, simulator
from course.runtime.backend import (
    AUTOGRADE_ENV,
    COLAB_HINT,
    SIM_ENV,
    Backend,
    NoGPUError,
    describe,
    detect,
    require_gpu,
)

needs_simulator = pytest.mark.skipif(
    detect().kind != "simulator", reason="runs only where kernels go to the CUDA simulator"
)


# --------------------------------------------------------------------------- detect()


@needs_simulator
def test_detect_reports_the_simulator_with_a_reason():
    b = detect()
    assert b.kind == "simulator"
    assert b.reason.strip(), "a student must be told why there is no GPU"
    assert b.can_run_kernels and not b.can_time
    assert b.device_name is None and b.compute_capability is None


@needs_simulator
def test_simulator_is_switched_on_by_import_course():
    assert backend.simulator_requested()
    from numba import config, cuda

    assert config.ENABLE_CUDASIM

    @cuda.jit
    def kernel(a):
        a[0] = 1

    # A simulator kernel is a FakeCUDAKernel, which course.gemm.launch recognises.
    assert type(kernel).__name__ == "FakeCUDAKernel"


def test_detect_is_cached():
    assert detect() is detect()


@pytest.mark.parametrize(("value", "expected"), [("1", True), ("yes", True), ("0", False),
                                                 ("", False), (None, False)])
def test_simulator_requested_reads_the_environment(monkeypatch, value, expected):
    if value is None:
        monkeypatch.delenv(SIM_ENV, raising=False)
    else:
        monkeypatch.setenv(SIM_ENV, value)
    assert backend.simulator_requested() is expected


def test_choose_numba_target_does_nothing_once_numba_is_imported(monkeypatch):
    assert "numba" in sys.modules
    monkeypatch.delenv(SIM_ENV, raising=False)
    backend.choose_numba_target()
    assert SIM_ENV not in os.environ


def test_backend_properties():
    assert Backend("gpu").can_run_kernels and Backend("gpu").can_time
    assert Backend("simulator").can_run_kernels and not Backend("simulator").can_time
    assert not Backend("none").can_run_kernels and not Backend("none").can_time


# --------------------------------------------------------------------------- describe()


@needs_simulator
def test_describe_on_this_machine_mentions_simulator_and_colab():
    text = describe()
    assert "simulator" in text
    assert COLAB_HINT in text
    assert "need a GPU" in text
    assert detect().reason in text


def test_describe_simulator_backend():
    text = describe(Backend("simulator", reason="no NVIDIA driver was found on this machine",
                            numba="0.60", numba_cuda="0.30"))
    assert "No GPU: no NVIDIA driver was found on this machine." in text
    assert "simulator" in text and "no timings" in text
    assert COLAB_HINT in text
    assert "numba 0.60" in text and "cupy not installed" in text


def test_describe_gpu_backend_names_the_device_and_omits_the_hint():
    text = describe(Backend("gpu", device_name="Tesla T4", compute_capability=(7, 5),
                            sm_count=40, memory_gib=15.0, driver_cuda="12.4", cupy="13.0"))
    assert "Tesla T4" in text and "compute capability 7.5" in text and "40 SMs" in text
    assert "CUDA driver 12.4" in text
    assert COLAB_HINT not in text
    assert "simulator" not in text


def test_describe_no_backend_gives_reason_and_hint():
    text = describe(Backend("none", reason="Numba is not installed", on_colab=True))
    assert "Kernels cannot run here: Numba is not installed." in text
    assert COLAB_HINT in text
    assert "Running on Google Colab." in text


def test_show_prints_describe(capsys):
    b = backend.show()
    assert b is detect()
    assert capsys.readouterr().out.strip() == describe(b)


def test_on_colab_reads_the_release_tag(monkeypatch):
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab-20240101")
    assert backend.on_colab()
    monkeypatch.delenv("COLAB_RELEASE_TAG")
    if "google.colab" not in sys.modules:
        assert not backend.on_colab()


# --------------------------------------------------------------------------- require_gpu()


@needs_simulator
def test_require_gpu_raises_with_a_message_about_timings():
    with pytest.raises(NoGPUError) as info:
        require_gpu("Timing kernels")
    msg = str(info.value)
    assert msg.startswith("Timing kernels needs a real CUDA GPU")
    assert "simulator" in msg
    assert "never produces timings" in msg
    assert COLAB_HINT in msg
    assert detect().reason in msg


def test_no_gpu_error_is_a_runtime_error():
    assert issubclass(NoGPUError, RuntimeError)


def test_require_gpu_returns_the_backend_on_a_gpu(monkeypatch):
    fake = Backend("gpu", device_name="H200")
    monkeypatch.setattr(backend, "detect", lambda: fake)
    assert require_gpu("Timing") is fake


def test_require_gpu_without_any_backend_says_no_gpu(monkeypatch):
    monkeypatch.setattr(backend, "detect", lambda: Backend("none", reason="no driver"))
    with pytest.raises(NoGPUError, match=r"this runs on no GPU \(no driver\)"):
        require_gpu("Timing")


# --------------------------------------------------------------------------- autograde


@pytest.mark.parametrize(("execution", "expected"),
                         [("autograde", True), (None, False), ("validate", False), ("", False)])
def test_autograding_follows_nbgraders_variable(monkeypatch, execution, expected):
    if execution is None:
        monkeypatch.delenv(AUTOGRADE_ENV, raising=False)
    else:
        monkeypatch.setenv(AUTOGRADE_ENV, execution)
    assert backend.autograding() is expected


def test_importing_course_on_the_simulator_runs_blocks_as_greenlets():
    code = ("import sys; sys.setswitchinterval(0.005); import course; "
            "from numba.cuda.simulator import kernel; "
            "print(kernel.BlockManager.run._course_greenlets, sys.getswitchinterval())")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    # one OS thread runs a block: the interpreter's switch interval is left as it was
    assert proc.stdout.split() == ["True", "0.005"], proc.stdout + proc.stderr
    before = sys.getswitchinterval()
    try:  # the threads' fallback never lengthens a shorter interval
        sys.setswitchinterval(1e-4)
        simulator.quick_thread_switches()
        assert sys.getswitchinterval() == pytest.approx(1e-4)
    finally:
        sys.setswitchinterval(before)
