"""``similarity.html``: the pairs ranked, each flagged pair's answers side by side with the
matching lines marked, and the pair's evidence in its other notebooks.

As safe to open as the feedback, by construction: everything a student wrote or named is
escaped text (``html.escape``), the page has no script at all, and its policy
(:data:`POLICY`, a ``<meta>`` first in ``<head>``) allows nothing but the page's one style
block, by its hash: no script, no image, no request to any origin would run or load even if
something slipped through.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from autograder.similarity.index import Document
from autograder.similarity.report_csv import covered, ordered
from autograder.similarity.scoring import (
    COMBINED_THRESHOLD,
    NOTEBOOK_THRESHOLD,
    NotebookPair,
    Pair,
)
from autograder.viewing.policy import static_page_policy

#: unflagged pairs shown below the flagged ones, strongest first (near misses, for context)
UNFLAGGED_SHOWN = 15

STYLE = """
body { font-family: sans-serif; margin: 1.5em; color: #222; }
table.scores td, table.scores th { padding: 0.2em 0.8em; text-align: left; }
.flagged { color: #a00; font-weight: bold; }
.side { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
pre { background: #f6f6f6; padding: 0.5em; overflow-x: auto; font-size: 0.85em; }
mark { background: #ffd54f; }
section { border-top: 1px solid #ccc; margin-top: 1.5em; }
"""
POLICY = static_page_policy(STYLE)


def _answer_lines(doc: Document, marked: set[tuple[int, int]]) -> str:
    parts = []
    for n, answer in enumerate(doc.answers):
        parts.append(f"<b>{escape(answer.grade_id)}</b>\n")
        for number, line in enumerate(answer.text.split("\n"), start=1):
            text = escape(line) or " "
            parts.append(f"<mark>{text}</mark>\n" if (n, number) in marked else text + "\n")
    return "".join(parts)


def _side_by_side(nb: NotebookPair, a: Document, b: Document) -> str:
    lines_a = {place for h in nb.fingerprints if h in a.prints for place in a.lines(h)}
    lines_b = {place for h in nb.fingerprints if h in b.prints for place in b.lines(h)}
    return (f"<h4>{escape(nb.notebook)}: score {nb.score:.2f}; matching: "
            f"{covered(a, nb.fingerprints):.0%} of {escape(a.owner)}'s answer, "
            f"{covered(b, nb.fingerprints):.0%} of {escape(b.owner)}'s</h4>"
            f'<div class="side"><pre>{_answer_lines(a, lines_a)}</pre>'
            f"<pre>{_answer_lines(b, lines_b)}</pre></div>")


def _pair_section(number: int, pair: Pair, documents: dict[str, dict[str, Document]]) -> str:
    a, b = ordered(pair)
    head = (f'<section><h3>{number}. {escape(a)} and {escape(b)}: '
            f'{"<span class=flagged>flagged</span>" if pair.flagged else "not flagged"}'
            f" (combined {pair.combined:.2f})</h3>")
    reasons = "".join(f"<li>{escape(r)}</li>" for r in pair.reasons)
    rows = "".join(
        f"<tr><td>{escape(name)}</td><td>{nb.score:.2f}</td></tr>"
        for name, nb in sorted(pair.notebooks.items(), key=lambda kv: -kv[1].score))
    body = [head, f"<ul>{reasons}</ul>" if reasons else "",
            f'<table class="scores"><tr><th>notebook</th><th>score</th></tr>{rows}</table>']
    if pair.flagged:
        for name, nb in sorted(pair.notebooks.items(), key=lambda kv: -kv[1].score):
            if nb.shared:
                body.append(_side_by_side(nb, documents[name][a], documents[name][b]))
    return "".join(body) + "</section>"


def write(path: Path, pairs: list[Pair], documents: dict[str, dict[str, Document]],
          students: int) -> None:
    """Write the report page."""
    flagged = [p for p in pairs if p.flagged]
    near = [p for p in pairs if not p.flagged][:UNFLAGGED_SHOWN]
    sections = [_pair_section(n, p, documents) for n, p in enumerate(flagged + near, start=1)]
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{POLICY}">
<title>Similar answers: week 4</title><style>{STYLE}</style></head><body>
<h1>Similar answers across the class</h1>
<p>{students} student(s) compared with each other and with the instructor's solution
(<code>solution</code>), notebook by notebook. {len(flagged)} pair(s) flagged: a notebook's
score at least {NOTEBOOK_THRESHOLD:.2f}, or {COMBINED_THRESHOLD:.2f} over two or more notebooks
together. A score says how much of the smaller answer the two share, counting what is rare in
the class; the release's starter code and prompts count for nothing. <b>A flag is a reason for
a person to read two answers, never a verdict and never a grade.</b> Marked lines are the parts
that match. Below the flagged pairs: the {len(near)} strongest pairs not flagged.</p>
{"".join(sections) or "<p>No pair shares anything rare.</p>"}
</body></html>
"""
    path.write_text(page, encoding="utf-8")
