"""Every line a Korean student reads is Korean: the Korean release's outputs hold no English prose.

The notebooks' code cells are the same in both releases, so whatever a cell prints must come
from the message catalog (course/runtime/notes.py, course/checks/success_lines.py and the course's
functions), never from an English string in the cell. tests/korean_outputs.py runs the Korean
release with the solutions on the simulator, each track in its own folder, and names every
line of output (streams, text/plain and text/html results, widget labels) that holds a run of
three or more English words outside code spans and the glossary's English terms.

`make test` runs a slice (:data:`SLICE`: the setup notebook, the ✓ lines of notebooks 01 and
05, the CUDA C track's compiler and experiment table) and notebook 04 as the grader runs it
(its measuring cells say they are skipped): about 15 CPU-seconds. `make test-ko`
(``COURSE_KO_OUTPUTS=all``) runs every notebook of both tracks (about 35 CPU-seconds).
"""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from korean_outputs import (
    ALLOWED,
    TRACK_RUNS,
    english_prose,
    english_runs,
    html_text,
    missing_glyphs,
    run_notebook,
    solved_folder,
    visible_text,
)

#: (track, notebook) pairs `make test` runs; `make test-ko` runs all of TRACK_RUNS.
SLICE = (("numba", "00_setup"), ("numba", "01_arithmetic_intensity"), ("numba", "05_roofline"),
         ("cuda", "02c_naive_gemm_cuda"), ("cuda", "04_writeup_experiment"))
ALL = tuple((track, stem) for track, stems in TRACK_RUNS.items() for stem in stems)
RUNS = ALL if os.environ.get("COURSE_KO_OUTPUTS") == "all" else SLICE


# ------------------------------------------------------------------- the detector itself


@pytest.mark.parametrize("line", [
    "✓ ai_gemm_naive: about 0.25 FLOP/byte in FP32, whatever the size",
    "Skipped while grading.",
    "1024×1024×1024: naive kernel reads 2,147,483,648 elements of A and B (8.59 GB in FP32)",
    "GPU 없음: no NVIDIA driver was found on this machine.",
    "largest difference from NumPy: 2.3e-07",
])
def test_english_prose_is_found(line: str) -> None:
    assert english_runs(line), line


@pytest.mark.parametrize("line", [
    "✓ ai_gemm_naive: 크기와 상관없이 FP32에서 약 0.25 FLOP/byte",
    "커널은 Numba의 CUDA 시뮬레이터에서 실행된다: 결과는 정확하다.",
    "타일 16: SM당 블록 4개, occupancy 100%",
    "tiled (tile 32)  CPU runner        —        —          0        2.5054",
    "`check_ai_matmul(ai_matmul, [(256, 256, 256)])`을 다시 실행하자",
    "Roofline 그래프는 Tesla T4의 데이터시트 값을 쓴다 (Compute-bound, shared memory)",
    "GemmReport(kernel='gemm_naive', shapes=((1, 1, 1),), backend='simulator')",
    "[1. 1. 1. 1. 1. 1. 1. 1.]",
])
def test_korean_lines_code_and_the_glossarys_terms_pass(line: str) -> None:
    assert not english_runs(line), english_runs(line)


def test_the_allowed_terms_are_few_and_named_in_the_glossary_or_names() -> None:
    glossary = (Path(__file__).resolve().parents[1] / "docs" / "glossary-ko.md").read_text(
        encoding="utf-8").lower()
    terms = [t for t in ALLOWED if t[0].islower() and " " in t]  # the glossary's phrases
    assert len(ALLOWED) < 40
    assert all(t in glossary for t in terms), [t for t in terms if t not in glossary]


def test_every_kind_of_output_is_read() -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="이것은 한국어다.\n"),
        nbformat.v4.new_output("execute_result", data={
            "text/plain": "<table object>",
            "text/html": "<style>p {color: red}</style><table><tr><td>Kernels cannot run "
                         "here</td></tr></table>"}),
        nbformat.v4.new_output("display_data", data={
            "text/plain": "<Figure size 640x480 with 1 Axes>", "image/png": "iVBOR"}),
        nbformat.v4.new_output("error", ename="AssertionError",
                               evalue="the kernel wrote past the end", traceback=[]),
    ]
    nb.cells = [cell]
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {
        "m1": {"state": {"description": "Run the sweep now"}},
        "m2": {"state": {"_options_labels": ["타일 8", "타일 16"], "value": "타일 8"}}}}}
    found = english_prose(nb)
    assert [f.split(" (")[0].split(":")[0] for f in found] == ["cell 0", "cell 0", "widgets"], found
    assert visible_text(cell.outputs[2]) == ""  # an image's text/plain is not shown
    assert html_text("<b>a</b>&amp;<style>x</style>b") == "a&b"


def test_a_figure_without_the_korean_font_is_found() -> None:
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [nbformat.v4.new_output(
        "stream", name="stderr",
        text="UserWarning: Glyph 44536 (\\N{HANGUL SYLLABLE GEU}) missing from font(s) "
             "DejaVu Sans.\n")]
    nb.cells = [cell, nbformat.v4.new_code_cell("")]
    assert [f.split(":")[0] for f in missing_glyphs(nb)] == ["cell 0"]


# ------------------------------------------------------------------- the Korean release


@pytest.fixture(scope="module")
def tracks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each track's folder of the Korean release, solutions filled in."""
    return {track: solved_folder(tmp_path_factory.mktemp(track) / "week4", track)
            for track in sorted({track for track, _stem in RUNS})}


@pytest.mark.slow
@pytest.mark.parametrize(("track", "stem"), RUNS, ids=lambda x: str(x))
def test_a_korean_student_reads_no_english(track: str, stem: str,
                                           tracks: dict[str, Path]) -> None:
    found = run_notebook(tracks[track] / f"{stem}.ipynb")
    assert not found, f"{stem} ({track} track):\n" + "\n".join(found)


@pytest.mark.slow
def test_while_grading_a_korean_notebook_reads_no_english(tracks: dict[str, Path]) -> None:
    """Notebook 04 as ``nbgrader autograde`` runs it: its correctness, timing and CPU cells say
    they are skipped, in Korean (the feedback shows them)."""
    track = sorted(tracks)[0]
    found = run_notebook(tracks[track] / "04_writeup_experiment.ipynb", grading=True)
    assert not found, "\n".join(found)
