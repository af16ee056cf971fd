"""Answers as winnowed fingerprints (copydetect's winnowing), and the class's index of them.

Each answer becomes normalised tokens (:mod:`.python_code`, :mod:`.cuda_code`,
:mod:`.prose`);
each k-gram of tokens is hashed (a stable hash: the same answer gives the same fingerprints in
every run, which Python's salted ``hash`` of copydetect's own k-gram function would not), and
copydetect's robust winnowing keeps one in each window — less the release's own (the starter
code and the prompt: what everyone was given). The index maps each fingerprint to the
documents that have it, so the pairs that share a rare one are found without comparing every
pair, and each fingerprint's document frequency is what :mod:`.scoring` weighs it by.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from autograder.similarity import cuda_code, prose, python_code
from autograder.similarity.answers import Answer, Given

#: k-gram length and winnowing window, in tokens: code, and the written answer's words
CODE_K, CODE_WINDOW = 12, 4
PROSE_K, PROSE_WINDOW = 5, 3

Token = tuple[str, int]


_TOKEN_HASHES: dict[str, int] = {}
_BASE = np.uint64(1_000_003)


def _token_hash(token: str) -> int:
    found = _TOKEN_HASHES.get(token)
    if found is None:
        digest = hashlib.blake2b(token.encode("utf-8", "replace"), digest_size=8).digest()
        found = _TOKEN_HASHES[token] = int.from_bytes(digest, "little")
    return found


def kgram_hashes(tokens: list[Token], k: int) -> np.ndarray:
    """A stable hash of every k-gram of ``tokens`` (a polynomial over the tokens' hashes,
    modulo 2**64), as signed 64-bit integers."""
    if len(tokens) < k:
        return np.zeros(0, dtype=np.int64)
    each = np.array([_token_hash(t) for t, _ in tokens], dtype=np.uint64)
    count = len(tokens) - k + 1
    out = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(k):
            out = out * _BASE + each[j:j + count]
    return out.view(np.int64)


def answer_tokens(answer: Answer, given: list[str]) -> list[Token]:
    """An answer's normalised tokens, each with the line (of the cell) it came from; none
    for code nested deeper than Python's stack (it is compared as nothing, not a crash)."""
    try:
        return _answer_tokens(answer, given)
    except RecursionError:
        return []


def _answer_tokens(answer: Answer, given: list[str]) -> list[Token]:
    if answer.kind == "markdown":
        return prose.tokens(answer.text, given)
    parsed = python_code.tokens(answer.text)
    if parsed is None:  # not Python: read it as C, which is what such a cell mostly holds
        return cuda_code.tokens(answer.text)
    out, strings = parsed
    for text, line in strings:
        if "__global__" in text or "__device__" in text:
            out = out + cuda_code.tokens(text, first_line=line)
    return out


@dataclass
class Document:
    """One owner's answers to one notebook: the answers, their tokens (with (answer, line)
    of each) and the fingerprints with the token positions where each k-gram starts."""

    owner: str
    answers: list[Answer]
    places: list[tuple[int, int]]  # token index -> (answer index, line)
    prints: dict[int, list[int]]  # fingerprint -> token positions
    k: dict[int, int] = field(default_factory=dict)  # fingerprint -> its k
    _answers_of: dict[int, frozenset[str]] = field(default_factory=dict, repr=False)

    def answers_of(self, fingerprint: int) -> frozenset[str]:
        """The grade_ids of the answers where ``fingerprint``'s k-grams start."""
        found = self._answers_of.get(fingerprint)
        if found is None:
            found = self._answers_of[fingerprint] = frozenset(
                self.answers[self.places[start][0]].grade_id
                for start in self.prints.get(fingerprint, ()))
        return found

    def lines(self, fingerprint: int) -> set[tuple[int, int]]:
        """The (answer index, line) pairs the k-grams of ``fingerprint`` cover."""
        k = self.k[fingerprint]
        return {self.places[i] for start in self.prints[fingerprint]
                for i in range(start, min(start + k, len(self.places)))}


def _fingerprints(tokens: list[Token], k: int, window: int, boilerplate: np.ndarray
                  ) -> dict[int, list[int]]:
    """Winnowed fingerprints -> the token positions where their k-grams start."""
    hashes = kgram_hashes(tokens, k)
    if not len(hashes):
        return {}
    from copydetect.utils import winnow  # heavy (~0.5 s): only when comparing, not per command

    selected, where = winnow(hashes, window, remove_duplicates=False)
    keep = ~np.isin(selected, boilerplate)
    out: dict[int, list[int]] = {}
    for h, i in zip(selected[keep].tolist(), where[keep].tolist(), strict=True):
        out.setdefault(h, []).append(i)
    return out


class NotebookIndex:
    """Every document of one notebook, and which documents hold each fingerprint."""

    def __init__(self, notebook: str, given: Given) -> None:
        self.notebook = notebook
        self.given = given
        self.documents: dict[str, Document] = {}
        self.postings: dict[int, list[str]] = defaultdict(list)
        self._given_text = {gid: [a.text for a in versions]
                            for gid, versions in given.cells.items()}
        code: list[list[Token]] = []
        words: list[list[Token]] = []
        for gid, versions in given.cells.items():
            for version in versions:
                toks = answer_tokens(version, self._given_text.get(gid, []))
                (words if version.kind == "markdown" else code).append(toks)
        for part in given.text:  # the notebook's own text: what everyone read
            (words if part.kind == "markdown" else code).append(answer_tokens(part, []))
        self._boiler = {
            "code": self._hashes(code, CODE_K), "markdown": self._hashes(words, PROSE_K)}

    def _hashes(self, docs: list[list[Token]], k: int) -> np.ndarray:
        out: set[int] = set()
        for toks in docs:
            out |= set(_fingerprints(toks, k, 1, np.zeros(0, dtype=np.int64)))
        return np.array(sorted(out), dtype=np.int64)

    def add(self, owner: str, answers: list[Answer]) -> Document:
        places: list[tuple[int, int]] = []
        prints: dict[int, list[int]] = {}
        ks: dict[int, int] = {}
        for kind, k, window in (("code", CODE_K, CODE_WINDOW),
                                ("markdown", PROSE_K, PROSE_WINDOW)):
            toks: list[Token] = []
            where: list[tuple[int, int]] = []
            for n, answer in enumerate(answers):
                if (answer.kind == "markdown") != (kind == "markdown"):
                    continue
                mine = answer_tokens(answer, self._given_text.get(answer.grade_id, []))
                toks += [(f"answer:{answer.grade_id}", 0)] + mine
                where += [(n, 0)] + [(n, line) for _, line in mine]
            found = _fingerprints(toks, k, window, self._boiler[kind])
            for h, starts in found.items():
                prints.setdefault(h, []).extend(s + len(places) for s in starts)
                ks[h] = k
            places += where
        doc = Document(owner, answers, places, prints, ks)
        self.documents[owner] = doc
        for h in prints:
            self.postings[h].append(owner)
        return doc
