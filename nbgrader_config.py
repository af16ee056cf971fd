"""nbgrader configuration: the repository root is the course directory.

See autograder/grading/config.py for what it sets and why.
"""

from pathlib import Path

from autograder.grading.config import configure

configure(get_config(), Path(__file__).resolve().parent)  # noqa: F821 - provided by traitlets
