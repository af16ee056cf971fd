"""Where the course package is installed from: the one place that names the repository.

Students on Colab (or any fresh machine) install ``course`` straight from the course's
**student repository**: the public repository the instructor pushes the student distribution
to (``make publish`` builds it from this private one: the ``course`` package, the releases,
the figures, a student README; never a solution, a hidden test or the grader). The URL, the
version and the git tag live here and nowhere else; everything that quotes them is generated
from this module: the setup cell that opens every notebook (:mod:`course.runtime.setup_cell`),
the Open-in-Colab links of both READMEs (``python -m autograder.release``, which
``make release`` runs) and the student distribution's ``pyproject.toml``
(``python -m autograder.publish``).

INSTRUCTOR: set ``COURSE_REPO_URL`` to your student repository, then run ``make release`` and
``make publish``. Bump ``COURSE_VERSION`` whenever the release changes: the setup cell pins
its tag (``COURSE_REF``), so a student's install never moves under them. The URL below is a
placeholder, and ``make release`` says so loudly until it is changed.
"""

from __future__ import annotations

from urllib.parse import urlparse

#: The URL this file ships with. A release built while COURSE_REPO_URL still equals it
#: installs from a repository that is not the course's: ``make release`` warns.
PLACEHOLDER_REPO_URL = "https://github.com/gpu-course/week4-student"

#: INSTRUCTOR: the public student repository that ``make publish``'s folder is pushed to
#: (placeholder value). Never this private repository: it holds the answers.
COURSE_REPO_URL = "https://github.com/gpu-course/week4-student"

#: INSTRUCTOR: the student distribution's version; bump it whenever the release changes.
COURSE_VERSION = "0.1.0"

#: The git tag students install and Colab opens: ``make publish`` tags the student
#: repository with it (``v`` + the version), the setup cell pins it.
COURSE_REF = f"v{COURSE_VERSION}"

#: Where the student notebooks sit inside the repository (what Open-in-Colab links open).
RELEASE_DIR = "release/week4"


def is_placeholder(url: str | None = None) -> bool:
    """True while the repository URL is still the one this file ships with."""
    return (url or COURSE_REPO_URL).rstrip("/").removeprefix("git+") == PLACEHOLDER_REPO_URL


def pip_requirement(url: str | None = None, ref: str | None = None) -> str:
    """The pip requirement for the course package, e.g. ``git+https://…/repo@main``."""
    url = (url or COURSE_REPO_URL).rstrip("/")
    ref = ref or COURSE_REF
    if not url.startswith(("https://", "http://", "git+", "file://")):
        raise ValueError(f"COURSE_REPO_URL must be an http(s) or file URL, got {url!r}")
    if url.startswith("git+"):
        url = url[len("git+"):]
    return f"git+{url}@{ref}"


def colab_install_command(url: str | None = None, ref: str | None = None) -> str:
    """The notebook line that installs the course package by hand (``%pip`` magic).

    Plain ``%pip install`` with no ``--upgrade``: pip keeps Colab's preinstalled numba-cuda,
    NumPy and ipywidgets, which already satisfy the package's requirements.
    """
    return f'%pip install -q "{pip_requirement(url, ref)}"'


def colab_url(notebook: str, url: str | None = None, ref: str | None = None,
              folder: str = RELEASE_DIR) -> str:
    """The Open-in-Colab address of ``notebook`` (a file name in ``folder``: by default
    :data:`RELEASE_DIR`, the English release; ``release-ko/week4`` for the Korean one).

    Colab opens notebooks straight from public GitHub repositories only, so the repository
    URL must be ``https://github.com/<owner>/<repo>``; anything else raises ``ValueError``
    naming the setting to change.
    """
    parsed = urlparse((url or COURSE_REPO_URL).removeprefix("git+"))
    parts = [p for p in parsed.path.rstrip("/").removesuffix(".git").split("/") if p]
    if parsed.scheme != "https" or parsed.netloc != "github.com" or len(parts) != 2:
        raise ValueError("Open-in-Colab links need COURSE_REPO_URL in course/runtime/config.py "
                         f"to be https://github.com/<owner>/<repo>, got {url or COURSE_REPO_URL!r}")
    owner, repo = parts
    return (f"https://colab.research.google.com/github/{owner}/{repo}/blob/{ref or COURSE_REF}/"
            f"{folder}/{notebook}")
