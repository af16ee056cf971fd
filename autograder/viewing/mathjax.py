"""MathJax for the formgrader from the instructor's own Jupyter server, not a CDN.

nbgrader's grading page calls nbconvert's ``mathjax()`` macro with no URL, so it loads MathJax
from cdnjs: on a firewalled cluster or an offline laptop every formula stays raw LaTeX.
jupyter-server-mathjax (a Jupyter project package, a dependency of the grading extra) serves
MathJax 2 at ``<base>/static/jupyter_server_mathjax/``; :func:`configure` puts
``jupyter_data/`` first on ``JUPYTER_PATH`` so that the ``formgrade`` template finds the
course's ``mathjax.html.j2`` (the same macro, that URL) before nbconvert's. The grading page's
Content-Security-Policy needs that path as a script, style and font source
(:data:`LOCAL_MATHJAX`, :mod:`autograder.viewing.formgrader`).

Feedback pages are files a student opens from disk, with no server: they keep the CDN.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The folder that holds ``nbconvert/templates/formgrade/mathjax.html.j2``.
DATA_DIR = Path(__file__).resolve().parent / "jupyter_data"
#: Where jupyter-server-mathjax serves MathJax, below the server's base URL.
LOCAL_MATHJAX = "static/jupyter_server_mathjax/"


def configure() -> None:
    """Put :data:`DATA_DIR` first on ``JUPYTER_PATH`` (in this process and its children)."""
    paths = [p for p in os.environ.get("JUPYTER_PATH", "").split(os.pathsep) if p]
    os.environ["JUPYTER_PATH"] = os.pathsep.join(
        [str(DATA_DIR), *(p for p in paths if p != str(DATA_DIR))])


def local_source(origin: str, base_url: str) -> str:
    """The CSP source of the locally served MathJax for a page of ``origin`` + ``base_url``."""
    return f"{origin}{base_url.rstrip('/')}/{LOCAL_MATHJAX}"
