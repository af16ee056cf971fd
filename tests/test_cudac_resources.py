"""Register and shared-memory counts of CUDA C kernels never depend on NVRTC printing its log.

Issue 18: on the H200, NVRTC 13.0 served a compile from its cache and returned an empty log, so
ptxas' resource lines were missing and notebook 3c's `resources` cell crashed on ``None``. These
tests replay that: NVRTC answers with an empty log, and the counts still come (from the cubin),
and the notebook's own cell still prints them; with no NVRTC and no GPU, it prints a sentence.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from course.gemm.cudac import cpu, nvrtc, source
from course.perf import kernel_models
from tests import cudac_kernels as k

pytestmark = pytest.mark.skipif(
    not (nvrtc.available() and cpu.available()),
    reason="needs NVRTC (pip install '.[cudac]') and g++ for the CUDA C CPU runner")

ROOT = Path(__file__).resolve().parents[1]
TILES = (4, 8, 16, 32)


class _SilentLog:
    """The NVRTC library, except that every compile's log comes back empty — what a compile
    served from NVRTC's cache looks like."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self._lib = lib

    def __getattr__(self, name: str) -> Any:
        if name == "nvrtcGetProgramLogSize":
            def size(prog: Any, out: Any) -> int:
                ctypes.cast(out, ctypes.POINTER(ctypes.c_size_t))[0] = 1
                return 0
            return size
        if name == "nvrtcGetProgramLog":
            def log(prog: Any, buf: Any) -> int:
                ctypes.memset(buf, 0, 1)
                return 0
            return log
        return getattr(self._lib, name)


@contextlib.contextmanager
def _empty_nvrtc_log(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real = nvrtc.library()
    monkeypatch.setattr(nvrtc, "library", lambda: _SilentLog(real))
    kernel_models.cuda_counts.cache_clear()
    try:
        yield
    finally:
        kernel_models.cuda_counts.cache_clear()


def _resources_cell() -> str:
    """The source of notebook 3c's `resources` cell, as the release hands it out."""
    nb = json.loads((ROOT / "release/week4/03c_tiled_gemm_cuda.ipynb").read_text())
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "resources":
            return "".join(cell["source"])
    raise AssertionError("notebook 3c has no cell with grade_id 'resources'")


def _run_cell(code: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "resources", "exec"), {"GEMM_TILED_CUDA": k.TILED})  # noqa: S102
    return out.getvalue()


@pytest.mark.parametrize("tile", TILES)
def test_cubin_counts_equal_ptxas_lines(tile: int) -> None:
    """The cubin's records hold what ptxas printed, at every tile the notebooks use."""
    compiled = source.compile_kernel(k.TILED, source.TILED, tile)
    from_log = nvrtc.parse_ptxas(compiled.result.log)["gemm_tiled"]
    from_cubin = nvrtc.cubin_resources(compiled.result.cubin)["gemm_tiled"]
    assert (from_cubin.registers, from_cubin.shared_bytes) == \
        (from_log.registers, from_log.shared_bytes)
    assert from_cubin.shared_bytes == 2 * tile * tile * 4


def test_cubin_counts_name_every_kernel() -> None:
    both = k.NAIVE + k.TILED.replace("TILE", "8")
    compiled = nvrtc.compile_source(both)
    assert compiled.ok, compiled.log
    counts = nvrtc.cubin_resources(compiled.cubin)
    assert set(counts) == {"gemm_naive", "gemm_tiled"}
    assert counts["gemm_naive"].shared_bytes == 0
    assert counts["gemm_tiled"].shared_bytes == 2 * 8 * 8 * 4


def test_unreadable_cubin_gives_no_counts() -> None:
    assert nvrtc.cubin_resources(b"not an ELF file") == {}
    assert nvrtc.cubin_resources(b"") == {}


def test_the_cache_is_bypassed_where_nvrtc_has_one() -> None:
    assert nvrtc.no_cache_option((12, 8)) == []
    assert nvrtc.no_cache_option((12, 9)) == ["--no-cache"]
    assert nvrtc.no_cache_option((13, 0)) == ["--no-cache"]
    # and this machine's NVRTC accepts what the course passes it
    assert nvrtc.compile_source(k.NAIVE).log.count("Used ") == 1


def test_empty_log_still_gives_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    with _empty_nvrtc_log(monkeypatch):
        compiled = source.compile_kernel(k.TILED, source.TILED, 16)
        assert compiled.result.log == ""
        assert compiled.resources is not None
        assert compiled.resources.shared_bytes == 2048
        assert compiled.resources.registers > 0


def test_notebook_cell_prints_counts_with_an_empty_log(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = {t: source.compile_kernel(k.TILED, source.TILED, t).resources for t in TILES}
    with _empty_nvrtc_log(monkeypatch):
        printed = _run_cell(_resources_cell())
    lines = printed.strip().splitlines()
    assert len(lines) == len(TILES), printed
    for tile, line in zip(TILES, lines, strict=True):
        res = expected[tile]
        assert res is not None
        assert line.startswith(f"TILE {tile:2d}:"), line
        assert f"{res.registers:3d} registers per thread" in line, line
        assert f"{res.shared_bytes:5d} bytes of shared memory per block" in line, line
        assert "ptxas for sm_75" in line, line


def test_notebook_cell_says_so_without_nvrtc_or_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> ctypes.CDLL:
        raise nvrtc.NvrtcUnavailableError("NVRTC was not found")

    monkeypatch.setattr(nvrtc, "library", missing)
    kernel_models.cuda_counts.cache_clear()
    try:
        printed = _run_cell(_resources_cell())
    finally:
        kernel_models.cuda_counts.cache_clear()
    lines = printed.strip().splitlines()
    assert len(lines) == len(TILES), printed
    assert all("no register or shared-memory count on this machine" in line for line in lines)
    assert "pip install" in lines[0]


def test_notebook_cell_speaks_korean_in_a_korean_notebook(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSE_LANG", "ko")
    with _empty_nvrtc_log(monkeypatch):
        printed = _run_cell(_resources_cell())
    lines = printed.strip().splitlines()
    assert len(lines) == len(TILES), printed
    assert all("스레드당 register" in line and "sm_75용 ptxas" in line for line in lines), printed
