"""Tests for course.reuse: later notebooks rebuild kernels from an earlier notebook's cells."""

from __future__ import annotations

import json
import sys
import textwrap

import nbformat
import numpy as np
import pytest

from course.kernel_source import DisallowedCodeError
from course.launch import is_cuda_kernel, matmul, naive, tiled
from course.reuse import MissingAnswerError, definitions_from

sys.setswitchinterval(5e-4)  # simulator threads hand over faster

SETUP = "import numpy as np\nimport course\nfrom numba import cuda, float32\n"
NAIVE = textwrap.dedent("""
    @cuda.jit
    def gemm_naive(A, B, C):
        col, row = cuda.grid(2)
        if row < C.shape[0] and col < C.shape[1]:
            acc = float32(0.0)
            for k in range(A.shape[1]):
                acc += A[row, k] * B[k, col]
            C[row, col] = acc
""")
TILED = textwrap.dedent("""
    def make_gemm_tiled(tile):
        @cuda.jit
        def gemm_tiled(A, B, C):
            As = cuda.shared.array((tile, tile), float32)
            Bs = cuda.shared.array((tile, tile), float32)
            tx = cuda.threadIdx.x
            ty = cuda.threadIdx.y
            row = cuda.blockIdx.y * tile + ty
            col = cuda.blockIdx.x * tile + tx
            M, K = A.shape
            N = B.shape[1]
            acc = float32(0.0)
            for t in range((K + tile - 1) // tile):
                k = t * tile + tx
                As[ty, tx] = A[row, k] if row < M and k < K else 0.0
                k = t * tile + ty
                Bs[ty, tx] = B[k, col] if k < K and col < N else 0.0
                cuda.syncthreads()
                for i in range(tile):
                    acc += As[ty, i] * Bs[i, tx]
                cuda.syncthreads()
            if row < M and col < N:
                C[row, col] = acc
        return gemm_tiled
""")
DEMO = "C = np.zeros((4, 4), np.float32)\ngemm_naive[1, (16, 16)](C, C, C)\nprint(C)\n"


def write_notebook(path, *code_cells, markdown="# Week 4: tiled GEMM"):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell(markdown)] + [
        nbformat.v4.new_code_cell(src) for src in code_cells]
    nbformat.write(nb, str(path))
    return path


def operands(M, N, K, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, (M, K)).astype(np.float32),
            rng.uniform(-1, 1, (K, N)).astype(np.float32))


def test_definitions_from_returns_a_launchable_kernel(tmp_path):
    nb = write_notebook(tmp_path / "01_naive.ipynb", SETUP, NAIVE, DEMO)
    defs = definitions_from(nb, "gemm_naive")
    assert list(defs) == ["gemm_naive"]
    assert is_cuda_kernel(defs["gemm_naive"])
    A, B = operands(5, 3, 4)
    np.testing.assert_allclose(matmul(naive(defs["gemm_naive"]), A, B), A @ B,
                               rtol=1e-5, atol=1e-6)


def test_definitions_from_several_names_and_a_string_path(tmp_path):
    nb = write_notebook(tmp_path / "02_tiled.ipynb", SETUP, NAIVE, DEMO, TILED)
    defs = definitions_from(str(nb), "gemm_naive", "make_gemm_tiled")
    assert set(defs) == {"gemm_naive", "make_gemm_tiled"}
    A, B = operands(6, 5, 7)
    np.testing.assert_allclose(matmul(tiled(defs["make_gemm_tiled"], 4), A, B), A @ B,
                               rtol=1e-5, atol=1e-6)


def test_the_notebooks_last_definition_is_used(tmp_path):
    wrong = NAIVE.replace("acc += A[row, k] * B[k, col]", "acc += A[row, k]")
    nb = write_notebook(tmp_path / "nb.ipynb", SETUP, NAIVE, wrong)
    k = definitions_from(nb, "gemm_naive")["gemm_naive"]
    A, B = operands(3, 3, 2)
    assert not np.allclose(matmul(naive(k), A, B), A @ B)  # the reuse is faithful


def test_source_given_as_one_string_is_read_too(tmp_path):
    # nbformat writes a cell's source as a list of lines; one string is valid too.
    path = tmp_path / "string.ipynb"
    write_notebook(path, SETUP, NAIVE)
    data = json.loads(path.read_text())
    assert any(isinstance(c["source"], list) for c in data["cells"])
    for c in data["cells"]:
        c["source"] = "".join(c["source"])
    path.write_text(json.dumps(data))
    assert is_cuda_kernel(definitions_from(path, "gemm_naive")["gemm_naive"])


def test_missing_notebook(tmp_path):
    with pytest.raises(MissingAnswerError) as info:
        definitions_from(tmp_path / "01_naive.ipynb", "gemm_naive")
    msg = str(info.value)
    assert "01_naive.ipynb was not found next to this notebook" in msg
    assert "keep the week's notebooks together in one folder" in msg


def test_undefined_name(tmp_path):
    nb = write_notebook(tmp_path / "01_naive.ipynb", SETUP, DEMO)
    with pytest.raises(MissingAnswerError) as info:
        definitions_from(nb, "gemm_naive")
    msg = str(info.value)
    assert msg.startswith("01_naive.ipynb: ")
    assert "`gemm_naive` is not defined" in msg
    assert "answer cell" in msg


def test_unfinished_answer_with_a_syntax_error(tmp_path):
    broken = NAIVE.replace("def gemm_naive(A, B, C):", "def gemm_naive(A, B, C)")
    nb = write_notebook(tmp_path / "01_naive.ipynb", SETUP, broken)
    with pytest.raises(MissingAnswerError, match="syntax error"):
        definitions_from(nb, "gemm_naive")


def test_markdown_mentioning_a_name_does_not_define_it(tmp_path):
    nb = write_notebook(tmp_path / "nb.ipynb", SETUP,
                        markdown="```python\ndef gemm_naive(A, B, C):\n    pass\n```")
    with pytest.raises(MissingAnswerError, match="`gemm_naive` is not defined"):
        definitions_from(nb, "gemm_naive")


def test_reuse_applies_the_graders_rules(tmp_path):
    cheat = "import os\n@cuda.jit\ndef gemm_naive(A, B, C):\n    os.system('true')\n"
    nb = write_notebook(tmp_path / "nb.ipynb", SETUP, cheat)
    with pytest.raises(DisallowedCodeError, match="uses `import os`"):
        definitions_from(nb, "gemm_naive")
