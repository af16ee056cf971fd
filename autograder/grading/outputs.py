"""The notebook's output limit (``COURSE_OUTPUT_LIMIT``), as both its runs and its kept outputs
apply it: how an output is measured, and the line that says the rest was cut.

Used by :class:`autograder.grading.execute.SurvivingExecute` (the outputs of a run, message by
message) and :func:`autograder.grading.ungraded.keep_as_handed_in` (the outputs a notebook with
nothing graded was handed in with), so that both cut at the same size and say it the same way.
"""

from __future__ import annotations

import json
from typing import Any

from nbformat.notebooknode import NotebookNode

from autograder.sandbox import limits as limits_mod
from course.runtime import i18n


def size(content: Any) -> int:
    """The bytes an output (or an output message's content) counts against the limit."""
    return len(json.dumps(content, default=str))


def cut_notice(language: str, limit: int) -> NotebookNode:
    """The stderr output that stands where the outputs past ``limit`` bytes were dropped."""
    text = i18n.in_language(language, "[output cut: this notebook printed more than {limit}]")
    return NotebookNode(output_type="stream", name="stderr",
                        text=text.format(limit=limits_mod.human(limit)) + "\n")
