"""Cells are recognised against the release, their metadata restored, lost tests added back."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from autograder.grading.restore import normalised, recognise, restore
from sample_class import colab_round_trip, strip_metadata

ROOT = Path(__file__).resolve().parents[1]


def release(name: str) -> dict:
    return json.loads((ROOT / "release" / "week4" / f"{name}.ipynb").read_text())


def gids(nb: dict) -> list[str | None]:
    return [c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in nb["cells"]]


def graded(nb: dict) -> list[str]:
    return [c["metadata"]["nbgrader"]["grade_id"] for c in nb["cells"]
            if c.get("metadata", {}).get("nbgrader", {}).get("grade")]


@pytest.mark.parametrize("name", ["01_arithmetic_intensity", "02_naive_gemm", "03_tiled_gemm",
                                  "05_roofline", "06_tile_sweep", "07_bonus_register_tiling"])
def test_a_deleted_test_cell_after_markdown_comes_back_in_its_place(name):
    rel = release(name)
    first_test = graded(rel)[0]
    sub = copy.deepcopy(rel)
    sub["cells"] = [c for c in sub["cells"] if c["metadata"]["nbgrader"]["grade_id"] != first_test]
    done = restore(sub, rel)
    assert done["cells_added"] == [first_test]
    assert gids(sub) == gids(rel)  # same place, not appended at the end
    added = sub["cells"][gids(sub).index(first_test)]
    assert isinstance(added["source"], str) and added["outputs"] == []


@pytest.mark.parametrize("name", ["02_naive_gemm", "03_tiled_gemm", "06_tile_sweep"])
def test_lost_metadata_is_restored_answer_cells_included(name):
    rel = release(name)
    sub = copy.deepcopy(rel)
    for c in sub["cells"]:  # the student answered: every answer cell's source changed
        if c["metadata"]["nbgrader"].get("solution"):
            c["source"] = "# my answer\n" + "".join(c["source"]).replace("raise", "# raise")
    strip_metadata(sub)
    assert not any(gids(sub))
    done = restore(sub, rel)
    assert gids(sub) == gids(rel)
    assert done["cells_added"] == []
    assert set(done["metadata_restored"]) == {g for g in gids(rel) if g}
    assert all("id" not in c for c in sub["cells"])  # nbformat 4.4 has no cell ids


def test_lost_metadata_and_an_edited_test_cell_are_recognised_by_position():
    rel = release("02_naive_gemm")
    sub = copy.deepcopy(rel)
    at = gids(sub).index("naive_gemm_visible")
    sub["cells"][at]["source"] = "print('looks fine')\n"
    strip_metadata(sub)
    restore(sub, rel)
    assert gids(sub)[at] == "naive_gemm_visible"


def test_colab_round_trip_keeps_everything_recognisable():
    rel = release("05_roofline")
    sub = copy.deepcopy(rel)
    colab_round_trip(sub)
    for c in sub["cells"]:
        c["metadata"].pop("nbgrader")  # worst case: metadata gone too, only metadata.id left
        c.pop("id")
    restore(sub, rel)
    assert gids(sub) == gids(rel)


def test_trailing_whitespace_does_not_hide_a_cell():
    assert normalised("a = 1   \n\nb = 2\t\n\n") == normalised("a = 1\n\nb = 2")


def test_added_cells_never_duplicate_an_id():
    rel = release("02_naive_gemm")
    sub = copy.deepcopy(rel)
    victim = gids(sub).index("naive_gemm_visible")
    taken_id = sub["cells"][victim]["id"]
    del sub["cells"][victim]
    sub["cells"][0]["id"] = taken_id  # another cell now carries the deleted cell's id
    sub["cells"][0]["metadata"]["nbgrader"]["grade_id"] = "intro"
    restore(sub, rel)
    ids = [c["id"] for c in sub["cells"]]
    assert len(ids) == len(set(ids))


def test_reordered_cells_do_not_crash_and_tests_are_still_found():
    rel = release("01_arithmetic_intensity")
    sub = copy.deepcopy(rel)
    sub["cells"].reverse()
    strip_metadata(sub)
    restore(sub, rel)
    assert set(graded(sub)) == set(graded(rel))


def test_recognise_keeps_known_grade_ids_and_matches_nothing_twice():
    rel = release("01_arithmetic_intensity")
    sub = copy.deepcopy(rel)
    sub["cells"].append(copy.deepcopy(sub["cells"][0]))  # a duplicated intro cell
    match = recognise(sub["cells"], rel["cells"])
    assert len(set(match.values())) == len(match)


def test_the_notebooks_own_verdict_is_read_as_nbgrader_would_score_it():
    """What the student's kernel showed: an error fails, a check the notebook could not
    measure (no GPU in the grading kernel) or left to the grader is not compared."""
    from nbformat.v4 import new_code_cell, new_output

    from autograder.grading.trusted import notebook_verdict

    def cell(*outputs, count=1):
        c = new_code_cell("x")
        c.execution_count, c.outputs = count, list(outputs)
        return c

    def error(ename):
        return new_output("error", ename=ename, evalue="why", traceback=[])

    assert notebook_verdict(cell(new_output("stream", name="stdout", text="✓")))["status"] == \
        "pass"
    assert notebook_verdict(cell(error("GemmCheckError")))["status"] == "fail"
    assert notebook_verdict(cell(error("NotMeasuredError")))["status"] == "not_measured"
    assert notebook_verdict(cell(error("NotMeasured")))["status"] == "not_measured"
    assert notebook_verdict(cell(error("CheckedByTheGrader")))["status"] == "not_run"
    assert notebook_verdict(cell(count=None))["status"] == "not_run"
