"""The student's path, on Colab's versions: the release folder alone runs, and any release
notebook opened first and alone on Colab gets past its setup cell.

Both run in a stand-in for a Colab runtime (scripts/build/colab_runtime.py): Python 3.13 with
Colab's numba 0.61.2, numba-cuda 0.22.2, NumPy 2.1.3, matplotlib 3.10.0 and ipywidgets 7.7.1
(tests/colab-versions.txt), the course package installed as a student installs it: from the
student distribution's wheel (what ``make publish`` writes: ``course`` alone, no grader, no
sample class), never from this repository, and kernels on Numba's simulator.

(a) Every release notebook, answer cells filled with the course's solutions, runs top to
    bottom in a copy of the release folder away from the repository. This is the suite's
    one full run of the notebooks (the sample class runs them again through nbgrader, on the
    pinned versions of constraints.txt).
(b) Every release notebook, as the student distribution holds it, alone in an empty folder,
    in a fresh runtime without ``course`` and with Colab's environment variable set, runs its
    setup cell: the cell installs the
    course package (from a local ``file://`` wheel instead of the repository's git URL: no
    network), upgrades none of Colab's packages, and says what the kernels run on.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
import types
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

import sample_class as samples
from course.runtime import setup_cell

ROOT = Path(__file__).resolve().parents[1]
RELEASE = sorted((ROOT / "release" / "week4").glob("*.ipynb"))
sys.path.insert(0, str(ROOT / "scripts" / "build"))
sys.path.insert(0, str(ROOT / "scripts" / "gpu"))
import colab_runtime  # noqa: E402
from korean_outputs import english_runs  # noqa: E402
from run_notebooks import problems  # noqa: E402  (the runner the GPU session uses)

pytestmark = pytest.mark.slow
#: what Colab ships and installing the course package must leave alone.
COLAB_PINS = {"numba": "0.61.2", "numba-cuda": "0.22.2", "numpy": "2.1.3",
              "matplotlib": "3.10.0", "ipywidgets": "7.7.1"}


@pytest.fixture(scope="session")
def colab_venv() -> Path:
    try:
        return colab_runtime.ensure_venv()
    except colab_runtime.RuntimeSetupError as exc:
        pytest.fail(str(exc))  # a missing Python 3.13 must not pass silently


@pytest.fixture(scope="session")
def student_dist(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The student distribution, as ``make publish`` writes it, and its wheel: what a student
    gets (the course package alone, the releases)."""
    return colab_runtime.build_student_distribution(tmp_path_factory.mktemp("publish"))


@pytest.fixture(scope="session")
def course_wheel(student_dist: tuple[Path, Path]) -> Path:
    return student_dist[1]


@pytest.fixture(scope="session")
def student_runtime(colab_venv: Path, course_wheel: Path,
                    tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A runtime with the course package installed from the wheel, as a student's is."""
    import subprocess

    python = colab_runtime.runtime(colab_venv, tmp_path_factory.mktemp("runtime") / "venv")
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-index",
                           str(course_wheel)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return python


@pytest.fixture(scope="session")
def release_with_solutions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The release folder, copied away from the repository, answer cells filled in."""
    folder = tmp_path_factory.mktemp("student") / "week4"
    folder.mkdir()
    solved = types.SimpleNamespace(BASE="solutions")
    for path in RELEASE:
        nb = samples.build_notebook(ROOT, path.stem, solved)
        (folder / path.name).write_text(json.dumps(nb, indent=1))
    return folder


def run(nb: nbformat.NotebookNode, python: Path, folder: Path, **env: str) -> float:
    """Execute ``nb`` in ``folder`` on a kernel of ``python``; return the seconds it took.

    The kernel's temporary files go to a folder of the test's own: it is killed at the end
    (``now=True``), so its exit handlers never run, and the CUDA C track's scratch folder
    (``course.gemm.cudac.cpu``, removed at exit) was left in /tmp by every run."""
    started = time.monotonic()
    scratch = folder.parent / "kernel-tmp"
    scratch.mkdir(exist_ok=True)
    km = colab_runtime.kernel_manager(python, folder.parent)
    client = NotebookClient(nb, km=km, timeout=600, allow_errors=True,
                            resources={"metadata": {"path": str(folder)}})
    try:
        client.execute(env=colab_runtime.kernel_env(**{"TMPDIR": str(scratch), **env}))
    finally:  # nbclient leaves a kernel manager it did not create running
        if km.has_kernel:
            km.shutdown_kernel(now=True)
    return time.monotonic() - started


def text_of(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


@pytest.mark.parametrize("path", RELEASE, ids=lambda p: p.name)
def test_release_notebook_runs_with_solutions_on_colabs_versions(
        path: Path, release_with_solutions: Path, student_runtime: Path) -> None:
    nb = nbformat.read(release_with_solutions / path.name, as_version=4)
    assert not any("raise NotImplementedError()" in c.source for c in nb.cells
                   if c.metadata.get("nbgrader", {}).get("solution")), "answers not filled in"
    seconds = run(nb, student_runtime, release_with_solutions)
    found = problems(nb)
    assert not found, f"{path.name}: " + "; ".join(found)
    setup = text_of(next(c for c in nb.cells if c.cell_type == "code"))
    assert "Numba's CUDA simulator" in setup and "numba-cuda 0.22.2" in setup, setup
    print(f"{path.name}: {seconds:.1f} s")


PROBE = f"""\
import json
from importlib import metadata, util
import course
print(json.dumps({{"course": course.__file__, "versions": {{
    d: metadata.version(d) for d in {sorted(COLAB_PINS)!r}}},
    "instructor": [m for m in ("autograder", "sample_class") if util.find_spec(m)]}}))
"""


#: Every release notebook starts with the same setup cell (tests/test_release_files.py checks
#: each one against ``setup_cell.source()``), so running it on a fresh runtime for two of them
#: covers all: the first a student opens, and the last of the CUDA C track. The Korean release
#: has the same cells (tests/test_translation.py), so the same two of it run too (about 15 s
#: each): Korean prose, notebook metadata ``course.language = "ko"``.
RELEASE_KO = sorted((ROOT / "release-ko" / "week4").glob("*.ipynb"))
SETUP_RUNS = [p for p in RELEASE + RELEASE_KO if p.stem in ("00_setup", "03c_tiled_gemm_cuda")]


def test_the_colab_stand_in_is_byte_compiled(colab_venv: Path) -> None:
    """Its kernels never write a .pyc (PYTHONDONTWRITEBYTECODE is set on the test machines):
    without the ones written at build time, every kernel compiled these from source (about
    3 CPU-s each; this file's runs took twice as long)."""
    import subprocess

    python = colab_runtime.venv_python(colab_venv)
    tag = subprocess.run(
        [str(python), "-S", "-c", "import sys; print(sys.implementation.cache_tag)"],
        capture_output=True, text=True, check=True).stdout.strip()
    site = colab_runtime.site_packages(colab_venv)
    for package in ("numpy", "numba", "matplotlib", "IPython", "ipykernel", "zmq"):
        assert (site / package / "__pycache__" / f"__init__.{tag}.pyc").is_file(), package


def test_setup_runs_cover_both_ends_of_both_releases() -> None:
    assert [(p.parent.parent.name, p.stem) for p in SETUP_RUNS] == [
        ("release", "00_setup"), ("release", "03c_tiled_gemm_cuda"),
        ("release-ko", "00_setup"), ("release-ko", "03c_tiled_gemm_cuda")]


@pytest.mark.parametrize("path", SETUP_RUNS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_release_notebook_opened_first_and_alone_on_colab_gets_past_its_setup_cell(
        path: Path, colab_venv: Path, student_dist: tuple[Path, Path], tmp_path: Path) -> None:
    tree, course_wheel = student_dist
    path = tree / path.relative_to(ROOT)  # the notebook as the student repository holds it
    nb = nbformat.read(path, as_version=4)
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    assert nb.cells[first].source == setup_cell.source()
    # The same cell, installing from the local wheel instead of the repository's git URL.
    nb.cells = nb.cells[:first + 1] + [nbformat.v4.new_code_cell(PROBE)]
    nb.cells[first].source = setup_cell.source(requirement=course_wheel.as_uri())
    folder = tmp_path / "content"  # alone: no other notebook, no repository
    folder.mkdir()
    shutil.copy(path, folder / path.name)
    python = colab_runtime.runtime(colab_venv, tmp_path / "runtime")
    # nbclient's kernel cannot ask a front end for its notebook, as Colab's can: the notebook's
    # language is handed over the way the grader hands it, through COURSE_LANG.
    language = nb.metadata["course"]["language"]
    seconds = run(nb, python, folder, COLAB_RELEASE_TAG="release-test", COURSE_LANG=language)
    errors = [f"{o.ename}: {o.evalue}" for c in nb.cells for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert not errors, f"{path.name}: {errors}"
    setup = text_of(nb.cells[first])
    assert setup.strip(), f"{path.name}: the setup cell printed nothing"
    assert setup.startswith(f"⏳ pip install {course_wheel.as_uri()}\n"), setup
    if language == "en":  # the Korean words are the catalog's
        assert "Installed the course package into this Colab runtime." in setup, setup
        assert "Numba's CUDA simulator" in setup and "Running on Google Colab." in setup, setup
    else:  # every line of it Korean, from the install on (tests/test_korean_outputs.py)
        assert "course 패키지를 이 Colab 런타임에 설치했다." in setup, setup
        assert not [line for line in setup.splitlines() if english_runs(line)], setup
    probe = json.loads(text_of(nb.cells[-1]))
    assert probe["course"].startswith(str(tmp_path / "runtime")), "course is not the wheel's"
    assert probe["versions"] == COLAB_PINS, "installing the course package changed Colab's"
    assert probe["instructor"] == [], "the student's runtime has the instructor's packages"
    print(f"{path.name}: setup cell on a fresh runtime in {seconds:.1f} s")
