"""A Jupyter Server extension: the formgrader's submission pages run only the formgrader's script.

nbgrader's formgrader shows a student's notebook as HTML on the instructor's own Jupyter
origin, logged in, with the XSRF cookie at hand; whatever script ran there could write files,
open a terminal or read the solutions. The content is cleaned already
(:mod:`autograder.viewing.exporter`, :mod:`autograder.viewing.notebook`); this extension adds
a Content-Security-Policy to the two handlers that serve a submission, so that even content a
cleaner missed cannot run:

* **the grading page** (``/formgrader/submissions/<id>/``) cannot be a ``sandbox`` without
  ``allow-same-origin`` — its own script saves the grades through the formgrader's API with the
  instructor's cookie. Its policy lets run only nbgrader's scripts from
  ``/formgrader/static/``, MathJax from this server (``/static/jupyter_server_mathjax/``,
  :mod:`autograder.viewing.mathjax`), and the exact inline scripts and event
  handlers of nbgrader's page template, by their SHA-256 (taken from the template rendered for
  this submission, student names left out); no other inline script, event handler,
  ``javascript:`` URL, frame, plugin, form or ``<base>``, and no request but to this server;
* **files handed in beside the notebooks** (``/formgrader/submissions/<id>/<file>``: an
  ``.html`` or ``.svg`` of the student's) are served as Jupyter Server serves ``/files``
  since 2.20: ``sandbox`` without ``allow-same-origin``, no script.

Every other formgrader route (Manage Students, the gradebook's pages, Manage Submissions, the
JSON API) is guarded by :mod:`autograder.viewing.pages`: safe URL parts only, templates
escaped, a policy on every response.

Enabled for the instructor's Jupyter by ``make install``, which puts
``jupyter-config/jupyter_server_config.d/week4-viewing.json`` into the environment's
``etc/jupyter/jupyter_server_config.d`` (as a package turns its server extension on);
``jupyter server extension list`` shows it.
"""

from __future__ import annotations

from typing import Any

from autograder.viewing.mathjax import local_source
from autograder.viewing.pages import guard_pages
from autograder.viewing.policy import hash_source, inventory

#: The files a student handed in, as Jupyter Server serves its own ``/files``.
FILES_POLICY = "; ".join([
    "sandbox", "default-src 'none'", "img-src 'self' data:", "style-src 'unsafe-inline'",
    "frame-ancestors 'self'",
])



def template_hashes(environment: Any, resources: dict[str, Any]) -> list[str]:
    """The SHA-256 sources of the inline scripts and handlers of the formgrader's header and
    navigation bar, rendered for ``resources`` with the student's names left out."""
    macros = environment.get_template("formgrade_macros.html.j2").module
    anonymous = {**resources, "student": "", "first_name": "", "last_name": ""}
    found = inventory(str(macros.header(anonymous)) + str(macros.nav(anonymous)))
    return sorted({hash_source(text) for text in found.scripts + found.handlers})


def page_policy(origin: str, base_url: str, hashes: list[str]) -> str:
    """The grading page's Content-Security-Policy (see the module's docstring)."""
    static = f"{origin}{base_url.rstrip('/')}/formgrader/static/"
    # MathJax from this server (autograder/viewing/mathjax.py): no other origin
    mathjax = local_source(origin, base_url)
    return "; ".join([
        "default-src 'none'",
        # 'unsafe-eval': underscore's templates and MathJax's configuration compile code
        f"script-src {static} {mathjax} 'unsafe-eval' 'unsafe-hashes' {' '.join(hashes)}",
        f"style-src 'self' 'unsafe-inline' {mathjax}",
        f"font-src 'self' data: {mathjax}",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'", "form-action 'none'", "frame-src 'none'", "object-src 'none'",
        "frame-ancestors 'self'",
    ])


class _PolicyExporter:
    """The formgrader's exporter, seen by one grading-page request: rendering the page also
    sets the page's policy on the response."""

    def __init__(self, handler: Any, exporter: Any) -> None:
        self.handler, self.exporter = handler, exporter

    def from_filename(self, filename: str, resources: dict[str, Any] | None = None,
                      **kw: Any) -> Any:
        resources = resources if resources is not None else {}
        out = self.exporter.from_filename(filename, resources=resources, **kw)
        request = self.handler.request
        hashes = template_hashes(self.exporter.environment, resources)
        self.handler.set_header("Content-Security-Policy", page_policy(
            f"{request.protocol}://{request.host}", self.handler.base_url, hashes))
        return out

    def __getattr__(self, name: str) -> Any:
        return getattr(self.exporter, name)


def _page_exporter(handler: Any) -> _PolicyExporter:
    return _PolicyExporter(handler, handler.settings["nbgrader_exporter"])


def _files_policy(handler: Any) -> str:
    return FILES_POLICY


def guard() -> None:
    """Give nbgrader's two submission handlers their policies, and every other formgrader
    route its checks and policy (:func:`autograder.viewing.pages.guard_pages`); idempotent."""
    from nbgrader.server_extensions.formgrader import handlers

    guard_pages()

    handlers.SubmissionHandler.exporter = property(_page_exporter)
    handlers.SubmissionFilesHandler.content_security_policy = property(_files_policy)


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": __name__}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    guard()
    serverapp.log.info("week 4: every formgrader page runs only the formgrader's own script "
                       "and answers only to safe names (autograder.viewing.formgrader, "
                       "autograder.viewing.pages)")
