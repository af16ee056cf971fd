"""The setup cell that opens every notebook of the week, generated from one place.

Any notebook can be the first one a student opens, and on Colab each notebook gets its own
fresh runtime, so every notebook starts with the same cell. It must work *before* ``course``
exists, which is why it is plain Python with the install requirement written into it
(from :mod:`course.runtime.config`):

* on Colab, when ``course`` is not importable, it runs ``python -m pip install -q <requirement>``
  (what ``%pip install`` runs; plain Python, so the grader's source tools can parse the cell).
  No ``--upgrade``: pip keeps Colab's preinstalled numba-cuda, NumPy and ipywidgets, which
  already satisfy the package's requirements;
* elsewhere (JupyterLab, a laptop), when ``course`` is missing, it stops with one line saying
  how to install it;
* then it imports ``course`` (before anything imports Numba: without a GPU that switches on
  the simulator) and says what the kernels will run on.

``python -m autograder.release`` writes :func:`source` into the first code cell of every
source notebook; ``tests/test_release_files.py`` checks that they all carry it.
"""

from __future__ import annotations

from course.runtime import config
from course.runtime.i18n import _

_TEMPLATE = '''\
# Setup, the same first cell in every notebook of the week: on Colab it installs the course
# package if this runtime lacks it; then it says what your kernels will run on.
import importlib.util
import os
import subprocess
import sys

COURSE_PACKAGE = "{requirement}"
if importlib.util.find_spec("course") is None:
    if "google.colab" not in sys.modules and "COLAB_RELEASE_TAG" not in os.environ:
        raise ModuleNotFoundError(  # in both languages: no package, no catalog to choose by
            "The course package is not installed. In a terminal, run: "
            f'pip install "{{COURSE_PACKAGE}}", then restart the kernel.\\n'
            "course 패키지가 설치되어 있지 않다. 터미널에서 "
            f'pip install "{{COURSE_PACKAGE}}" 명령을 실행한 다음 커널을 다시 시작하자.')
    print(f"⏳ pip install {{COURSE_PACKAGE}}")  # a minute or so; no words: no catalog yet
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", COURSE_PACKAGE],
                         capture_output=True, text=True)
    if pip.returncode != 0:
        raise RuntimeError("Installing the course package failed (course 패키지를 설치하지 "
                           "못했다):\\n" + pip.stderr[-2000:])
    importlib.invalidate_caches()
    from course.tools import report_installed

    report_installed()  # in your notebook's language, now that the course's catalog is here

import course  # before numba: without a GPU, course switches Numba to its simulator
from course.tools import backend

backend.show();'''


def source(requirement: str | None = None) -> str:
    """The text of the setup cell; ``requirement`` defaults to the configured git install.

    Tests pass a local wheel's ``file://`` URL to walk Colab's install path without network.
    """
    requirement = requirement or config.pip_requirement()
    if '"' in requirement or "\n" in requirement:
        raise ValueError(f"the pip requirement must not contain quotes or newlines: "
                         f"{requirement!r}")
    return _TEMPLATE.format(requirement=requirement)


def report_installed() -> None:
    """Say, in the student's language, that the setup cell has just installed the package.

    The setup cell runs before ``course`` (and its message catalog) exists, so while pip runs
    it shows only the command; this line, printed once the package is importable, is the
    sentence."""
    print(_("Installed the course package into this Colab runtime."))
