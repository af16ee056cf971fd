"""The similarity report (autograder/similarity/, docs/similarity.md): what a copier changes
reads the same, different work does not, and on the similarity sample class every copier is
flagged against the student or solution they copied and no honest student is flagged."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from autograder.similarity import command, cuda_code, python_code
from autograder.similarity.summary import ALL

ROOT = Path(__file__).resolve().parents[1]

NAIVE = '''
@cuda.jit
def gemm_naive(A, B, C):
    """doc"""
    col, row = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]  # the dot product
        C[row, col] = acc
'''
NAIVE_COPIED = '''
@cuda.jit
def gemm_naive(X, Y, Z):
    N = Y.shape[1]
    c, r = cuda.grid(2)
    rows, depth = X.shape
    print("debug", r, c)
    if r < rows and c < N:
        total = 0.0
        if False:
            total = 1
        i = 0
        while i < depth:
            total += X[r, i] * Y[i, c]
            i += 1
        Z[r, c] = total
    return
    print("never")
'''
TILED_C = r'''
extern "C" __global__ void gemm_tiled(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        As[ty][tx] = (row < M && t * TILE + tx < K) ? A[row * K + t * TILE + tx] : 0.0f;
        Bs[ty][tx] = (t * TILE + ty < K && col < N) ? B[(t * TILE + ty) * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}
'''
TILED_C_COPIED = r'''
#define TS TILE
extern "C" __global__ void gemm_tiled(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    /* shared tiles */
    __shared__ float sb[TS][TS];
    __shared__ float sa[TS][TS];
    int y = threadIdx.y;
    int x = threadIdx.x;
    int c = blockIdx.x * TS + x;
    int r = blockIdx.y * TS + y;
    float s = 0;
    int t = 0;
    while (t < (K + TS - 1) / TS) {
        if (r < M && t * TS + x < K) sa[y][x] = A[r * K + t * TS + x];
        else sa[y][x] = 0.0;
        if (t * TS + y < K && c < N) { sb[y][x] = B[(t * TS + y) * N + c]; }
        else { sb[y][x] = 0; }
        __syncthreads();
        if (0) { printf("never\n"); }
#pragma unroll
        for (int k = 0; k < TS; k++) { s += sa[y][k] * sb[k][x]; printf("%f\n", s); }
        __syncthreads();
        t += 1;
    }
    if (r < M && c < N) C[r * N + c] = s;
}
'''


def _py(source: str) -> list[str]:
    parsed = python_code.tokens(source)
    assert parsed is not None
    return [t for t, _ in parsed[0]]


def _c(source: str) -> list[str]:
    return [t for t, _ in cuda_code.tokens(source)]


def test_what_a_python_copier_changes_reads_the_same() -> None:
    assert _py(NAIVE) == _py(NAIVE_COPIED)
    ternary = "def f(a):\n    x = 1 if a else 2\n    return x\n"
    branches = "def f(b):\n    if b:\n        y = 1\n    else:\n        y = 2\n    return y\n"
    assert _py(ternary) == _py(branches)
    returns = "def f(a):\n    return 1 if a else 2\n"
    early = "def f(b):\n    if b:\n        return 1\n    return 2\n"
    both = "def f(b):\n    if b:\n        return 1\n    else:\n        return 2\n"
    assert _py(returns) == _py(early) == _py(both)


def test_different_python_reads_different() -> None:
    # every name the student chose is one token: structure tells answers apart, not names
    other = NAIVE.replace("acc += A[row, k] * B[k, col]", "acc = acc + A[row, k] * B[k, col]")
    assert _py(NAIVE) != _py(other)
    assert _py(NAIVE) != _py(NAIVE.replace("float32(0.0)", "float32(1.0)"))
    assert python_code.tokens("def broken(:\n") is None


def test_what_a_cuda_copier_changes_reads_the_same() -> None:
    assert _c(TILED_C) == _c(TILED_C_COPIED)


def test_different_cuda_reads_different() -> None:
    assert _c(TILED_C) != _c(TILED_C.replace("Bs[k][tx]", "Bs[k][tx + 1]"))
    assert _c(TILED_C) != _c(TILED_C.replace("__syncthreads();\n    }", "}"))


@pytest.fixture(scope="module")
def similarity_class(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from sample_class.similarity.__main__ import stage_course

    course = tmp_path_factory.mktemp("similarity") / "course"
    stage_course(course)
    (course / "grades.csv").write_text("student,score\nsomeone,3\n")
    assert command.main(course) == 0
    return course


def test_every_copier_is_flagged_and_no_honest_student(similarity_class: Path) -> None:
    from sample_class.similarity.__main__ import groups

    found = groups(similarity_class)
    assert len(found["copied"]) == 6 and len(found["honest"]) >= 80
    missed = [r for r in found["copied"] if not r[4]]
    wrongly = [r for r in found["honest"] if r[4]]
    assert not missed, missed
    assert not wrongly, wrongly
    # with a margin: the strongest honest pair well under the threshold, the weakest copy over
    from autograder.similarity.scoring import COMBINED_THRESHOLD, NOTEBOOK_THRESHOLD

    assert max(r[2] for r in found["honest"]) <= NOTEBOOK_THRESHOLD - 0.1
    assert min(r[2] for r in found["copied"]) >= NOTEBOOK_THRESHOLD + 0.15
    assert max(r[3] for r in found["honest"]) <= COMBINED_THRESHOLD - 0.12


def test_the_csv_names_the_solution_and_never_touches_grades(similarity_class: Path) -> None:
    with (similarity_class / "similarity.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert {"notebook", "student_a", "student_b", "score", "flagged"} <= set(rows[0])
    assert all(0.0 <= float(r["score"]) <= 1.0 for r in rows)
    flagged = {(r["student_a"], r["student_b"]) for r in rows
               if r["notebook"] == ALL and r["flagged"] == "true"}
    assert ("copier_jade_copies_solution", "solution") in flagged
    assert ("copier_iris_ko_copies_dara", "honest_dara") in flagged  # Korean vs English
    fox = [r for r in rows if r["student_a"] == "copier_fox_one_kernel"
           and r["student_b"] == "honest_bodhi" and r["notebook"] == ALL]
    assert "gemm_tiled_cuda" in fox[0]["reason"]  # one kernel copied, and which one
    assert (similarity_class / "grades.csv").read_text() == "student,score\nsomeone,3\n"
    from autograder.results.table import similarity_note

    assert "6 pair(s) flagged" in (similarity_note(similarity_class) or "")
    assert similarity_note(similarity_class.parent) is None  # no report: no line


def test_the_report_marks_the_matching_lines(similarity_class: Path) -> None:
    page = (similarity_class / "similarity.html").read_text()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "<script" not in page.lower()
    assert page.count("<mark>") > 50
    assert "copier_fox_one_kernel and honest_bodhi" in page


def test_nothing_to_compare_says_so_and_leaves_no_report(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "submitted" / "someone" / "week4").mkdir(parents=True)
    assert command.main(tmp_path) == 1  # no release to tell notebooks apart
    assert "make release" in capsys.readouterr().err
    (tmp_path / "submitted" / "someone" / "week4").rmdir()
    (tmp_path / "submitted" / "someone").rmdir()
    (tmp_path / "submitted").rmdir()
    for name in ("release", "release-ko", "source"):
        (tmp_path / name).symlink_to(ROOT / name)
    (tmp_path / "similarity.csv").write_text("stale")
    assert command.main(tmp_path) == 1
    assert "no " in capsys.readouterr().err
    assert not (tmp_path / "similarity.csv").exists()
    (tmp_path / "submitted" / "empty" / "week4").mkdir(parents=True)
    (tmp_path / "submitted" / "empty" / "week4" / "02_naive_gemm.ipynb").write_text(
        json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    assert command.main(tmp_path) == 1
    assert "nothing to compare" in capsys.readouterr().err


def test_the_index_finds_every_pair_that_brute_force_finds(similarity_class: Path) -> None:
    """The pairs come from the postings of rare fingerprints (fast for 300 students): every
    pair that comparing all pairs by brute force scores at the floor or more is found, with
    the same shared weight."""
    from itertools import combinations

    from autograder.similarity import scoring

    indexes, _ = command.build_indexes(similarity_class, similarity_class / "submitted")
    checked = 0
    for index in indexes:
        weight = scoring.weights(index)
        found = scoring.notebook_pairs(index)
        total = scoring.totals(index)
        damping = scoring._damping(index)
        for a, b in combinations(sorted(index.documents), 2):
            docs = index.documents
            shared = sum(weight.get(h, 0.0) for h in docs[a].prints.keys() & docs[b].prints)
            whole = shared / (min(total[a], total[b]) + damping)
            if whole >= scoring.FLOOR:
                assert (a, b) in found, (index.notebook, a, b, whole)
                assert found[a, b].shared == pytest.approx(shared)
                checked += 1
    assert checked >= 20


def test_hostile_files_cost_nothing_but_their_own_row(tmp_path: Path) -> None:
    """Garbage, cells that are not a list, code nested past Python's stack and a student who
    called their folder ``solution``: the report is still written, and the solution is still
    the instructor's."""
    from types import SimpleNamespace

    from autograder.runner.names import ASSIGNMENT
    from sample_class import build_notebook
    from sample_class.similarity.students import copier_jade_copies_solution as jade

    for name in ("release", "release-ko", "source"):
        (tmp_path / name).symlink_to(ROOT / name)
    notebook = "03c_tiled_gemm_cuda"
    deep = "GEMM_TILED_CUDA = " + "(" * 3000 + "1" + ")" * 3000
    formula = '=HYPERLINK("x")'  # a folder name a spreadsheet would run
    for sid, answers in (("solution", jade.ANSWERS[notebook]), ("deep", {"gemm_tiled_cuda": deep}),
                         ("jade", jade.ANSWERS[notebook]), (formula, jade.ANSWERS[notebook])):
        folder = tmp_path / "submitted" / sid / ASSIGNMENT
        folder.mkdir(parents=True)
        nb = build_notebook(ROOT, notebook, SimpleNamespace(BASE="release",
                                                            ANSWERS={notebook: answers}))
        (folder / f"{notebook}.ipynb").write_text(json.dumps(nb))
    odd = tmp_path / "submitted" / "odd" / ASSIGNMENT
    odd.mkdir(parents=True)
    (odd / f"{notebook}.ipynb").write_text(json.dumps({"cells": 7, "metadata": {}}))
    (odd / "02c_naive_gemm_cuda.ipynb").write_text("not json {")
    assert command.main(tmp_path) == 0
    with (tmp_path / "similarity.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    names = {r["student_a"] for r in rows} | {r["student_b"] for r in rows}
    assert command.STUDENT_CALLED_SOLUTION in names and "solution" in names
    assert "'" + formula in names and formula not in names
    assert any(r["student_a"] == "jade" and r["student_b"] == "solution"
               and r["flagged"] == "true" for r in rows)
