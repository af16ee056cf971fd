"""What a student reads on a first Run All, before writing anything: short errors, theirs.

Every release notebook, both languages, answers unfilled, runs top to bottom on the simulator
(errors allowed, as a student's Run All goes on in JupyterLab only cell by cell: nbclient's
``allow_errors``), and every error output it shows:

* is at most :data:`MAX_LINES` lines (IPython's traceback through the course's checks was
  30–72 lines before course/runtime/tracebacks.py);
* shows none of the course's internals: no ``course/`` or ``autograder/`` file, no frame of a
  ``course.…`` module;
* names the answer to write: one of the notebook's answers that still holds its placeholder;
* in the Korean release, is Korean (it holds Hangul).

About a minute on 2 cores (20 notebooks, two kernels at a time); ``slow`` like the other
notebook runs.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
RELEASES = {"release": "en", "release-ko": "ko"}
NOTEBOOKS = [(folder, path.name) for folder in RELEASES
             for path in sorted((ROOT / folder / "week4").glob("*.ipynb"))]
MAX_LINES = 12
ANSI = re.compile(r"\x1b\[[0-9;]*m")
INTERNALS = re.compile(r"(?:^|[\s/\"'(])(?:course|autograder)/[\w/]*\.py|"
                       r"\bcourse\.(?:checks|gemm|trust|runtime|perf|notebooks|_isolated)\.\w+|"
                       r"site-packages|Traceback \(most recent call last\)")

pytestmark = pytest.mark.slow


def unfilled_answers(nb: nbformat.NotebookNode) -> set[str]:
    """The names the notebook's answer cells define while they still hold the placeholder."""
    names: set[str] = set()
    for cell in nb.cells:
        if cell.cell_type != "code" or not cell.metadata.get("nbgrader", {}).get("solution"):
            continue
        if "NotImplementedError" not in cell.source:
            continue
        for node in ast.parse(cell.source).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def error_texts(nb: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """(cell index, what the student sees) of every error output, colours removed."""
    return [(i, ANSI.sub("", "\n".join(out.get("traceback", [])))) for i, cell in
            enumerate(nb.cells) if cell.cell_type == "code" for out in cell.get("outputs", [])
            if out.output_type == "error"]


def _execute(path: Path, language: str) -> nbformat.NotebookNode:
    nb = nbformat.read(path, as_version=4)
    env = dict(os.environ, COURSE_LANG=language, MPLBACKEND="agg")
    for name in ("NBGRADER_EXECUTION", "COURSE_TRACEBACK"):
        env.pop(name, None)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute(env=env)
    return nb


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Any]:
    """Every release notebook, unfilled, run top to bottom in a copy of its release folder."""
    jobs = []
    for folder, language in RELEASES.items():
        copy = tmp_path_factory.mktemp(folder) / "week4"
        shutil.copytree(ROOT / folder / "week4", copy)
        jobs += [((folder, p.name), p, language) for p in sorted(copy.glob("*.ipynb"))]
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = pool.map(lambda job: (job[0], _execute(job[1], job[2])), jobs)
        return dict(runs)


def test_every_release_notebook_is_run() -> None:
    assert len(NOTEBOOKS) == 20, NOTEBOOKS


@pytest.mark.parametrize(("folder", "name"), NOTEBOOKS, ids=lambda v: str(v))
def test_a_first_run_all_shows_short_errors_that_name_the_answer(
        folder: str, name: str, executed: dict[tuple[str, str], Any]) -> None:
    nb = executed[(folder, name)]
    answers = unfilled_answers(nb)
    problems = []
    for cell, text in error_texts(nb):
        lines = text.splitlines()
        where = f"{folder}/{name} cell {cell}"
        if len(lines) > MAX_LINES:
            problems.append(f"{where}: {len(lines)} lines:\n{text}")
        if INTERNALS.search(text):
            problems.append(f"{where}: shows the course's internals:\n{text}")
        if not any(re.search(rf"(?<!\w){re.escape(a)}(?![A-Za-z0-9_])", text, re.ASCII)
                   for a in answers):
            problems.append(f"{where}: names none of the answers {sorted(answers)}:\n{text}")
        if RELEASES[folder] == "ko" and not re.search("[가-힣]", text):
            problems.append(f"{where}: not Korean:\n{text}")
    assert not problems, "\n\n".join(problems)


def test_the_unfilled_notebooks_do_fail_where_answers_are_missing(
        executed: dict[tuple[str, str], Any]) -> None:
    """The run above would pass with no errors at all: the notebooks with answers must fail."""
    failing = {key for key, nb in executed.items() if error_texts(nb)}
    for folder in RELEASES:
        for stem in ("01_arithmetic_intensity", "02_naive_gemm", "02c_naive_gemm_cuda",
                     "03_tiled_gemm", "03c_tiled_gemm_cuda", "05_roofline", "06_tile_sweep",
                     "07_bonus_register_tiling"):
            assert (folder, f"{stem}.ipynb") in failing, (folder, stem)


#: answers with a student's usual slips, pasted into a release notebook's answer cell: what
#: the student must then see of their own line.
SLIPS = [
    ("05_roofline.ipynb", "critical_ai",
     'def critical_ai(peak_gflops, bandwidth_gbs):\n    """Ridge point."""\n'
     "    return peak_gflops / bandwith_gbs\n",
     # the code policy, which checks what a test cell's definitions use, finds it first
     ["DisallowedCodeError: `critical_ai` (line 3) uses `bandwith_gbs`"]),
    ("05_roofline.ipynb", "critical_ai",
     'def critical_ai(peak_gflops, bandwidth_gbs):\n    """Ridge point."""\n'
     "    ceilings = [peak_gflops, bandwidth_gbs]\n    return ceilings[0] / ceilings[2]\n",
     ["return ceilings[0] / ceilings[2]", "IndexError: list index out of range"]),
    ("02_naive_gemm.ipynb", "gemm_naive",  # no bounds test: the check names the cause
     "from numba import cuda, float32\n@cuda.jit\ndef gemm_naive(A, B, C):\n"
     "    col, row = cuda.grid(2)\n    acc = float32(0.0)\n"
     "    for k in range(A.shape[1]):\n        acc += A[row, k] * B[k, col]\n"
     "    C[row, col] = acc\n",
     ["Error: gemm_naive"]),  # GemmCheckError or its ShapeFailedError
]


@pytest.mark.parametrize(("name", "answer", "code", "expected"), SLIPS,
                         ids=[f"{s[1]}-{s[3][-1].split(':')[0]}" for s in SLIPS])
def test_an_error_in_the_students_own_answer_shows_their_line(
        name: str, answer: str, code: str, expected: list[str], tmp_path: Path) -> None:
    path = tmp_path / name
    nb = nbformat.read(ROOT / "release" / "week4" / name, as_version=4)
    [cell] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == answer]
    cell.source = code
    nbformat.write(nb, path)
    texts = [text for _i, text in error_texts(_execute(path, "en"))
             if all(e in text for e in expected)]
    assert texts, f"no error shows {expected}"
    for text in texts:
        assert len(text.splitlines()) <= 6 and not INTERNALS.search(text), text


#: catalogue mutants (tests/mistake_catalogue.py) pasted into the release notebook, as a student
#: would write them: (notebook, answer cell, mutant); the answer cell of a CUDA C notebook holds
#: the kernel in its string.
PASTED = [("02_naive_gemm.ipynb", "gemm_naive", "naive_xy_swapped"),
          ("02c_naive_gemm_cuda.ipynb", "gemm_naive_cuda", "cuda_naive_xy_swapped")]


@pytest.mark.parametrize(("name", "answer", "mutant"), PASTED, ids=[p[2] for p in PASTED])
def test_a_catalogue_mistake_in_the_notebook_is_told_its_cause_there(
        name: str, answer: str, mutant: str, tmp_path: Path) -> None:
    """The issue's first example, both tracks: ``row, col = cuda.grid(2)`` (x taken as the
    row) pasted into the answer cell. Run top to bottom as a student would, the notebook's
    try-it cell and its test cell say it is the mapping, and no message names a cause the
    kernel does not have; each is short and shows none of the course's internals."""
    import mistake_catalogue as cat

    wrong = {m.name: m for m in cat.MUTANTS}[mutant]
    source = wrong.source()
    if wrong.track == "CUDA C":
        source = f'GEMM_NAIVE_CUDA = r"""{source}"""\n'
    path = tmp_path / name
    nb = nbformat.read(ROOT / "release" / "week4" / name, as_version=4)
    [cell] = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == answer]
    cell.source = source
    nbformat.write(nb, path)
    texts = [text for _i, text in error_texts(_execute(path, "en"))
             if "NotImplementedError" not in text and "not written yet" not in text]
    about_it = [t for t in texts if cat.named_causes(t)]
    assert about_it, f"no error names a cause: {texts}"
    for text in about_it:
        assert cat.named_causes(text) <= wrong.causes | wrong.alike, text
        assert wrong.causes <= cat.named_causes(text), text
    for text in texts:
        assert len(text.splitlines()) <= 12 and not INTERNALS.search(text), text
