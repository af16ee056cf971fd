"""The sample class as its students and its instructor look at it: the two longest checks on the
graded class, in a file of their own so that, at the end of a run, they run on one worker while
tests/test_sample_class.py runs on the other (the class itself is graded once for the run, in
the background: tests/sample_class_grading.py).

Which class: as in tests/test_sample_class.py (``COURSE_SAMPLE_CLASS``,
``COURSE_SAMPLE_STUDENTS``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_sample_class import CLASS, MEMBERS, ONLY

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def graded(sample_class_graded: tuple[Path, dict, str, dict]) -> tuple[Path, dict, str]:
    """The sample class graded once for the run: the course, the grade table, what grading
    printed."""
    course, table, stdout, _ = sample_class_graded
    return course, table, stdout


#: correct answers in other styles whose notebooks are cheap to run: their plain run is the
#: student's own view (no grader, no hidden tests).
PLAIN_RUN = ["ana_isinstance", "bo_any_and_dicts", "cy_divmod_and_try", "di_numpy_functions",
             "ed_where_and_while", "fi_clip_and_numba_spelling", "ka_occupancy_math",
             "lu_occupancy_divmod", "ne_hints_and_asserts", "ol_sums_and_comprehensions"]


def _plain_run(path: Path, workdir: Path) -> dict[str, str]:
    """Execute a submitted notebook as the student would (no grader); verdict per test cell."""
    import nbformat
    from nbclient import NotebookClient

    from autograder.grading.trusted import is_test_cell

    nb = nbformat.read(path, as_version=4)
    env_before = os.environ.pop("NBGRADER_EXECUTION", None)
    try:
        NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True,
                       resources={"metadata": {"path": str(workdir)}}).execute()
    finally:
        if env_before is not None:
            os.environ["NBGRADER_EXECUTION"] = env_before
    return {c.metadata["nbgrader"]["grade_id"]:
            "fail" if any(o.get("output_type") == "error" for o in c.outputs) else "pass"
            for c in nb.cells if is_test_cell(c)}


def test_correct_answers_in_other_styles_pass_in_the_students_own_run_too(graded) -> None:
    """The student's own, plain run of a correct answer prints ✓, and so does the grader."""
    from concurrent.futures import ThreadPoolExecutor

    course, _, _ = graded
    # CI (the core class) runs one student per kind of notebook (ana: 01, di: 01 and 05,
    # ka: 06); the full class runs all of them (`make test-class`).
    plain = PLAIN_RUN if CLASS == "full" else ["ana_isinstance", "di_numpy_functions",
                                               "ka_occupancy_math"]
    jobs = [(sid, path) for sid in plain if sid in MEMBERS
            for path in sorted((course / "submitted" / sid / "week4").glob("*.ipynb"))]

    def one(job: tuple[str, Path]) -> tuple[str, str, dict[str, str]]:
        sid, path = job
        work = course / "plain" / sid
        work.mkdir(parents=True, exist_ok=True)
        return sid, path.stem, _plain_run(path, work)

    if ONLY and not jobs:
        pytest.skip(f"none of {', '.join(plain)} among the students named")
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(one, jobs))
    assert len(results) >= (10 if CLASS == "full" else 1 if ONLY else 4)
    for sid, notebook, verdicts in results:
        summary = json.loads((course / "autograded" / sid / "week4" /
                              f"{notebook}.trusted.json").read_text())
        graded_verdicts = {g: c["status"] for g, c in summary["cells"].items()}
        failed = {g: v for g, v in verdicts.items() if v != "pass"}
        assert not failed, f"{sid} {notebook}: the student's own run failed {failed}"
        assert set(graded_verdicts.values()) <= {"pass", "not_measured"}, (sid, graded_verdicts)


def test_looking_at_the_class_changes_no_honest_page(graded) -> None:
    """Only the hostile notebook lost anything from view; every other graded notebook reads
    the same, word for word and image for image, through the cleaning exporter as through
    nbconvert's plain one (what the formgrader and the feedback showed before); and the
    feedback folder holds one protected page per graded notebook, nothing else."""
    import copy

    import nbformat

    from autograder.viewing import feedback as viewing_feedback
    from autograder.viewing import notebook as viewing
    from tests.test_viewing import _exporter, seen

    course, _, _ = graded
    plain, clean = _exporter("classic", clean=False), _exporter("classic", clean=True)
    compared = 0
    for path in sorted((course / "autograded").glob("*/week4/*.ipynb")):
        student = path.parent.parent.name
        removed = viewing.read_removed(path.parent, path.stem)
        if student == "ivo_injects_html":
            assert removed, "the hostile notebook had nothing removed"
            continue
        assert removed == {}, (student, path.stem, removed)
        nb = nbformat.read(path, 4)
        before, _ = plain.from_notebook_node(copy.deepcopy(nb))
        after, _ = clean.from_notebook_node(copy.deepcopy(nb))
        assert seen(after).words == seen(before).words, (student, path.stem)
        assert seen(after).images == seen(before).images, (student, path.stem)
        compared += 1
    assert compared > 20, compared
    for folder in (course / "feedback").glob("*/week4"):
        graded_here = {p.stem for p in (course / "autograded" / folder.parent.name / "week4")
                       .glob("*.ipynb")}
        pages = {p.stem: p.read_bytes() for p in folder.glob("*.html")}
        others = [p.name for p in folder.iterdir()
                  if p.suffix != ".html" and p.name not in viewing_feedback.NBGRADER_FILES]
        assert others == [], folder
        for stem, content in pages.items():  # a graded notebook's page, or its renamed copy
            assert stem in graded_here or content in {pages[g] for g in graded_here
                                                      if g in pages}, (folder, stem)
            assert viewing_feedback.META.encode() in content[:2000], (folder, stem)
