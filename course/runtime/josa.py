"""Korean particles (josa) that fit the name before them, whatever the name turns out to be.

A Korean particle depends on the last sound of the word before it: ``커널이`` but ``함수가``,
``커널을`` but ``함수를``, ``파일로`` and ``함수로`` but ``행렬으로``… A message whose name is
filled in at run time (``{name}이 아직 작성되지 않았다``) cannot choose in advance, and gluing one
form on reads wrong half the time ("predict_occupancy이"). So the Korean catalog writes both
forms after such a placeholder, the usual way (``{name}(이)가``, ``{cell}(을)를``,
``{path}(으)로``), and :func:`format_with_particles` — what ``.format`` does on a Korean
message (``course.runtime.i18n``) — picks the one that fits the value put in the placeholder.

How a name's last sound is read (:func:`final_sound`), first match wins:

* trailing punctuation and closing marks (`` ` ``, ``)``, ``]``, quotes, ``.``, ``…``) are skipped;
  a trailing ``%`` reads "퍼센트" (a vowel);
* a Hangul syllable: its final consonant (받침), ㄹ told apart (for ``(으)로``);
* a digit: the last digit as a Sino-Korean number (0 영, 1 일, 2 이, 3 삼, 4 사, 5 오, 6 육,
  7 칠, 8 팔, 9 구), so ``16`` → 육 (consonant), ``32`` → 이 (vowel), ``1024`` → 사; tens,
  hundreds and thousands end in 0 and read 십, 백, 천 (consonants), as 0 does;
* Latin letters, the last run of them: a single letter or an all-capital run (``A``, ``GPU``,
  ``SM``) is read letter by letter, so its last letter's name decides: L and R (엘, 알) end in ㄹ,
  M and N (엠, 엔) in a consonant, every other letter's name in a vowel; a word (``gemm_naive``,
  ``tile``, ``kernel``) is read as an English word as Korean writes it: a silent final ``e``
  after a consonant is dropped (``tile`` → 타일, ``naive`` → 나이브), then ``l`` ends in ㄹ
  (``kernel`` → 커널, ``tile`` → 타일), ``m``, ``n``, ``ng`` and ``ck`` in a consonant
  (``gemm`` → 젬, ``block`` → 블록), and every other letter in a vowel (``occupancy`` →
  오큐펀시, ``ipynb``, ``shared`` → 셰어드, ``matrix`` → 매트릭스): English final stops and
  fricatives are written with a following ㅡ in Korean loanwords, so they read as vowels;
* anything else (no letter or digit at all): a vowel (the particle after a vowel is the
  one that reads least wrong after a symbol).
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from typing import Any, Literal

Sound = Literal["vowel", "consonant", "rieul"]

#: each two-form particle: (after a consonant, after a vowel); after ㄹ as after a vowel, except
#: for ``(으)`` particles, handled apart.
PAIRS: dict[str, tuple[str, str]] = {
    "(이)가": ("이", "가"), "(을)를": ("을", "를"), "(은)는": ("은", "는"),
    "(과)와": ("과", "와"), "(와)과": ("과", "와"), "(아)야": ("아", "야"),
}
#: ``(이)`` before another ending (``(이)다``, ``(이)라는``, ``(이)나``) and ``(으)`` before one
#: (``(으)로``, ``(으)로서``): the bracketed syllable is kept after a consonant only (for ``(으)``:
#: a consonant other than ㄹ).
OPTIONAL = ("(이)", "(으)")
MARKER = re.compile(r"\((?:이|을|은|과|와|아|으)\)[가-힣]*")
_SKIPPED = "`'\")]}>.,;:!?…*_ \t\n"
_DIGITS: dict[str, Sound] = {"0": "consonant", "1": "rieul", "2": "vowel", "3": "consonant",
                             "4": "vowel", "5": "vowel", "6": "consonant", "7": "rieul",
                             "8": "rieul", "9": "vowel"}
_LATIN_RUN = re.compile(r"[A-Za-z]+$")


def _letter_name(letter: str) -> Sound:
    """The last sound of a Latin letter's Korean name (에이, 비, 씨 … 엘, 엠, 엔, 알 …)."""
    upper = letter.upper()
    if upper in "LR":
        return "rieul"
    return "consonant" if upper in "MN" else "vowel"


def _word(word: str) -> Sound:
    """The last sound of an English word written in Hangul (see the module docstring)."""
    lower = word.lower()
    if len(lower) > 2 and lower.endswith("e") and lower[-2] not in "aeiouy":
        lower = lower[:-1]
    if lower.endswith("l"):
        return "rieul"
    if lower.endswith(("m", "n", "ng", "ck")):
        return "consonant"
    return "vowel"


def final_sound(text: str) -> Sound:
    """How ``text`` ends when read aloud in Korean: a vowel, ㄹ, or another consonant."""
    stripped = text.rstrip(_SKIPPED + "([{")  # make_gemm_tiled(16) → 6; `f()` → f
    if not stripped:
        return "vowel"
    last = stripped[-1]
    if last == "%":
        return "vowel"
    if "가" <= last <= "힣":
        coda = (ord(last) - ord("가")) % 28
        return "vowel" if coda == 0 else "rieul" if coda == 8 else "consonant"
    if last in _DIGITS:
        return _DIGITS[last]
    run = _LATIN_RUN.search(stripped)
    if run:
        letters = run.group()
        return _letter_name(letters[-1]) if len(letters) == 1 or letters.isupper() else \
            _word(letters)
    return "vowel"


def particle(word: str, marker: str) -> str:
    """The form of ``marker`` (``(이)가``, ``(을)를``, ``(으)로``, ``(이)라는`` …) after
    ``word``."""
    sound = final_sound(word)
    if marker in PAIRS:
        after_consonant, after_vowel = PAIRS[marker]
        return after_consonant if sound != "vowel" else after_vowel
    head, rest = marker[:3], marker[3:]
    if head == "(으)":
        return "으" + rest if sound == "consonant" else rest
    if head == "(이)":
        return "이" + rest if sound != "vowel" else rest
    raise ValueError(f"not a particle marker: {marker!r}")


def _resolve(literal: str, value: str) -> str:
    """``literal`` (the template's text right after a placeholder) with a leading marker
    replaced by the form that fits ``value``."""
    match = MARKER.match(literal)
    if not match:
        return literal
    return particle(value, match.group()) + literal[match.end():]


def format_with_particles(template: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    """``template.format(*args, **kwargs)``, each particle marker right after a placeholder
    resolved for the value that placeholder received."""
    formatter = string.Formatter()
    out: list[str] = []
    previous: str | None = None
    auto = 0
    for literal, field, spec, conversion in formatter.parse(template):
        out.append(_resolve(literal, previous) if previous is not None and literal else literal)
        if field is None:  # the end, or an escaped brace ("{{") inside the text
            previous = None
            continue
        if field == "":
            field, auto = str(auto), auto + 1
        value, _key = formatter.get_field(field, args, kwargs)
        value = formatter.convert_field(value, conversion)
        spec = formatter.vformat(spec, args, kwargs) if spec else ""
        text = formatter.format_field(value, spec)
        out.append(text)
        # an empty value ("{place}{at}(을)를" with no "at"): the particle follows the one before
        if text or literal:
            previous = text
    return "".join(out)
