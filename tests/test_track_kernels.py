"""Loading a student's kernels from whichever track they did (course.notebooks.tracks), and the
tile sweep of CUDA C kernels with the compiler's real register and shared-memory counts
(course.perf.sweep).

Folders of notebooks are built from the source notebooks (solutions written) and the release
notebooks (answers not written yet), so each case is a student's folder as it would be.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from course.gemm.cudac import cpu, gpu, nvrtc
from course.gemm.cudac.source import CudaCompileError
from course.gemm.occupancy import theoretical_occupancy
from course.notebooks.reuse import MissingAnswerError
from course.notebooks.tracks import CUDA_C, NUMBA, load_gemm_kernels, load_week_kernels
from course.perf.kernel_models import as_kernel_model, cuda_counts, resolve_target
from course.perf.sweep import run_sweep
from course.perf.sweep_table import resource_report, rows_to_table
from course.runtime import backend
from tests import cudac_kernels as k

ROOT = Path(__file__).resolve().parents[1]
SOURCE, RELEASE = ROOT / "source" / "week4", ROOT / "release" / "week4"
NUMBA_NBS = ("02_naive_gemm.ipynb", "03_tiled_gemm.ipynb")
CUDA_NBS = ("02c_naive_gemm_cuda.ipynb", "03c_tiled_gemm_cuda.ipynb")
needs_nvrtc = pytest.mark.skipif(not nvrtc.available(),
                                 reason="needs NVRTC (pip install '.[cudac]')")
needs_runner = pytest.mark.skipif(
    not (nvrtc.available() and cpu.available()),
    reason="needs NVRTC (pip install '.[cudac]') and g++ for the CUDA C CPU runner")
ON_GPU = gpu.available()


def folder(tmp_path: Path, written: tuple[str, ...] = (), unwritten: tuple[str, ...] = ()
           ) -> Path:
    """A student's folder: ``written`` notebooks from source/, ``unwritten`` from release/."""
    for name in written:
        shutil.copy(SOURCE / name, tmp_path / name)
    for name in unwritten:
        shutil.copy(RELEASE / name, tmp_path / name)
    return tmp_path


# ---------------------------------------------------------------------------------------------
# course.notebooks.tracks: which track, and why not.


@needs_runner
def test_numba_is_used_when_both_tracks_are_written(tmp_path: Path) -> None:
    where = folder(tmp_path, written=NUMBA_NBS + CUDA_NBS)
    mine = load_gemm_kernels(folder=where)
    assert mine.track == NUMBA and not mine.is_cuda_c and callable(mine.tiled)
    assert mine.describe() == ("Using your Numba kernels: gemm_naive from 02_naive_gemm.ipynb "
                               "and make_gemm_tiled from 03_tiled_gemm.ipynb.")
    chosen = load_gemm_kernels(track=CUDA_C, folder=where)
    assert chosen.track == CUDA_C and isinstance(chosen.tiled, str)


@needs_runner
def test_cuda_c_is_used_when_the_numba_notebooks_are_unwritten(tmp_path: Path) -> None:
    where = folder(tmp_path, written=CUDA_NBS, unwritten=NUMBA_NBS)
    mine = load_gemm_kernels(folder=where)
    assert mine.track == CUDA_C and mine.is_cuda_c
    assert "GEMM_TILED_CUDA from 03c_tiled_gemm_cuda.ipynb" in mine.describe()
    assert "__syncthreads()" in mine.tiled and "gemm_naive" in mine.naive
    if not ON_GPU:
        assert not mine.can_time and "need a GPU with CuPy" in mine.why_not_timed()
        result = mine.check_writeup_correctness(size=40)
        assert result.tile == 32 and result.max_abs_diff_tiled_vs_naive == 0
        assert all(r.max_abs_diff == 0 for r in result.rows)


@needs_runner
def test_numba_is_used_when_the_cuda_c_notebooks_are_missing(tmp_path: Path) -> None:
    mine = load_gemm_kernels(folder=folder(tmp_path, written=NUMBA_NBS))
    assert mine.track == NUMBA


@needs_runner
def test_unwritten_tracks_are_both_named(tmp_path: Path) -> None:
    where = folder(tmp_path, unwritten=NUMBA_NBS + CUDA_NBS)
    with pytest.raises(MissingAnswerError) as err:
        load_gemm_kernels(folder=where)
    lines = str(err.value).splitlines()
    assert lines[0].startswith("Numba track (02_naive_gemm.ipynb, 03_tiled_gemm.ipynb): "
                               "gemm_naive (notebook 2) is not written yet")
    assert lines[1].startswith("CUDA C track (02c_naive_gemm_cuda.ipynb, "
                               "03c_tiled_gemm_cuda.ipynb): GEMM_NAIVE_CUDA (notebook 2c) is "
                               "not written yet")


@needs_runner
def test_a_failing_cuda_c_kernel_is_reported_not_hidden(tmp_path: Path) -> None:
    """CUDA C is this student's track (no Numba notebooks here): its error is what they see."""
    where = folder(tmp_path, written=CUDA_NBS)
    nb = where / CUDA_NBS[1]
    text = nb.read_text()
    broken = text.replace("(K + TILE - 1) / TILE", "K / TILE")
    assert broken != text
    nb.write_text(broken)
    with pytest.raises(MissingAnswerError) as err:
        load_gemm_kernels(folder=where)
    message = str(err.value)
    assert message.startswith("CUDA C track (") and "GEMM_TILED_CUDA (notebook 3c)" in message
    assert "Numba" not in message


def test_no_notebooks_at_all_names_both_tracks(tmp_path: Path) -> None:
    with pytest.raises(MissingAnswerError) as err:
        load_gemm_kernels(folder=tmp_path)
    message = str(err.value)
    assert "02_naive_gemm.ipynb was not found" in message
    assert "(For the CUDA C track: 02c_naive_gemm_cuda.ipynb and 03c_tiled_gemm_cuda.ipynb.)" \
        in message


def test_unknown_track_is_refused() -> None:
    with pytest.raises(ValueError, match="track must be one of 'Numba', 'CUDA C'"):
        load_gemm_kernels(track="cuda")


# ---------------------------------------------------------------------------------------------
# The sweep with CUDA C kernels: the compiler's counts, no GPU needed.


@needs_nvrtc
@pytest.mark.parametrize("profile", ["T4", "H200"])
def test_cuda_c_rows_use_ptxas_counts_for_the_target(profile: str) -> None:
    target = resolve_target(profile)
    if target.own:
        pytest.skip("this machine's GPU: the counts come from RawKernel.attributes")
    rows = run_sweep({"tiled": k.TILED}, size=96, profile=profile, measure=False,
                     progress=False, assumed_regs=99)
    arch = f"sm_{target.cc[0]}{target.cc[1]}"
    for r in rows:
        assert r.regs_per_thread is not None and r.regs_in_model == r.regs_per_thread != 99
        assert r.smem_per_block == 2 * r.tile * r.tile * 4
        assert f"from ptxas for {arch}" in r.note
        occ = theoretical_occupancy(target.cc, r.tile * r.tile, r.regs_per_thread,
                                    r.smem_per_block)
        assert (r.blocks_per_sm, r.occupancy, r.limited_by) == (
            occ.blocks_per_sm, occ.occupancy, occ.limited_by)
    assert "*" not in rows_to_table(rows).split("note")[0]  # nothing assumed


@needs_nvrtc
def test_ptxas_counts_on_sm_90_are_those_the_h200_reported() -> None:
    """On the H200 (docs/cuda-c-track.md) RawKernel.attributes gave 32 registers at every
    TILE for this kernel, and shared memory 2·TILE²·4 bytes."""
    for tile in (4, 8, 16, 32):
        counts = cuda_counts(k.TILED, tile, (9, 0), False)
        assert (counts.registers, counts.shared_bytes) == (32, 2 * tile * tile * 4)


@needs_nvrtc
def test_cuda_c_naive_model_is_tile_independent() -> None:
    model = as_kernel_model("naive", k.NAIVE)
    assert not model.tile_dependent and model.threads(32) == 256
    rows = run_sweep({"naive": k.NAIVE}, tiles=(4, 32), size=64, profile="T4", measure=False,
                     progress=False)
    assert rows[0].regs_per_thread == rows[1].regs_per_thread is not None
    assert rows[0].smem_per_block == 0 and "launch does not depend on the tile" in rows[0].note


@needs_nvrtc
def test_a_cuda_c_kernel_that_does_not_compile_is_reported() -> None:
    with pytest.raises(CudaCompileError, match="does not compile"):
        run_sweep({"tiled": k.TILED.replace("float acc = 0.0f;", "float acc = 0.0f")},
                  tiles=(8,), size=64, profile="T4", measure=False, progress=False)
    with pytest.raises(TypeError, match="defines neither gemm_naive nor gemm_tiled"):
        as_kernel_model("tiled", "int x;")


def test_without_nvrtc_the_registers_are_assumed_and_said_so(monkeypatch) -> None:
    import course.perf.kernel_models as models

    def no_nvrtc(*args, **kwargs):
        raise nvrtc.NvrtcUnavailableError("NVRTC was not found")

    monkeypatch.setattr(models, "compile_kernel", no_nvrtc)
    monkeypatch.setattr(models.cuda_launch, "tiled", lambda src, tile: models.cuda_launch.CudaGemm(
        models.CUDA_TILED, src, tile))
    models.cuda_counts.cache_clear()
    models._cuda_gemm.cache_clear()
    try:
        rows = run_sweep({"tiled": k.TILED + "\n// no nvrtc"}, tiles=(16,), size=64,
                         profile="T4", measure=False, progress=False)
    finally:
        models.cuda_counts.cache_clear()
        models._cuda_gemm.cache_clear()
    assert rows[0].regs_per_thread is None and rows[0].regs_in_model == 32
    assert "registers assumed: 32/thread (NVRTC not found" in rows[0].note


@needs_nvrtc
def test_resource_report_lists_each_target_and_tile() -> None:
    report = resource_report(k.TILED, profiles=("T4", "H200"))
    lines = report.splitlines()
    assert lines[0].split()[:4] == ["target", "tile", "threads", "regs"]
    body = [ln for ln in lines[2:] if not ln.startswith("note")]
    assert len(body) == 8 and sum("sm_75" in ln for ln in body) == 4
    h200_32 = next(ln for ln in body if ln.startswith("H200") and " 1024 " in ln)
    assert "8,192" in h200_32 and "100%" in h200_32  # 32 regs: 2 blocks of 32 warps
    if not ON_GPU:
        assert "from ptxas for sm_75" in report and "from ptxas for sm_90" in report


@needs_nvrtc
def test_load_week_kernels_falls_back_to_cuda_c(tmp_path: Path, capsys) -> None:
    where = folder(tmp_path, written=CUDA_NBS, unwritten=NUMBA_NBS)
    found = load_week_kernels(str(where))
    assert isinstance(found["naive"], str) and isinstance(found["tiled"], str)
    assert found["bonus"] is None
    out = capsys.readouterr().out
    assert ("Loaded naive: GEMM_NAIVE_CUDA (CUDA C, 02c_naive_gemm_cuda.ipynb); tiled: "
            "GEMM_TILED_CUDA (CUDA C, 03c_tiled_gemm_cuda.ipynb).") in out
    assert "bonus: 07_bonus_register_tiling.ipynb was not found" in out


def test_load_week_kernels_names_both_unwritten_tracks(tmp_path: Path, capsys) -> None:
    found = load_week_kernels(str(folder(tmp_path, unwritten=NUMBA_NBS + CUDA_NBS)))
    assert found == {"naive": None, "tiled": None, "bonus": None}
    out = capsys.readouterr().out
    assert ("tiled: make_gemm_tiled in 03_tiled_gemm.ipynb is not written yet; "
            "GEMM_TILED_CUDA in 03c_tiled_gemm_cuda.ipynb is not written yet; left out of the "
            "sweep") in out


@needs_nvrtc
@pytest.mark.skipif(backend.detect().kind == "gpu", reason="the panel's model-only view")
def test_panel_shows_the_compilers_count_for_cuda_c(monkeypatch) -> None:
    from course.perf.widgets import sweep_panel

    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    panel = sweep_panel({"tiled": k.TILED}, size=256)
    panel.profile.value = "H200"
    panel.tile.value = 32
    assert "32 (compiler)" in panel.model.value and "ptxas for sm_90" in panel.model.value
    panel.regs.value = 96  # an assumption the CUDA C kernel does not need
    assert "32 (compiler)" in panel.model.value


# ---------------------------------------------------------------------------------------------
# On a GPU.


@pytest.mark.gpu
@pytest.mark.skipif(not ON_GPU, reason="needs a GPU with CuPy")
def test_counts_on_this_gpu_come_from_the_driver_and_match_ptxas() -> None:
    target = resolve_target(None)
    for tile in (4, 8, 16, 32):
        driver = cuda_counts(k.TILED, tile, target.cc, True)
        ptxas = cuda_counts(k.TILED, tile, target.cc, False)
        assert driver.source == "RawKernel.attributes on this GPU"
        assert (driver.registers, driver.shared_bytes) == (ptxas.registers, ptxas.shared_bytes)


@pytest.mark.gpu
@pytest.mark.skipif(not ON_GPU, reason="needs a GPU with CuPy")
def test_cuda_c_sweep_is_measured_on_a_gpu() -> None:
    rows = run_sweep({"tiled": k.TILED, "naive": k.NAIVE}, tiles=(16, 32), size=512,
                     progress=False, repeats=3)
    for r in rows:
        assert r.measured_ms > 0 and r.gflops > 0 and r.regs_per_thread is not None
