"""A stand-in for a student's Colab runtime on a CPU machine, for the release tests.

    python scripts/build/colab_runtime.py      # create (or reuse) .colab-venv, print its python

Three pieces, used by tests/test_notebooks_execute.py:

* :func:`ensure_venv` — ``.colab-venv/`` (git-ignored): Python 3.13 with Colab's versions
  from ``tests/colab-versions.txt`` (numba 0.61.2, numba-cuda 0.22.2, NumPy 2.1.3, …),
  installed once with uv (seconds from uv's cache), byte-compiled, and reused while the file
  is unchanged.
  Built under a file lock, so parallel test workers share one.
* :func:`build_student_distribution` — what ``make publish`` writes (the course package alone,
  both releases, the student READMEs; :mod:`autograder.publish.student_tree`) and its wheel:
  students install that, never this repository, so the runtime gets nothing else.
* :func:`runtime` — a fresh, empty runtime on top of that venv: a venv whose ``.pth`` file
  adds the Colab venv's site-packages, so everything Colab ships is there, ``pip install``
  goes into the new venv alone, and ``course`` is importable only if something installed
  it. One per test that needs "a fresh Colab runtime"; creating it takes well under a second.
* :func:`kernel_manager` — a Jupyter kernel manager whose kernel is that runtime's Python.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".colab-venv"
VERSIONS = ROOT / "tests" / "colab-versions.txt"
PYTHON_VERSION = "3.13"


class RuntimeSetupError(RuntimeError):
    """The Colab stand-in cannot be built here (the message says what is missing)."""


def find_python() -> str:
    """A Python 3.13 interpreter: $COLAB_PYTHON, python3.13 on PATH, or pyenv's."""
    if os.environ.get("COLAB_PYTHON"):
        return os.environ["COLAB_PYTHON"]
    found = shutil.which(f"python{PYTHON_VERSION}")
    pyenv_root = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    candidates = ([found] if found else []) + sorted(
        glob.glob(f"{pyenv_root}/versions/{PYTHON_VERSION}*/bin/python{PYTHON_VERSION}"))
    for candidate in candidates:
        proc = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[:2])"],
                              capture_output=True, text=True)
        if proc.returncode == 0 and proc.stdout.strip() == "(3, 13)":
            return candidate
    raise RuntimeSetupError(
        f"Python {PYTHON_VERSION} is needed to run the release on Colab's versions and none "
        f"was found (looked for $COLAB_PYTHON, python{PYTHON_VERSION} on PATH and "
        f"{pyenv_root}/versions/{PYTHON_VERSION}*): install it, e.g. `pyenv install "
        f"{PYTHON_VERSION}` or `uv python install {PYTHON_VERSION}`, or set COLAB_PYTHON")


def _uv(*args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "uv", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeSetupError(f"uv {' '.join(args[:2])} failed:\n{proc.stderr[-3000:]}")


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


#: uv's options for the install, part of the stamp (a venv built with others is rebuilt).
#: Byte-compiled once, here: kernels never write .pyc files where PYTHONDONTWRITEBYTECODE is set
#: (it is on the test machines), and each then compiled numpy, Numba, matplotlib and IPython
#: from source again (4.5 CPU-s to import them, 1.3 with the .pyc files).
INSTALL_OPTIONS = ("--compile-bytecode",)


def ensure_venv(venv: Path = VENV) -> Path:
    """The Colab venv, created or refreshed when ``tests/colab-versions.txt`` changed."""
    lock_path = venv.with_name(venv.name + ".lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder; other test workers wait, then reuse
        python = find_python()
        stamp = hashlib.sha256(VERSIONS.read_bytes() + python.encode()
                               + " ".join(INSTALL_OPTIONS).encode()).hexdigest()
        stamp_file = venv / ".colab-stamp"
        if stamp_file.is_file() and stamp_file.read_text() == stamp:
            return venv
        shutil.rmtree(venv, ignore_errors=True)
        _uv("venv", "--quiet", "--python", python, str(venv))
        _uv("pip", "install", "--quiet", *INSTALL_OPTIONS, "--python",
            str(venv_python(venv)), "-r", str(VERSIONS))
        stamp_file.write_text(stamp)
    return venv


def build_student_distribution(out: Path) -> tuple[Path, Path]:
    """The student distribution (``out/student``) and its wheel (in ``out/wheel``), built as
    ``make publish`` builds them; their paths."""
    sys.path.insert(0, str(ROOT))  # run as a script: the instructor's packages, from here
    from autograder.publish import student_tree

    tree = student_tree.build(ROOT, out / "student")
    return tree, student_tree.build_wheel(tree, out / "wheel")


def site_packages(venv: Path) -> Path:
    (path,) = (venv / "lib").glob("python3.*/site-packages")
    return path


def runtime(base: Path, target: Path) -> Path:
    """A fresh runtime at ``target`` that sees ``base``'s packages; returns its python."""
    proc = subprocess.run([str(venv_python(base)), "-m", "venv", "--without-pip", str(target)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeSetupError(f"could not create a runtime at {target}:\n{proc.stderr}")
    (site_packages(target) / "_colab_preinstalled.pth").write_text(
        f"{site_packages(base)}\n")
    return venv_python(target)


def kernel_manager(python: Path, folder: Path):  # -> jupyter_client.KernelManager
    """A kernel manager (nbclient's ``km``) whose kernel runs ``python``."""
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    spec = folder / "kernels" / "colab-runtime"
    spec.mkdir(parents=True, exist_ok=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Colab stand-in", "language": "python"}))
    specs = KernelSpecManager(kernel_dirs=[str(folder / "kernels")], ensure_native_kernel=False)
    return KernelManager(kernel_name="colab-runtime", kernel_spec_manager=specs)


def kernel_env(**extra: str) -> dict[str, str]:
    """This process's environment without what would leak the repository or the test's
    own choices into a student's kernel."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH", "NUMBA_ENABLE_CUDASIM",
                        "COLAB_RELEASE_TAG", "PYTHONHOME")}
    env["MPLBACKEND"] = "Agg"
    toolkit = cuda_toolkit()
    if toolkit is not None:
        env["CUDA_HOME"] = str(toolkit)
    env.update(extra)
    return env


def cuda_toolkit(venv: Path = VENV) -> Path | None:
    """The stand-in for Colab's ``/usr/local/cuda``: the folder of the NVRTC wheel in the Colab
    venv (``lib/libnvrtc.so.12`` under it), or None before the venv exists."""
    try:
        folder = site_packages(venv) / "nvidia" / "cuda_nvrtc"
    except ValueError:  # no venv (yet)
        return None
    return folder if (folder / "lib").is_dir() else None


if __name__ == "__main__":
    try:
        print(venv_python(ensure_venv()))
    except RuntimeSetupError as exc:
        raise SystemExit(str(exc)) from None
