"""Where the course package is installed from: the one place that names the repository.

Students on Colab (or any fresh machine) install ``course`` straight from the course's git
repository. The URL and the git ref live here and nowhere else; everything that quotes them
is generated from this module: the setup cell that opens every notebook
(:mod:`course.runtime.setup_cell`), notebook 00's install line and the README's Open-in-Colab links
(``python -m autograder.release``, which ``make release`` runs).

INSTRUCTOR: set ``COURSE_REPO_URL`` to your course repository (and ``COURSE_REF`` to the tag
or branch students should get), then run ``make release``. The URL below is a placeholder,
and ``make release`` says so loudly until it is changed.
"""

from __future__ import annotations

from urllib.parse import urlparse

#: The URL this file ships with. A release built while COURSE_REPO_URL still equals it
#: installs from a repository that is not the course's: ``make release`` warns.
PLACEHOLDER_REPO_URL = "https://github.com/gpu-course/week4-roofline-tiling"

#: INSTRUCTOR: the public git repository that holds this course package (placeholder value).
COURSE_REPO_URL = "https://github.com/gpu-course/week4-roofline-tiling"

#: INSTRUCTOR: the branch or tag students install; pin a tag once the term starts.
COURSE_REF = "main"

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
