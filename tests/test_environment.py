"""Tests for course.runtime.environment and .config: the report, Colab detection, what to install.

Colab is mocked with its ``COLAB_RELEASE_TAG`` variable and monkeypatched probes; ``pip`` is
never really run (``subprocess.run`` is replaced), so nothing is installed by these tests.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import course  # noqa: F401  (chooses GPU or simulator before numba is imported)
from course.runtime import backend, config, environment
from course.runtime.environment import EnvironmentReport, MissingPackage

ROOT = Path(__file__).resolve().parents[1]
SETUP_NOTEBOOK = ROOT / "source" / "week4" / "00_setup.ipynb"

on_simulator = pytest.mark.skipif(backend.detect().kind != "simulator",
                                  reason="checks the report without a GPU")


def _report(**changes) -> EnvironmentReport:
    base = dict(backend="gpu", reason="", simulator=False, on_colab=True, gpu_name="Tesla T4",
                compute_capability=(7, 5), sm_count=40, memory_gib=14.7, driver_cuda="12.8",
                python="3.12.11", numpy="2.1.3", numba="0.61.2", numba_cuda="0.22.2",
                cupy="14.0.1", course="0.1.0")
    base.update(changes)
    return EnvironmentReport(**base)


@pytest.fixture
def colab(monkeypatch):
    """Pretend to be on Colab with one GPU whose driver supports CUDA 12.8."""
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab-20261101")
    monkeypatch.setattr(backend, "driver_gpu_count", lambda: (1, ""))
    monkeypatch.setattr(environment, "_driver_cuda_version", lambda: (12, 8))
    monkeypatch.setattr(environment, "_numba_cuda_problem", lambda: None)
    monkeypatch.setattr(environment, "_installed", lambda name: True)


@pytest.fixture
def no_pip(monkeypatch):
    """Fail the test if anything tries to run a process."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"a process was started: {args}")

    monkeypatch.setattr(environment.subprocess, "run", refuse)


# --------------------------------------------------------------------------- report / show


@on_simulator
def test_report_without_a_gpu_never_raises_and_says_simulator():
    r = environment.report()
    assert r.backend == "simulator" and r.simulator and not r.has_gpu
    assert r.reason.strip()
    assert r.gpu_name is None and r.compute_capability is None
    assert r.python == sys.version.split()[0]
    assert r.numba and r.numba_cuda and r.numpy and r.course == course.__version__


@on_simulator
def test_show_prints_plain_words(capsys):
    r = environment.show()
    out = capsys.readouterr().out
    assert isinstance(r, EnvironmentReport)
    assert "simulator" in out and "No GPU" in out
    assert "Tesla T4" in out, "the simulator's roofline stand-in should be named"
    assert backend.COLAB_HINT in out
    assert f"numba-cuda {r.numba_cuda}" in out
    assert "Google Colab: no." in out


def test_describe_a_known_gpu_quotes_its_datasheet():
    text = environment.describe(_report())
    assert "GPU: Tesla T4, compute capability 7.5, 40 SMs, 14.7 GiB" in text
    assert "CUDA 12.8" in text
    assert "8,141 GFLOP/s" in text and "320 GB/s" in text and "25.4 FLOP/byte" in text
    assert "Google Colab: yes." in text
    assert backend.COLAB_HINT not in text


def test_describe_an_unknown_gpu_says_it_will_be_measured():
    text = environment.describe(_report(gpu_name="NVIDIA RTX 9999"))
    assert "no datasheet numbers" in text


def test_describe_without_any_backend():
    text = environment.describe(_report(backend="none", reason="Numba is not installed",
                                        gpu_name=None, compute_capability=None, numba=None))
    assert "Kernels cannot run here: Numba is not installed" in text
    assert "numba missing" in text


# --------------------------------------------------------------------------- Colab detection


def test_on_colab_follows_colab_release_tag(monkeypatch):
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    assert not environment.on_colab()
    monkeypatch.setenv("COLAB_RELEASE_TAG", "release-colab-20261101")
    assert environment.on_colab()
    assert environment.report().on_colab


def test_on_colab_follows_the_google_colab_module(monkeypatch):
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    monkeypatch.setitem(sys.modules, "google.colab", object())
    assert environment.on_colab()


# --------------------------------------------------------------------------- what is missing


def test_nothing_is_missing_without_a_gpu(monkeypatch):
    monkeypatch.setattr(backend, "driver_gpu_count", lambda: (0, "no NVIDIA driver"))
    monkeypatch.setattr(environment, "_numba_cuda_problem",
                        lambda: pytest.fail("no GPU: the kernel probe must not run"))
    assert environment.colab_missing_packages() == []


def test_nothing_is_missing_on_a_working_colab_gpu(colab):
    assert environment.colab_missing_packages() == []


@pytest.mark.parametrize(("driver", "extra"), [((12, 8), "cu12"), ((13, 0), "cu13"),
                                               (None, "cu12")])
def test_numba_cuda_extra_matches_the_driver(colab, monkeypatch, driver, extra):
    monkeypatch.setattr(environment, "_driver_cuda_version", lambda: driver)
    monkeypatch.setattr(environment, "_numba_cuda_problem",
                        lambda: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION")
    (missing,) = environment.colab_missing_packages()
    assert missing.name == "numba-cuda"
    assert missing.requirement == f"numba-cuda[{extra}]"
    assert "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" in missing.why


def test_missing_cupy_is_reported_on_a_gpu(colab, monkeypatch):
    monkeypatch.setattr(environment, "_installed", lambda name: name != "cupy")
    (missing,) = environment.colab_missing_packages()
    assert missing == MissingPackage("cupy", "cupy-cuda12x", missing.why)


def test_kernel_probe_runs_without_the_simulator(monkeypatch):
    seen = {}

    def fake_run(cmd, env, **kwargs):
        seen.update(cmd=cmd, env=env)
        return subprocess.CompletedProcess(cmd, 1, "", "Traceback …\nCudaSupportError: no driver")

    monkeypatch.setenv(backend.SIM_ENV, "1")
    monkeypatch.setattr(environment.subprocess, "run", fake_run)
    assert environment._kernel_in_subprocess() == "CudaSupportError: no driver"
    assert seen["cmd"][0] == sys.executable and "cuda.jit" in seen["cmd"][-1]
    assert backend.SIM_ENV not in seen["env"]

    monkeypatch.setattr(environment.subprocess, "run",
                        lambda cmd, **kw: subprocess.CompletedProcess(cmd, 0, "ok\n", ""))
    assert environment._kernel_in_subprocess() is None


# --------------------------------------------------------------------------- colab_install


def test_colab_install_does_nothing_off_colab(monkeypatch, no_pip, capsys):
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    assert environment.colab_install() == []
    assert "Not on Colab" in capsys.readouterr().out


def test_colab_install_with_nothing_missing(colab, no_pip, capsys):
    assert environment.colab_install() == []
    assert "Everything the course needs is installed" in capsys.readouterr().out


def test_colab_install_dry_run_lists_commands_and_runs_nothing(colab, monkeypatch, no_pip,
                                                               capsys):
    monkeypatch.setattr(environment, "_numba_cuda_problem", lambda: "CudaSupportError")
    monkeypatch.setattr(environment, "_installed", lambda name: name != "cupy")
    commands = environment.colab_install(dry_run=True)
    assert commands == [[sys.executable, "-m", "pip", "install", "-q", "numba-cuda[cu12]",
                         "cupy-cuda12x"]]
    out = capsys.readouterr().out
    assert "would run: %pip install -q numba-cuda[cu12] cupy-cuda12x" in out
    assert "--upgrade" not in out and "-U" not in commands[0]


def test_colab_install_runs_pip_with_this_interpreter(colab, monkeypatch, capsys):
    calls = []

    def fake_run(cmd, **kwargs):
        calls.append(cmd)
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(environment, "_numba_cuda_problem", lambda: "no kernel")
    monkeypatch.setattr(environment.subprocess, "run", fake_run)
    commands = environment.colab_install()
    assert calls == commands == [[sys.executable, "-m", "pip", "install", "-q",
                                  "numba-cuda[cu12]"]]
    assert "Restart the session" in capsys.readouterr().out


def test_colab_install_reports_a_pip_failure(colab, monkeypatch, capsys):
    monkeypatch.setattr(environment, "_numba_cuda_problem", lambda: "no kernel")
    monkeypatch.setattr(environment.subprocess, "run", lambda cmd, **kw:
                        subprocess.CompletedProcess(cmd, 1, "", "ERROR: no matching dist"))
    environment.colab_install()
    out = capsys.readouterr().out
    assert "pip failed (exit code 1)" in out and "no matching dist" in out
    assert "Restart the session" not in out


def test_force_installs_off_colab(colab, monkeypatch, no_pip):
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    monkeypatch.setattr(environment, "_numba_cuda_problem", lambda: "no kernel")
    assert environment.colab_install(dry_run=True, force=True)


# --------------------------------------------------------------------------- config


def test_config_builds_one_pip_line():
    assert config.pip_requirement() == f"git+{config.COURSE_REPO_URL}@{config.COURSE_REF}"
    assert config.colab_install_command() == (
        f'%pip install -q "git+{config.COURSE_REPO_URL}@{config.COURSE_REF}"')
    assert config.pip_requirement("https://example.org/x/y/", "v1") == (
        "git+https://example.org/x/y@v1")
    assert config.pip_requirement("git+https://example.org/x/y", "v1") == (
        "git+https://example.org/x/y@v1")
    with pytest.raises(ValueError, match="COURSE_REPO_URL"):
        config.pip_requirement("github.com/x/y")


def test_config_marks_the_instructor_setting():
    text = Path(config.__file__).read_text()
    assert "INSTRUCTOR" in text and "placeholder" in text.lower()


def test_setup_notebook_quotes_the_configured_install_line():
    """The first cell of notebook 00 runs before `course` exists, so it carries the
    requirement literally; it must stay the one course.runtime.config builds."""
    nb = json.loads(SETUP_NOTEBOOK.read_text())
    first = next("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert f'COURSE_PACKAGE = "{config.pip_requirement()}"' in first


def test_placeholder_url_is_recognised():
    assert config.is_placeholder()
    assert config.is_placeholder("git+" + config.PLACEHOLDER_REPO_URL + "/")
    assert not config.is_placeholder("https://github.com/someone/week4")
