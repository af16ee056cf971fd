"""docs/contract.md names what students define; every name there is the one the notebooks use."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "docs" / "contract.md"
SOURCE = ROOT / "source" / "week4"

#: what a student's notebook defines (a function, a kernel or a string), from the contract.
STUDENT_NAMES = ["ai_vector_add", "ai_matmul", "ai_gemm_naive", "ai_gemm_tiled",
                 "attainable_gflops", "critical_ai", "bound", "measured_intensities",
                 "bounding_level", "vector_add", "gemm_naive",
                 "make_gemm_tiled", "GEMM_NAIVE_CUDA", "GEMM_TILED_CUDA",
                 "predict_blocks_per_sm", "predict_occupancy", "make_gemm_register_tiled"]


def _definitions() -> set[str]:
    """Names the source notebooks' answer cells define (def NAME or NAME = …)."""
    found: set[str] = set()
    for path in SOURCE.glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            if not cell.get("metadata", {}).get("nbgrader", {}).get("solution"):
                continue
            text = "".join(cell["source"])
            found |= set(re.findall(r"^def (\w+)\(", text, re.M))
            found |= set(re.findall(r"^(\w+)\s*=", text, re.M))
    return found


def test_every_contract_name_is_defined_by_an_answer_cell() -> None:
    text = CONTRACT.read_text()
    defined = _definitions()
    for name in STUDENT_NAMES:
        assert f"`{name}" in text, f"{name} is not in docs/contract.md"
        assert name in defined, f"no answer cell defines {name}"


def test_the_check_can_fail() -> None:
    assert "gemm_naive_v2" not in _definitions()
    assert "`gemm_naive_v2" not in CONTRACT.read_text()


def test_nothing_in_the_repository_points_outside_it() -> None:
    import subprocess

    out = subprocess.run(["git", "grep", "-l", "-F", "../shared", "--", ".", ":!docs/gpu-runs",
                          ":!tests/test_contract.py"], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "", f"files pointing outside the repository: {out.stdout}"
