"""The feedback folder holds what a student should see, and each page refuses to run their script.

nbgrader's ``generate_feedback`` copies every file of ``autograded/<student>/week4/`` into
``feedback/<student>/week4/`` beside the pages it writes: the trusted re-check's records
(``*.trusted.json``: timings, the sandbox's state, reasons), the viewing record
(``*.viewing.json``) and whatever the student handed in beside the notebooks (an ``.html`` or
``.svg`` of their own). :func:`finish` keeps one page per graded notebook, and nbgrader's
own ``timestamp.txt`` and ``submission_secret.txt`` (``release_feedback`` reads them to hand
the folder back to the right student; nobody renders them), and removes the rest; the hidden
tests' source was never there (``ClearHiddenTests``, see ``autograder.grading.config``).

Each page then gets a ``Content-Security-Policy`` as its first ``<head>`` element: no script
but MathJax from the CDN nbconvert's template names, no image but the ones embedded in the
page, no frames, forms, plugins or ``<base>``. The content was cleaned already
(:mod:`autograder.viewing.exporter`); the policy is there for anything a cleaner might miss,
since a feedback file is opened straight from disk, where no server sends headers.
"""

from __future__ import annotations

import shutil
from pathlib import Path

#: Where nbconvert's templates load MathJax from (``base/mathjax.html.j2``).
MATHJAX = "https://cdnjs.cloudflare.com/ajax/libs/mathjax/"
#: MathJax runs its configuration block with ``new Function`` ('unsafe-eval'); no inline
#: script, event handler or ``javascript:`` URL runs. Only the template's own configuration
#: block is on the page: every ``<script>`` is removed from what a student wrote, and cells of
#: unknown types never reach the page (:mod:`autograder.viewing.structure`).
POLICY = "; ".join([
    "default-src 'none'",
    f"script-src {MATHJAX} 'unsafe-eval'",
    f"style-src 'unsafe-inline' {MATHJAX}",
    f"font-src {MATHJAX} data:",
    "img-src data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-src 'none'",
    "object-src 'none'",
])
META = f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">'
HEAD = "<head>"
#: the files nbgrader itself writes into a submission folder (submit, collect, zip_collect),
#: which ``nbgrader release_feedback`` needs beside the feedback pages
NBGRADER_FILES = frozenset({"timestamp.txt", "submission_secret.txt"})


def protect_page(page: Path) -> bool:
    """Put :data:`META` first in the page's ``<head>``; False if the page has none near the
    top (not one of nbgrader's pages: left alone, and removed by :func:`finish`)."""
    html = page.read_text(encoding="utf-8", errors="replace")
    if META in html[:4096]:
        return True
    at = html.find(HEAD, 0, 1024)  # the template's own <head>, before any student content
    if at < 0:
        return False
    at += len(HEAD)
    page.write_text(html[:at] + "\n" + META + html[at:], encoding="utf-8")
    return True


def finish(root: Path, assignment: str) -> list[Path]:
    """Keep only ``feedback/<student>/<assignment>/<notebook>.html`` for the notebooks that
    were graded, each protected (and :data:`NBGRADER_FILES`); return what was removed."""
    removed: list[Path] = []
    for folder in sorted((root / "feedback").glob(f"*/{assignment}")):
        graded = root / "autograded" / folder.parent.name / assignment
        notebooks = {p.stem for p in graded.glob("*.ipynb")}
        for path in sorted(folder.iterdir()):
            plain = path.is_file() and not path.is_symlink()
            keep = plain and (path.name in NBGRADER_FILES or path.suffix == ".html"
                              and path.stem in notebooks and protect_page(path))
            if keep:
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
            removed.append(path)
    return removed
