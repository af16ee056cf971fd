"""Where the course package is installed from: the one place that names the repository.

Students on Colab (or any fresh machine) install ``course`` straight from the course's git
repository. The URL and the git ref live here and nowhere else; notebook 00 quotes the
resulting ``%pip install`` line, and ``tests/test_environment.py`` checks that the quote and
this module agree.

INSTRUCTOR: set ``COURSE_REPO_URL`` to your course repository (and ``COURSE_REF`` to the tag
or branch students should get), then regenerate the release. The URL below is a placeholder.
"""

from __future__ import annotations

#: INSTRUCTOR: the public git repository that holds this course package (placeholder value).
COURSE_REPO_URL = "https://github.com/gpu-course/week4-roofline-tiling"

#: INSTRUCTOR: the branch or tag students install; pin a tag once the term starts.
COURSE_REF = "main"


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
    """The exact notebook line that installs the course package on Colab.

    Plain ``%pip install`` with no ``--upgrade``: pip keeps Colab's preinstalled numba-cuda,
    NumPy and ipywidgets, which already satisfy the package's requirements.
    """
    return f'%pip install -q "{pip_requirement(url, ref)}"'
