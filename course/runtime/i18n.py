"""The student's language, English or Korean, and the message catalog that speaks it.

Every sentence a student reads (a check's error, the setup cell's line, the widget panel, the
sweep table, a figure's title and axes, the grader's notes) goes through :func:`_`, Python's
``gettext`` over the course's catalog: ``course/locale/ko/LC_MESSAGES/course.po``, extracted
from the source with Babel (``make catalog``) and compiled to the ``course.mo`` shipped beside
it as package data. English is the source text itself, so an English run needs no catalog.

Messages are whole sentences with named placeholders, filled after translating
(``_("{name} was never written for M={m}").format(name=..., m=...)``), so that a translation
may move the numbers and keeps every one of them.

Which language, first match wins:

1. the environment variable ``COURSE_LANG`` (``en`` or ``ko``): set by hand, or by the grader
   for the sandboxed kernel and the trusted re-check, from the notebook's metadata;
2. the running notebook's metadata ``metadata["course"]["language"]``, written at release:
   in JupyterLab the kernel knows its notebook's path (``__session__`` in the user namespace,
   or the ``JPY_SESSION_NAME`` environment variable), on Colab the front end hands over the
   notebook itself (``google.colab._message.blocking_request("get_ipynb")``);
3. English.

The notebook is looked up once per process (:func:`reset` forgets it, for tests).
"""

from __future__ import annotations

import gettext as _gettext
import json
import os
import sys
import unicodedata
import warnings
from collections.abc import Mapping, Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from course.runtime.josa import format_with_particles

#: The languages the course speaks; the first is the source language of every message.
LANGUAGES = ("en", "ko")
DEFAULT = "en"
#: The setting that overrides the notebook's metadata.
ENV = "COURSE_LANG"
#: The gettext domain: ``course/locale/<lang>/LC_MESSAGES/course.mo``.
DOMAIN = "course"
LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"


def N_(message: str) -> str:  # noqa: N802 - the gettext convention for "translate later"
    """Mark ``message`` for the catalog without translating it yet (module-level constants).

    Translate it where it is shown: ``_(MESSAGE)``.
    """
    return message


def check_language(value: Any, where: str) -> str:
    """``value`` if it is one of :data:`LANGUAGES`, else ``ValueError`` naming ``where``."""
    if value not in LANGUAGES:
        raise ValueError(f"{where} must be one of {', '.join(LANGUAGES)}, got {value!r}")
    return str(value)


def language_of(notebook: Mapping[str, Any]) -> str:
    """The language a notebook (its JSON as a dict) was released in; English if unmarked."""
    course = (notebook.get("metadata") or {}).get("course") or {}
    value = course.get("language") if isinstance(course, Mapping) else None
    if value is None:
        return DEFAULT
    return check_language(value, 'the notebook\'s metadata["course"]["language"]')


def override() -> str | None:
    """``COURSE_LANG`` when it is set (an error naming it if it names no language), else None."""
    value = os.environ.get(ENV, "").strip()
    return check_language(value, f"the environment variable {ENV}") if value else None


def language() -> str:
    """The language to speak now: ``COURSE_LANG``, else the running notebook's, else English."""
    return override() or _notebook_language()


def reset() -> None:
    """Forget the notebook's language and the loaded catalogs (tests; a changed notebook)."""
    _notebook_language.cache_clear()
    translator.cache_clear()


@lru_cache(maxsize=1)
def _notebook_language() -> str:
    notebook = running_notebook()
    return DEFAULT if notebook is None else language_of(notebook)


def _session_path() -> Path | None:
    """The notebook file this kernel runs, from JupyterLab's session (or None)."""
    name = None
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if callable(get) else None
    if shell is not None:
        name = getattr(shell, "user_ns", {}).get("__session__")
    name = name or os.environ.get("JPY_SESSION_NAME")
    if not name or not str(name).endswith(".ipynb"):
        return None
    path = Path(str(name))
    # The session path may be relative to the server's root; the kernel runs in the
    # notebook's folder.
    for candidate in (path, Path.cwd() / path, Path.cwd() / path.name):
        if candidate.is_file():
            return candidate
    return None


def _colab_notebook() -> dict[str, Any] | None:
    """The notebook Colab's front end has open (or None outside Colab, or if it won't say)."""
    if "google.colab" not in sys.modules:
        return None
    try:
        from google.colab import _message  # optional: exists on Colab only

        reply = _message.blocking_request("get_ipynb", request="", timeout_sec=10)
    except Exception:  # noqa: BLE001 - no answer from the front end: English, not a crash
        return None
    notebook = reply.get("ipynb") if isinstance(reply, Mapping) else None
    return dict(notebook) if isinstance(notebook, Mapping) else None


def running_notebook() -> dict[str, Any] | None:
    """The JSON of the notebook this kernel runs, if the front end lets the kernel find it."""
    path = _session_path()
    if path is not None:
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return notebook if isinstance(notebook, dict) else None
    return _colab_notebook()


class Message(str):
    """A translated message whose ``.format`` fits each Korean particle marker after a
    placeholder (``{name}(이)가``) to the value filled in (:mod:`course.runtime.josa`)."""

    __slots__ = ()

    def format(self, *args: Any, **kwargs: Any) -> str:  # noqa: A003 - str's own name
        return format_with_particles(str(self), args, kwargs)

    def format_map(self, mapping: Any) -> str:  # any mapping, as str's own
        return format_with_particles(str(self), (), mapping)


def _message(lang: str, text: str) -> str:
    """``text`` as a :class:`Message` where the language has particles to fit (Korean)."""
    return text if lang == DEFAULT else Message(text)


@cache
def translator(lang: str) -> _gettext.NullTranslations:
    """The catalog of ``lang`` (English: the messages as written)."""
    check_language(lang, "the language")
    if lang == DEFAULT:
        return _gettext.NullTranslations()
    try:
        return _gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang])
    except OSError:
        warnings.warn(f"the compiled {lang} catalog is missing from {LOCALE_DIR} (reinstall the "
                      "course package); messages stay in English", stacklevel=2)
        return _gettext.NullTranslations()


def _(message: str) -> str:
    """``message`` in the student's language (:func:`language`)."""
    lang = language()
    return _message(lang, translator(lang).gettext(message))


def ngettext(singular: str, plural: str, count: int) -> str:
    """The form of a message for ``count`` in the student's language (Korean has one form)."""
    lang = language()
    return _message(lang, translator(lang).ngettext(singular, plural, count))


def in_language(lang: str, message: str) -> str:
    """``message`` in ``lang``, whatever this process speaks (the grader, per notebook)."""
    return _message(lang, translator(lang).gettext(message))


def text_width(text: str) -> int:
    """Columns ``text`` takes in a fixed-width font (Hangul and other wide letters take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, width: int, left: bool = True) -> str:
    """``text`` padded with spaces to ``width`` columns (:func:`text_width`), left-aligned or
    right-aligned: for the plain-text tables a student prints."""
    fill = " " * max(0, width - text_width(text))
    return text + fill if left else fill + text


def aligned_lines(rows: Sequence[Sequence[str]], left: int = 1, rule: bool = False) -> list[str]:
    """A plain-text table: ``rows[0]`` is the header, every column as wide as its widest cell
    (:func:`text_width`, so Hangul lines up), the first ``left`` columns left-aligned and the
    others right-aligned, two spaces apart; ``rule``: a line of dashes under the header."""
    widths = [max(text_width(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(pad(cell, w, i < left) for i, (cell, w) in
                       enumerate(zip(row, widths, strict=True))) for row in rows]
    if rule:
        lines.insert(1, "  ".join("-" * w for w in widths))
    return lines
