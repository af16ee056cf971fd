"""Tests for course.checks.bonus and notebook 7: the register-tiled solution is right on ragged
shapes, broken variants fail with a useful message, and the graded cells fail on them.

Every simulated block is 256 simulated threads, so the shapes stay tiny (one to four blocks).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from course.checks.bonus import (
    CONTRACT,
    RegisterTiling,
    check_register_tiled,
    register_tiled,
    sweep_model,
)
from course.checks.gemm import GemmCheckError
from course.gemm.launch import GemmInputError, NotAKernelError, matmul
from course.runtime import backend

ROOT = Path(__file__).resolve().parents[1]
NB07 = ROOT / "source" / "week4" / "07_bonus_register_tiling.ipynb"
MARKERS = re.compile(r"^[ \t]*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)[ \t]*\n?", re.M)
ANSWER_ID = "make_gemm_register_tiled"


def _cells() -> list[dict[str, Any]]:
    return json.loads(NB07.read_text())["cells"]


def _gid(cell: dict[str, Any]) -> str:
    return cell["metadata"]["nbgrader"]["grade_id"]


def _answer_source() -> str:
    return next(MARKERS.sub("", "".join(c["source"])) for c in _cells() if _gid(c) == ANSWER_ID)


def _build(answer: str) -> Any:
    """Rebuild make_gemm_register_tiled from notebook 7's cells, with ``answer`` as the answer
    cell, the way the grader does (validated source, nothing else carried over)."""
    from course.trust.kernel_source import bundle_from_cells

    cells = [answer if _gid(c) == ANSWER_ID else MARKERS.sub("", "".join(c["source"]))
             for c in _cells() if c["cell_type"] == "code"]
    return bundle_from_cells(cells, {ANSWER_ID}).load()[ANSWER_ID]


def _broken(old: str, new: str) -> Any:
    src = _answer_source()
    assert old in src, f"the solution changed: {old!r} is not in it"
    return _build(src.replace(old, new))


@pytest.fixture(scope="module")
def solution() -> Any:
    return _build(_answer_source())


def test_the_solution_is_right_on_tiny_ragged_shapes(solution: Any) -> None:
    report = check_register_tiled(solution, shapes=[(1, 1, 1), (70, 67, 19), (9, 130, 5)],
                                  seed=1, quiet=True)
    assert report.max_rel_error < 1e-5


def test_the_solution_via_matmul(solution: Any) -> None:
    rng = np.random.default_rng(3)
    A = rng.uniform(-1, 1, (65, 3)).astype(np.float32)
    B = rng.uniform(-1, 1, (3, 2)).astype(np.float32)
    C = matmul(register_tiled(solution), A, B)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("old,new,message", [
    # the number of steps along K: K // BK drops the last, partial step
    ("for k0 in range(0, K, BK):", "for k0 in range(0, K - BK + 1, BK):", "last"),
    # no bounds test before the store: writes outside C
    ("                if row < M and col < N:\n                    C[row, col] = acc[i, j]",
     "                if row < M + 2 and col < N:\n                    C[row, col] = acc[i, j]",
     "outside C|out of range|index"),
    # no column test on the loads of B: the simulator stops at the out-of-bounds index. (On a
    # GPU the stray values only reach accumulators of columns past N, which are never
    # stored, so the result is right and only the simulator can tell.)
    pytest.param("if k0 + k < K and col0 + n < N:", "if k0 + k < K:", "outside B",
                 marks=pytest.mark.skipif(backend.detect().kind == "gpu",
                                          reason="only the simulator sees this stray read")),
    # a thread's 4×4 block at the wrong place
    ("col = col0 + tx * TN + j", "col = col0 + tx + j", "wrong values|never written"),
])
def test_broken_variants_fail(old: str, new: str, message: str) -> None:
    broken = _broken(old, new)
    with pytest.raises(GemmCheckError, match=message):
        check_register_tiled(broken, shapes=[(9, 10, 11), (70, 67, 19)], seed=2, quiet=True)


def test_an_unwritten_answer_says_so() -> None:
    stub = ("def make_gemm_register_tiled():\n"
            "    \"\"\"not yet\"\"\"\n"
            "    raise NotImplementedError()\n")
    with pytest.raises(GemmCheckError, match="not written yet"):
        check_register_tiled(_build(stub), shapes=[(1, 1, 1)], quiet=True)


def test_graded_cells_pass_with_the_solution_and_fail_when_broken(solution: Any) -> None:
    tests = {_gid(c): MARKERS.sub("", "".join(c["source"])) for c in _cells()
             if c["cell_type"] == "code" and c["metadata"]["nbgrader"].get("grade")}
    assert set(tests) == {"register_tiled_correct_visible", "register_tiled_correct_hidden"}
    broken = _broken("for k0 in range(0, K, BK):", "for k0 in range(0, K - BK + 1, BK):")
    for code in tests.values():
        exec(compile(code, "<test>", "exec"), {ANSWER_ID: solution})  # noqa: S102
        with pytest.raises(GemmCheckError):
            exec(compile(code, "<test>", "exec"), {ANSWER_ID: broken})  # noqa: S102


def test_factory_contract_and_configs(solution: Any) -> None:
    with pytest.raises(NotAKernelError, match="plain Python function"):
        register_tiled(solution())  # the kernel, not the factory
    gk = register_tiled(solution)
    cfg = gk.launch_for(130, 65)
    assert cfg.block == (16, 16) and cfg.grid == (2, 3)
    assert CONTRACT.threads == 256 and CONTRACT.smem_bytes == 4096
    assert CONTRACT.reads(64, 64, 8) == 64 * 8 * 2
    assert RegisterTiling(128, 128, 8, 8, 8).block == (16, 16)
    with pytest.raises(GemmInputError):
        RegisterTiling(64, 64, 8, 3, 4)
    with pytest.raises(GemmInputError):
        RegisterTiling(256, 256, 8, 4, 4)  # 4096 threads


def test_sweep_model_is_a_flat_reference_line(solution: Any) -> None:
    from course.perf.sweep import run_sweep

    rows = run_sweep({"bonus": sweep_model(solution)}, size=256, profile="H200",
                     progress=False, measure=False)
    assert len({(r.blocks_per_sm, r.occupancy, r.modelled_ai) for r in rows}) == 1
    assert all(r.threads_per_block == 256 and r.smem_per_block == 4096 for r in rows)


def test_the_ladder_script_builds_every_rung() -> None:
    import importlib.util

    sys.path.insert(0, str(ROOT / "scripts" / "gpu"))  # its `from common import …`
    spec = importlib.util.spec_from_file_location("bonus_ladder", ROOT / "scripts" / "gpu" /
                                                  "bonus_ladder.py")
    ladder = importlib.util.module_from_spec(spec)
    sys.modules["bonus_ladder"] = ladder  # dataclasses look their module up there
    spec.loader.exec_module(ladder)
    rungs = ladder.ladder()
    assert rungs[0].opts is None and len(rungs) >= 8
    for rung in rungs[1:]:
        factory, src = ladder.generated_factory(rung.config, rung.opts, on_gpu=False)
        assert "def kernel(A, B, C)" in src
        assert callable(factory)
    best = next(r for r in rungs if r.name == "v8")
    factory, _ = ladder.generated_factory(best.config, best.opts, on_gpu=False)
    check_register_tiled(factory, shapes=[(129, 129, 9)], config=best.config, seed=4,
                         quiet=True)


@pytest.mark.gpu
def test_the_solution_on_a_gpu(solution: Any) -> None:
    check_register_tiled(solution, seed=5, quiet=True)
