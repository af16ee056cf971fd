"""``similarity.csv``: one row per pair and notebook they share evidence in, and one row per
pair over all its notebooks (``notebook`` = ``all``); the solution is ``solution``, always
``student_b``."""

from __future__ import annotations

import csv
from pathlib import Path

from autograder.handin.report import to_cell
from autograder.similarity.answers import SOLUTION
from autograder.similarity.index import Document
from autograder.similarity.scoring import NOTEBOOK_THRESHOLD, Pair
from autograder.similarity.summary import ALL

COLUMNS = ["notebook", "student_a", "student_b", "score", "flagged", "share_of_a",
           "share_of_b", "reason"]


def covered(doc: Document, fingerprints: list[int]) -> float:
    """The share of ``doc``'s tokens inside the k-grams of ``fingerprints``."""
    if not doc.places:
        return 0.0
    hit = {i for h in fingerprints if h in doc.prints for start in doc.prints[h]
           for i in range(start, min(start + doc.k[h], len(doc.places)))}
    return len(hit) / len(doc.places)


def ordered(pair: Pair) -> tuple[str, str]:
    """The pair's two names, the solution second."""
    return (pair.b, pair.a) if pair.a == SOLUTION else (pair.a, pair.b)


def write(path: Path, pairs: list[Pair], documents: dict[str, dict[str, Document]]) -> int:
    """Write the CSV; returns how many rows."""
    rows = 0
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(COLUMNS)
        for pair in pairs:
            a, b = ordered(pair)
            a_cell, b_cell = to_cell(a), to_cell(b)  # a student's name is never a formula
            out.writerow([ALL, a_cell, b_cell, f"{pair.combined:.3f}",
                          str(pair.flagged).lower(), "", "", "; ".join(pair.reasons)])
            rows += 1
            by_combined = not any(n.score >= NOTEBOOK_THRESHOLD for n in pair.notebooks.values())
            for name, nb in sorted(pair.notebooks.items(), key=lambda kv: -kv[1].score):
                if not nb.shared:
                    continue
                docs = documents[name]
                marked = pair.flagged and (nb.score >= NOTEBOOK_THRESHOLD or by_combined)
                out.writerow([name, a_cell, b_cell, f"{nb.score:.3f}", str(marked).lower(),
                              f"{covered(docs[a], nb.fingerprints):.2f}",
                              f"{covered(docs[b], nb.fingerprints):.2f}", ""])
                rows += 1
    return rows
