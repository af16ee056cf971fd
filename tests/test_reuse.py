"""Tests for course.notebooks.reuse: later notebooks rebuild kernels from earlier notebooks."""

from __future__ import annotations

import json
import os
import textwrap

import nbformat
import numpy as np
import pytest

from course.gemm.launch import is_cuda_kernel, matmul, naive, tiled
from course.notebooks import reuse
from course.notebooks.reuse import MissingAnswerError, definitions_from
from course.trust.kernel_source import DisallowedCodeError

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


def test_missing_notebook(tmp_path, monkeypatch):
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    with pytest.raises(MissingAnswerError) as info:
        definitions_from(tmp_path / "01_naive.ipynb", "gemm_naive")
    msg = str(info.value)
    assert msg == (f"01_naive.ipynb was not found in {tmp_path}: keep the week's notebooks "
                   "together in one folder")


# ------------------------------------------------------------------- where notebooks are found


@pytest.fixture
def elsewhere(tmp_path, monkeypatch):
    """A notebook's own folder (the cwd), an empty fake Drive, no folder named yet."""
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    monkeypatch.setattr(reuse, "DRIVE_MOUNT", tmp_path / "drive")
    monkeypatch.setattr(reuse, "_chosen_folder", None)
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    return tmp_path


def test_a_bare_name_is_found_in_the_notebooks_own_folder(elsewhere, capsys):
    write_notebook(elsewhere / "here" / "02_naive_gemm.ipynb", SETUP, NAIVE)
    assert is_cuda_kernel(definitions_from("02_naive_gemm.ipynb", "gemm_naive")["gemm_naive"])
    assert capsys.readouterr().out == ""  # the usual case says nothing


def test_colabs_copy_of_name_is_found_and_the_newest_is_named(elsewhere, capsys):
    older = write_notebook(elsewhere / "here" / "Copy of 02_naive_gemm.ipynb", SETUP, DEMO)
    newer = write_notebook(elsewhere / "here" / "02_naive_gemm (1).ipynb", SETUP, NAIVE)
    os.utime(older, (1_000, 1_000))
    assert reuse.locate("02_naive_gemm.ipynb") == newer
    definitions_from("02_naive_gemm.ipynb", "gemm_naive")
    assert f"(read gemm_naive from {newer})" in capsys.readouterr().out
    write_notebook(elsewhere / "here" / "Copy of 03_tiled_gemm.ipynb", SETUP, TILED)
    assert reuse.locate("03_tiled_gemm.ipynb").name == "Copy of 03_tiled_gemm.ipynb"
    write_notebook(elsewhere / "here" / "102_naive_gemm.ipynb", SETUP, NAIVE)
    with pytest.raises(MissingAnswerError):  # a similar name is not the notebook
        reuse.locate("02_naive_gem.ipynb")


def test_a_named_folder_is_searched_after_the_own_one(elsewhere):
    other = elsewhere / "week4"
    other.mkdir()
    write_notebook(other / "03_tiled_gemm.ipynb", SETUP, TILED)
    with pytest.raises(MissingAnswerError, match="was not found in"):
        reuse.locate("03_tiled_gemm.ipynb")
    reuse.use_folder(other)
    assert reuse.locate("03_tiled_gemm.ipynb") == other / "03_tiled_gemm.ipynb"
    with pytest.raises(MissingAnswerError, match="is not a folder"):
        reuse.use_folder(elsewhere / "nowhere")


def test_on_colab_a_missing_notebook_comes_with_the_exact_steps(elsewhere, monkeypatch):
    monkeypatch.setenv("COLAB_RELEASE_TAG", "test")
    with pytest.raises(MissingAnswerError) as info:
        definitions_from("02_naive_gemm.ipynb", "gemm_naive")
    first, *steps = str(info.value).splitlines()
    assert first == f"02_naive_gemm.ipynb was not found in {elsewhere / 'here'}."
    text = "\n".join(steps)
    assert "from course.tools import use_drive_folder; use_drive_folder()" in text
    assert "from course.tools import upload_notebooks; upload_notebooks()" in text
    assert "File → Download" in text and "Then run this cell again." in text


def test_a_drive_folder_is_named_once_and_remembered_on_the_drive(elsewhere, monkeypatch):
    drive = elsewhere / "drive"
    notebooks = drive / "MyDrive" / "Colab Notebooks"

    def mount():  # what google.colab.drive.mount leaves behind
        notebooks.mkdir(parents=True, exist_ok=True)

    assert reuse.use_drive_folder(mount=mount) == notebooks
    memory = drive / "MyDrive" / reuse.MEMORY_NAME
    assert json.loads(memory.read_text()) == {"folder": str(notebooks)}
    write_notebook(notebooks / "Copy of 02_naive_gemm.ipynb", SETUP, NAIVE)
    # A later notebook: a fresh runtime, the same Drive, nothing named in this process.
    monkeypatch.setattr(reuse, "_chosen_folder", None)
    assert reuse.search_folders() == [elsewhere / "here", notebooks]
    assert is_cuda_kernel(definitions_from("02_naive_gemm.ipynb", "gemm_naive")["gemm_naive"])
    # Another folder, given as a path inside My Drive, replaces the remembered one.
    (drive / "MyDrive" / "GPU" / "week4").mkdir(parents=True)
    reuse.use_drive_folder("GPU/week4", mount=mount)
    assert json.loads(memory.read_text())["folder"] == str(drive / "MyDrive" / "GPU" / "week4")
    with pytest.raises(MissingAnswerError, match="is not a folder in your Drive"):
        reuse.use_drive_folder("nope", mount=mount)


def test_drive_and_upload_say_plainly_that_they_need_colab(elsewhere):
    with pytest.raises(MissingAnswerError, match="works on Colab"):
        reuse.use_drive_folder()
    with pytest.raises(MissingAnswerError, match="works on Colab"):
        reuse.upload_notebooks()
    with pytest.raises(MissingAnswerError, match="did not appear"):
        reuse.use_drive_folder(mount=lambda: None)  # the student refused access


def test_uploaded_notebooks_land_in_the_notebooks_folder(elsewhere, capsys):
    source = write_notebook(elsewhere / "02_naive_gemm.ipynb", SETUP, NAIVE).read_bytes()
    written = reuse.upload_notebooks(upload=lambda: {"02_naive_gemm.ipynb": source,
                                                     "notes.txt": b"x"})
    assert written == [elsewhere / "here" / "02_naive_gemm.ipynb"]
    out = capsys.readouterr().out
    assert "notes.txt is not a notebook" in out and "Uploaded: 02_naive_gemm.ipynb." in out
    assert is_cuda_kernel(definitions_from("02_naive_gemm.ipynb", "gemm_naive")["gemm_naive"])


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
