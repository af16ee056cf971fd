"""Pairs of students scored, notebook by notebook and over all their notebooks together.

A fingerprint many students share is evidence of nothing (short kernels written from the same
lecture converge): each weighs ``log(common / df)``, where ``df`` is how many documents of the
notebook hold it and ``common`` is a tenth of them (at least :data:`MIN_COMMON`), so one that
a tenth of the class wrote weighs nothing. A pair's score in a notebook is the weight the two
share over the smaller one's weight plus :data:`DAMPING` pair-unique fingerprints (a short
answer cannot reach 1 on little evidence), between 0 and 1, scaled down while what they share
weighs less than :data:`EVIDENCE` pair-unique fingerprints (short kernels written to the
notebook's recipe converge); or, where higher, the same for its
most alike answer cell alone, with :data:`ANSWER_DAMPING` times the damping (one kernel copied
beside answers of one's own). Over all notebooks, the shared
and the smaller weights are summed first, so the same unusual choices in five notebooks
outweigh one short kernel. A pair is flagged when one notebook's score reaches
:data:`NOTEBOOK_THRESHOLD` or, over two or more notebooks, the combined score reaches
:data:`COMBINED_THRESHOLD`: measured on the sample class (docs/similarity.md), never a grade.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations

from autograder.similarity.index import NotebookIndex

#: a fingerprint held by this share of a notebook's documents (or by MIN_COMMON) weighs 0
COMMON_SHARE = 0.1
MIN_COMMON = 6
#: pair-unique fingerprints added to the smaller weight before dividing
DAMPING = 4.0
#: evidence below this many pair-unique fingerprints' weight scales a score down in proportion:
#: two short kernels that follow the notebook's recipe line by line (the naive kernel) share
#: everything and still say little
EVIDENCE = 15.0
#: one answer cell on its own must carry this many times the damping of a notebook (a short
#: kernel alone is weak evidence: the naive kernel written from the lecture looks like the
#: lecture's)
ANSWER_DAMPING = 3.0
#: the flags, measured on sample_class/similarity (docs/similarity.md)
NOTEBOOK_THRESHOLD = 0.55
COMBINED_THRESHOLD = 0.45
#: pairs scoring below this in every notebook are not listed (nor in similarity.csv)
FLOOR = 0.05


def _score(shared: float, smaller: float, damping: float, unit: float) -> float:
    """Shared over smaller (damped), scaled down while the evidence is under
    :data:`EVIDENCE` pair-unique fingerprints."""
    if not shared:
        return 0.0
    return shared / (smaller + damping) * min(1.0, shared / (EVIDENCE * unit))


@dataclass
class NotebookPair:
    """Two documents of one notebook: what they share and how much that weighs."""

    notebook: str
    a: str
    b: str
    shared: float
    smaller: float
    damping: float
    fingerprints: list[int] = field(default_factory=list)
    #: grade_id -> (shared, smaller) within that one answer cell
    answers: dict[str, tuple[float, float]] = field(default_factory=dict)

    @property
    def unit(self) -> float:
        """The weight of one fingerprint that only this pair holds."""
        return self.damping / DAMPING

    @property
    def whole(self) -> float:
        """The score of the notebook's answers taken together."""
        return _score(self.shared, self.smaller, self.damping, self.unit)

    def answer_scores(self) -> dict[str, float]:
        """Each answer's own score: one copied kernel beside answers of one's own."""
        return {gid: _score(shared, smaller, ANSWER_DAMPING * self.damping, self.unit)
                for gid, (shared, smaller) in self.answers.items() if shared}

    @property
    def score(self) -> float:
        """The notebook's score: its answers together, or its most alike answer alone."""
        return max([self.whole, *self.answer_scores().values()])


@dataclass
class Pair:
    """Two students (or a student and the solution) over every notebook both handed in."""

    a: str
    b: str
    notebooks: dict[str, NotebookPair]
    flagged: bool = False
    reasons: list[str] = field(default_factory=list)

    @property
    def combined(self) -> float:
        shared = sum(p.shared for p in self.notebooks.values())
        smaller = sum(p.smaller for p in self.notebooks.values())
        widest = max(self.notebooks.values(), key=lambda p: p.damping)
        return _score(shared, smaller, widest.damping, widest.unit)

    @property
    def strongest(self) -> float:
        return max([self.combined, *(p.score for p in self.notebooks.values())])


def weights(index: NotebookIndex) -> dict[int, float]:
    """Each fingerprint's weight in this notebook (0 for one that many documents hold)."""
    common = max(COMMON_SHARE * len(index.documents), MIN_COMMON)
    return {h: math.log(common / len(owners)) for h, owners in index.postings.items()
            if len(owners) < common}


def _damping(index: NotebookIndex) -> float:
    common = max(COMMON_SHARE * len(index.documents), MIN_COMMON)
    return DAMPING * math.log(common / 2)


def totals(index: NotebookIndex) -> dict[str, float]:
    """Each document's weight: the sum over its fingerprints."""
    weight = weights(index)
    return {owner: sum(weight.get(h, 0.0) for h in doc.prints)
            for owner, doc in index.documents.items()}


def answer_totals(index: NotebookIndex, weight: dict[int, float]
                  ) -> dict[str, dict[str, float]]:
    """Each document's weight answer by answer (grade_id -> weight)."""
    out: dict[str, dict[str, float]] = {}
    for owner, doc in index.documents.items():
        mine: dict[str, float] = defaultdict(float)
        for h in doc.prints:
            w = weight.get(h, 0.0)
            if w > 0:
                for gid in doc.answers_of(h):
                    mine[gid] += w
        out[owner] = mine
    return out


def _by_answer(index: NotebookIndex, pair: NotebookPair, weight: dict[int, float],
               per_answer: dict[str, dict[str, float]]) -> None:
    a, b = index.documents[pair.a], index.documents[pair.b]
    shared: dict[str, float] = defaultdict(float)
    for h in pair.fingerprints:
        for gid in a.answers_of(h) & b.answers_of(h):
            shared[gid] += weight[h]
    pair.answers = {gid: (value, min(per_answer[pair.a][gid], per_answer[pair.b][gid]))
                    for gid, value in shared.items()}


def notebook_pairs(index: NotebookIndex) -> dict[tuple[str, str], NotebookPair]:
    """Every pair of this notebook's documents that may score :data:`FLOOR` or more, found
    through the index (the postings of each rare fingerprint), not by trying every pair: the
    shared weight is summed posting by posting, and only a pair whose shared weight could
    reach the floor is looked at answer by answer."""
    weight = weights(index)
    total = totals(index)
    damping = _damping(index)
    owners = sorted(index.documents)
    number = {owner: n for n, owner in enumerate(owners)}
    size = len(owners)
    shared: dict[int, float] = defaultdict(float)
    for h, w in weight.items():
        if w <= 0:
            continue
        for i, j in combinations(sorted(number[o] for o in index.postings[h]), 2):
            shared[i * size + j] += w
    per_answer = answer_totals(index, weight)
    out: dict[tuple[str, str], NotebookPair] = {}
    for key, value in shared.items():
        a, b = owners[key // size], owners[key % size]
        smaller = min(total[a], total[b])
        if value / (smaller + damping) < FLOOR and value / (ANSWER_DAMPING * damping) < FLOOR:
            continue  # neither the notebook nor any one answer reaches the floor
        docs = index.documents
        common = [h for h in docs[a].prints.keys() & docs[b].prints.keys()
                  if weight.get(h, 0.0) > 0]
        pair = NotebookPair(index.notebook, a, b, value, smaller, damping, common)
        _by_answer(index, pair, weight, per_answer)
        out[a, b] = pair
    return out


def pairs(indexes: list[NotebookIndex]) -> list[Pair]:
    """Every pair with any shared evidence, flagged or not, strongest first."""
    found: dict[tuple[str, str], Pair] = {}
    for index in indexes:
        for key, one in notebook_pairs(index).items():
            found.setdefault(key, Pair(key[0], key[1], {})).notebooks[index.notebook] = one
    for index in indexes:  # a notebook both handed in and share nothing in dilutes the rest
        total = totals(index)
        for pair in found.values():
            if index.notebook not in pair.notebooks and pair.a in total and pair.b in total:
                pair.notebooks[index.notebook] = NotebookPair(
                    index.notebook, pair.a, pair.b, 0.0, min(total[pair.a], total[pair.b]),
                    _damping(index))
    for pair in found.values():
        flag(pair)
    return sorted(found.values(), key=lambda p: (-p.strongest, p.a, p.b))


def flag(pair: Pair) -> None:
    """Flag ``pair`` on strong evidence, saying which."""
    for name, nb in sorted(pair.notebooks.items()):
        if nb.score < NOTEBOOK_THRESHOLD:
            continue
        alike = sorted(nb.answer_scores().items(), key=lambda kv: -kv[1])[:3]
        which = ", ".join(f"{gid} {score:.2f}" for gid, score in alike)
        pair.reasons.append(f"{name}: score {nb.score:.2f} (threshold "
                            f"{NOTEBOOK_THRESHOLD:.2f}); answers most alike: {which}")
    if len(pair.notebooks) >= 2 and pair.combined >= COMBINED_THRESHOLD:
        pair.reasons.append(f"{len(pair.notebooks)} notebooks together: score "
                            f"{pair.combined:.2f} (threshold {COMBINED_THRESHOLD:.2f})")
    pair.flagged = bool(pair.reasons)
