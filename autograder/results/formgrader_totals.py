"""A Jupyter Server extension: the formgrader shows the course's total, and a student's id
where nbgrader would write "None, None".

nbgrader's formgrader sums every notebook of the assignment (both tracks' notebooks 2 and 3,
and GPU checks a machine without a GPU could not measure), so *Manage Students* and the
assignment's *Submissions* list read 66/74 for a student whose grade table, ``grades.csv`` and
LMS exports read 49/51. This extension wraps the four methods of nbgrader's API behind those
pages (``get_students``, ``get_student``, ``get_submissions``, ``get_submission``) so that
every student's (or submission's) ``score`` and ``max_score`` are the grade table's total
(:func:`autograder.results.table.total`: their track, hand grades in, not-measured checks out
of the maximum), and a student with neither name shows as their id (nbgrader's pages write
``last_name + ", " + first_name``). A notebook's own page still shows that notebook's points
as nbgrader scored them.

Enabled beside :mod:`autograder.viewing.formgrader` by
``jupyter-config/jupyter_server_config.d/week4-viewing.json`` (``make install``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograder.results import table


def course_totals(root: Path) -> dict[str, tuple[float, float]]:
    """Each graded student's total and maximum, as the grade table has them."""
    if not (root / "gradebook.db").exists():
        return {}
    notebooks, rows = table.collect(root)
    return {row.student: table.total(row, notebooks) for row in rows}


def correct(entry: dict[str, Any], totals: dict[str, tuple[float, float]]) -> dict[str, Any]:
    """One student's (``id``) or submission's (``student``) dict of nbgrader's API, with the
    course's total and a name to show."""
    student = entry.get("student") or entry.get("id")
    if student in totals:
        entry["score"], entry["max_score"] = totals[student]
    if not entry.get("last_name") and not entry.get("first_name") and student:
        entry["last_name"], entry["first_name"] = student, ""
    return entry


def _wrap(method: Callable[..., Any]) -> Callable[..., Any]:
    if getattr(method, "course_totals", False):
        return method

    @functools.wraps(method)
    def wrapped(self: Any, *args: Any, **kw: Any) -> Any:
        result = method(self, *args, **kw)
        totals = course_totals(Path(self.coursedir.root))
        if isinstance(result, list):
            return [correct(x, totals) if isinstance(x, dict) else x for x in result]
        return correct(result, totals) if isinstance(result, dict) else result

    wrapped.course_totals = True  # type: ignore[attr-defined]
    return wrapped


def install() -> None:
    """Wrap nbgrader's API methods (idempotent)."""
    from nbgrader.apps.api import NbGraderAPI

    for name in ("get_students", "get_student", "get_submissions", "get_submission"):
        setattr(NbGraderAPI, name, _wrap(getattr(NbGraderAPI, name)))


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": __name__}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    install()
    serverapp.log.info("week 4: the formgrader shows the course's totals (one track, "
                       "not-measured checks out of the maximum) and ids for unnamed students")
