"""Why nbgrader could not grade a student, in one line of words for the grade table.

nbgrader ends a failed ``autograde`` with "Please see the above traceback for details": the
cause is a line or two earlier, in a traceback. :func:`explain` finds it and, for the
failures an instructor meets, says what happened and what to do.
"""

from __future__ import annotations

import re

_PREFIX = re.compile(r"^\s*\[[A-Za-z]*App \| [A-Z]+\]\s*|^\s*\[[A-Z]+\]\s*")
_EXCEPTION = re.compile(r"^\s*(?:[\w.]+\.)?(\w*(?:Error|Exception|Entry|Exit))(?::\s*(.*))?$")
_NOISE = ("please see the", "there was an error processing", "traceback (most recent call",
          "during handling of the above exception")

#: (pattern, plain words) for the failures an instructor meets; {0}… are the pattern's groups
KNOWN: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"No assignment with ID '([^']+)' exists|No such assignment: ([\w.-]+)$", re.M),
     "the gradebook has no assignment {0}: run `make release` (or `make grade` again, which "
     "adds it) first"),
    (re.compile(r"No such notebook: ([^\n'\"{}]+)$|Notebook '([^']+)' does not exist", re.M),
     "a notebook named '{0}' is not part of the assignment (rename it to a release "
     "notebook's name, or run `make grade`, which recognises renamed notebooks)"),
    (re.compile(r"(?:NotJSONError|JSONDecodeError|Notebook does not appear to be JSON)"),
     "a handed-in notebook is not valid JSON (a damaged or partial download)"),
    (re.compile(r"database is locked"),
     "the gradebook was locked by another nbgrader command; grade this student again"),
    (re.compile(r"No notebooks were matched"),
     "no notebook was found in the student's folder"),
    (re.compile(r"(?:is not a valid notebook|NotebookValidationError|ValidationError)"),
     "a handed-in notebook does not follow the notebook format (nbformat validation failed)"),
]


def _lines(log: str) -> list[str]:
    return [_PREFIX.sub("", line).strip() for line in log.splitlines() if line.strip()]


def explain(log: str) -> str:
    """One line saying why grading failed, from nbgrader's output ``log``."""
    lines = _lines(log)
    text = "\n".join(lines)
    for pattern, words in KNOWN:
        match = pattern.search(text)
        if match:
            groups = [g for g in match.groups() if g] or [""]
            return words.format(*groups)
    causes = []
    for line in lines:
        match = _EXCEPTION.match(line)
        if match and match.group(2) and not match.group(2).lower().startswith(_NOISE):
            causes.append(f"{match.group(1)}: {match.group(2)}")
    if causes:
        return causes[-1][:200]
    useful = [line for line in lines if not line.lower().startswith(_NOISE)
              and not line.startswith(("File ", "^", "~"))]
    return (useful[-1] if useful else "nbgrader gave no reason")[:200]
