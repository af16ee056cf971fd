"""Every formgrader page gets a policy, and none prints a URL part it was not meant to.

nbgrader 0.9.6's formgrader pages other than the grading page print parts of their own URL
into the page unescaped — into HTML (``<li class="active">{{ student_id }}</li>``) and into
inline script (``var student_id = "{{ student_id }}";``) — and are served with no
Content-Security-Policy: a link ``…/manage_students/%3Cimg src=x onerror=…%3E`` that a TA
follows runs script with the instructor's session. And the tables of those pages are drawn by
nbgrader's script from names in the gradebook. :func:`guard_pages` fixes both, for every
formgrader route, without changing nbgrader's files:

* **URL parts** (student ids, assignment and notebook names, submission ids) are held to the
  course's one rule for names (:data:`autograder.viewing.names.SAFE_ID`): a request whose
  part breaks it is answered ``404`` with a page that does not repeat it;
* **templates** are rendered with Jinja's autoescaping on (nbgrader's environment has it
  off), so nothing of the namespace — the formgrader's configuration included — is markup;
* **every response** of a formgrader handler carries a policy: a page rendered from nbgrader's
  templates (:data:`PAGE_POLICY`) runs only nbgrader's scripts from ``/formgrader/static/``
  and, by their SHA-256, the inline scripts and handlers of the template as rendered for this
  (checked) request — no other inline script or handler, no ``eval``, no request but to this
  server, no ``<base>``, form, frame or plugin; every other response (the JSON API, redirects,
  errors) gets ``default-src 'none'``. The grading page and the files handed in keep the
  policies of :mod:`autograder.viewing.formgrader`, which set their own header.

MathJax runs on the grading page only, and may evaluate configuration blocks there: no student
content can place one, since every ``<script>`` is removed from what a student wrote
(:mod:`autograder.viewing.policy`) and cells and outputs of unknown types never reach the page
(:mod:`autograder.viewing.structure`); the browser test puts such blocks in both places.
"""

from __future__ import annotations

import functools
from typing import Any

from autograder.viewing.names import is_safe
from autograder.viewing.policy import hash_source, inventory

#: Any formgrader response that is not a page rendered from nbgrader's templates.
STRICT_POLICY = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
NOT_FOUND = ("Not found: this address names no assignment, notebook, student or submission "
             "of this course.")
_GUARDED = "_week4_guarded"



def page_policy(origin: str, base_url: str, html: str) -> str:
    """The policy of a formgrader page rendered from nbgrader's templates (see the module)."""
    found = inventory(html)
    hashes = sorted({hash_source(text) for text in found.scripts + found.handlers})
    static = f"{origin}{base_url.rstrip('/')}/formgrader/static/"
    return "; ".join([
        "default-src 'none'",
        f"script-src {static} 'unsafe-hashes' {' '.join(hashes)}".rstrip(),
        "style-src 'self' 'unsafe-inline'",
        "font-src 'self' data:",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'", "form-action 'none'", "frame-src 'none'", "object-src 'none'",
        "frame-ancestors 'self'",
    ])


def safe_parts(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """True when every URL part a route captured follows the rule for names."""
    return all(is_safe(part)
               for part in (*args, *kwargs.values()) if part is not None)


def _checked(get: Any) -> Any:
    @functools.wraps(get)
    def checked_get(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not safe_parts(args, kwargs):
            self.set_status(404)
            self.set_header("Content-Type", "text/plain; charset=utf-8")
            self.set_header("Content-Security-Policy", STRICT_POLICY)
            self.finish(NOT_FOUND)
            return None
        return get(self, *args, **kwargs)

    setattr(checked_get, _GUARDED, True)
    return checked_get


def _escaping_environment(handler: Any) -> Any:
    """nbgrader's template environment with autoescaping on (built once per server)."""
    settings = handler.settings
    env = settings.get("week4_jinja2_env")
    if env is None:
        from jinja2 import Environment

        original = settings["nbgrader_jinja2_env"]
        env = Environment(loader=original.loader, autoescape=True)
        env.filters.update(original.filters)
        env.globals.update(original.globals)
        settings["week4_jinja2_env"] = env
    return env


def _render(self: Any, name: str, **ns: Any) -> str:
    """nbgrader's ``BaseHandler.render``, escaped, and the page's policy set from its scripts."""
    html = _escaping_environment(self).get_template(name).render(**ns)
    request = self.request
    self.set_header("Content-Security-Policy", page_policy(
        f"{request.protocol}://{request.host}", self.base_url, html))
    return str(html)


def _strict_policy(handler: Any) -> str:
    return STRICT_POLICY


def route_handlers() -> list[Any]:
    """nbgrader's formgrader handler classes (pages and API), as its extension registers them."""
    from nbgrader.server_extensions.formgrader import apihandlers, base, handlers

    found = []
    for entry in [*handlers.default_handlers, *apihandlers.default_handlers]:
        cls = entry[1]
        if isinstance(cls, type) and issubclass(cls, base.BaseHandler) and cls not in found:
            found.append(cls)
    return found


def guard_pages() -> None:
    """Check every formgrader route's URL parts, escape its templates, give every response a
    policy (idempotent; see the module's docstring)."""
    from nbgrader.server_extensions.formgrader import base, handlers

    base.BaseHandler.render = _render
    base.BaseHandler.content_security_policy = property(_strict_policy)
    for cls in route_handlers():
        if cls is handlers.SubmissionFilesHandler:
            continue  # a path, not a name: served sandboxed (autograder.viewing.formgrader)
        for method in ("get", "put", "post", "delete"):
            own = cls.__dict__.get(method)
            if own is not None and not getattr(own, _GUARDED, False):
                setattr(cls, method, _checked(own))
