"""A Korean submission is put back in shape from the Korean release, not from the English source.

nbgrader's OverwriteCells restores every read-only cell from the gradebook, which holds the
English source: on a Korean notebook it would turn the read-only markdown English. The course's
LocalizedOverwriteCells puts the Korean release text back (and RestoreCells recognises cells and
adds deleted tests back from release-ko/week4). These run nbgrader's preprocessors directly on a
small gradebook, without a kernel.
"""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path

import pytest
from nbformat.notebooknode import from_dict
from nbgrader.api import Gradebook
from nbgrader.preprocessors import OverwriteCells
from nbgrader.utils import compute_checksum

from autograder.grading.languages import LocalizedOverwriteCells
from autograder.grading.restore import RestoreCells

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = "01_arithmetic_intensity"


def _release(language: str) -> dict:
    folder = "release" if language == "en" else f"release-{language}"
    nb = json.loads((ROOT / folder / "week4" / f"{NOTEBOOK}.ipynb").read_text())
    for cell in nb["cells"]:  # as nbformat.read gives them to nbgrader
        cell["source"] = "".join(cell["source"])
    return nb


def _gid(cell: dict) -> str | None:
    return cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")


@pytest.fixture
def resources(tmp_path: Path) -> dict:
    """A gradebook holding the English source cells of notebook 1, as generate_assignment
    leaves it."""
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    source = json.loads((ROOT / "source" / "week4" / f"{NOTEBOOK}.ipynb").read_text())
    with Gradebook(url) as gb:
        gb.update_or_create_assignment("week4")
        gb.update_or_create_notebook(NOTEBOOK, "week4")
        for cell in source["cells"]:
            meta = cell["metadata"]["nbgrader"]
            gb.update_or_create_source_cell(
                meta["grade_id"], NOTEBOOK, "week4", cell_type=cell["cell_type"],
                locked=meta["locked"], source="".join(cell["source"]),
                checksum=compute_checksum(from_dict(dict(cell, source="".join(cell["source"])))))
            if meta.get("grade"):
                gb.update_or_create_grade_cell(meta["grade_id"], NOTEBOOK, "week4",
                                               max_score=meta["points"],
                                               cell_type=cell["cell_type"])
    return {"nbgrader": {"notebook": NOTEBOOK, "assignment": "week4", "db_url": url}}


def _markdown(nb) -> dict[str, str]:
    return {_gid(c): c.source for c in nb.cells if c.cell_type == "markdown"
            and c.metadata.get("nbgrader", {}).get("locked")}


def test_nbgraders_own_overwrite_turns_a_korean_notebook_english(resources: dict) -> None:
    """Why the course needs its own step: the problem, shown."""
    ko = from_dict(_release("ko"))
    out, _ = OverwriteCells(log=logging.getLogger("t")).preprocess(ko, dict(resources))
    assert _markdown(out) == _markdown(from_dict(_release("en")))


def test_a_korean_notebook_keeps_its_korean_read_only_cells(resources: dict, caplog) -> None:
    ko = _release("ko")
    sub = copy.deepcopy(ko)
    intro = next(c for c in sub["cells"] if _gid(c) == "intro")
    intro["source"] = "# 내가 고친 제목\n"  # a student edits a read-only cell
    test = next(c for c in sub["cells"] if _gid(c) == "ai_vector_add_basic")
    test["source"] = "pass  # the test, emptied\n"
    pre = LocalizedOverwriteCells(course_root=str(ROOT), log=logging.getLogger("t"))
    with caplog.at_level(logging.WARNING):
        out, _ = pre.preprocess(from_dict(sub), dict(resources))
    assert _markdown(out) == _markdown(from_dict(ko))  # the edit undone, in Korean
    english_test = next(c for c in _release("en")["cells"] if _gid(c) == "ai_vector_add_basic")
    restored = next(c for c in out.cells if _gid(c) == "ai_vector_add_basic")
    assert restored.source.startswith("".join(english_test["source"]).split("### BEGIN")[0])
    changed = {r.getMessage().split("cell ")[1].split(" ")[0] for r in caplog.records
               if "has changed" in r.getMessage()}
    # nbgrader reports the two cells the student edited (and the hidden tests it puts back),
    # never an untouched Korean read-only cell.
    assert "intro" in changed and "ai_vector_add_basic" in changed
    assert not changed & (set(_markdown(out)) - {"intro"})


def test_an_english_notebook_is_untouched_by_the_localisation(resources: dict) -> None:
    en = from_dict(_release("en"))
    out, _ = LocalizedOverwriteCells(course_root=str(ROOT), log=logging.getLogger("t")
                                     ).preprocess(copy.deepcopy(en), dict(resources))
    assert _markdown(out) == _markdown(en)


def test_a_deleted_test_cell_comes_back_from_the_korean_release(resources: dict) -> None:
    ko = _release("ko")
    sub = copy.deepcopy(ko)
    sub["cells"] = [c for c in sub["cells"] if _gid(c) != "ai_gemm_tiled_model"]
    for cell in sub["cells"]:  # and the metadata was lost on the way (Colab, another editor)
        cell.pop("id", None)
        cell["metadata"].pop("nbgrader", None)
    sub["nbformat_minor"] = 4
    pre = RestoreCells(course_root=str(ROOT), log=logging.getLogger("t"))
    out, _ = pre.preprocess(from_dict(sub), dict(resources))
    assert [_gid(c) for c in out.cells] == [_gid(c) for c in ko["cells"]]
    done = out.metadata["course_restored"]
    assert done["cells_added"] == ["ai_gemm_tiled_model"]
    assert "intro" in done["metadata_restored"]  # markdown recognised by its Korean source


def test_a_korean_notebook_without_its_release_is_a_clear_error(resources: dict,
                                                                 tmp_path: Path) -> None:
    pre = LocalizedOverwriteCells(course_root=str(tmp_path), log=logging.getLogger("t"))
    with pytest.raises(FileNotFoundError, match="release-ko/week4/01_arithmetic_intensity"):
        pre.preprocess(from_dict(_release("ko")), dict(resources))
