"""What reaches the instructor's terminal: a student's text never drives it.

A handed-in file's name, an error message a student's code raised, a note quoting either: the
grade table and the collection summary print them. :func:`printable` spells out every control
character (``\\x1b[2J`` stays visible text), so no escape sequence clears the screen, retitles
the window or hides a line.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` with control characters spelled out; lines stay lines."""
    return "\n".join("".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in line)
                     for line in text.split("\n"))


#: Set by the Makefile for every command it runs: messages then name its variables
#: (``COMMIT=1``, ``LMS=moodle``) instead of the Python command's flags.
VIA_MAKE = "COURSE_VIA_MAKE"


def as_typed(make_form: str, cli_form: str) -> str:
    """An option as the instructor typed it: ``make_form`` (``COMMIT=1``) when the command
    came through ``make``, else ``cli_form`` (``--commit``)."""
    import os

    return make_form if os.environ.get(VIA_MAKE) == "1" else cli_form
