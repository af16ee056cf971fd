"""Korean particles fit the name filled in: course/runtime/josa.py and every Korean template.

The expected particles here are written out by hand (a table per kind of final sound), not
computed by the function under test.
"""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from course.runtime import i18n
from course.runtime.errors import not_written_message
from course.runtime.josa import final_sound, format_with_particles, particle

PO = Path(i18n.LOCALE_DIR) / "ko" / "LC_MESSAGES" / "course.po"

#: (name, how it ends): Hangul and Latin, vowels, ㄹ and other consonants, digits.
NAMES = [
    ("gemm_naive", "vowel"), ("predict_occupancy", "vowel"), ("measured_intensities", "vowel"),
    ("02_naive_gemm.ipynb", "vowel"), ("`raise NotImplementedError()`", "vowel"),
    ("GPU", "vowel"), ("A", "vowel"), ("32", "vowel"), ("함수", "vowel"),
    ("스레드 (1, 2)", "vowel"),
    ("kernel", "rieul"), ("tile", "rieul"), ("bounding_level", "rieul"), ("커널", "rieul"),
    ("행렬", "rieul"), ("7", "rieul"),
    ("check_tiled_gemm", "consonant"), ("block", "consonant"), ("SM", "consonant"),
    ("make_gemm_tiled(16)", "consonant"), ("A[3, 16]", "consonant"), ("10", "consonant"),
    ("블록", "consonant"), ("셀 3", "consonant"), ("노트북", "consonant"),
]
#: the form each marker takes after each kind of ending, written out.
FORMS = {
    "(이)가": {"vowel": "가", "rieul": "이", "consonant": "이"},
    "(을)를": {"vowel": "를", "rieul": "을", "consonant": "을"},
    "(은)는": {"vowel": "는", "rieul": "은", "consonant": "은"},
    "(와)과": {"vowel": "와", "rieul": "과", "consonant": "과"},
    "(으)로": {"vowel": "로", "rieul": "로", "consonant": "으로"},
    "(이)다": {"vowel": "다", "rieul": "이다", "consonant": "이다"},
    "(이)라는": {"vowel": "라는", "rieul": "이라는", "consonant": "이라는"},
}
#: a particle glued straight onto a placeholder: the form can be wrong for the value.
GLUED = re.compile(r"\{[^{}]*\}(이|가|을|를|은|는|과|와|로|으로|이라는|라는|이나|나|이다)"
                   r"(?![가-힣])")
#: ``{hint}는 뜻이다``: the quotative ending of a clause (…다는 뜻), the same after any sound.
QUOTATIVE = "{hint}는 뜻이다"
MARKER_AFTER_FIELD = re.compile(r"\{([^{}:!]*)[^{}]*\}(\((?:이|을|은|와|과|으)\)[가-힣]*)")


@pytest.mark.parametrize(("name", "sound"), NAMES)
def test_final_sound(name: str, sound: str) -> None:
    assert final_sound(name) == sound


@pytest.mark.parametrize("marker", sorted(FORMS))
@pytest.mark.parametrize(("name", "sound"), NAMES)
def test_each_particle_after_each_kind_of_name(name: str, sound: str, marker: str) -> None:
    assert particle(name, marker) == FORMS[marker][sound]


def test_formatting_fits_each_placeholder_and_keeps_str_format_semantics() -> None:
    template = "{who}(이)가 {place}{at}(을)를 {x:.1f}(으)로 {{literal}}(이)가 {n}개"
    out = format_with_particles(template, (), {"who": "스레드 (1, 2)", "place": "A", "at": "",
                                               "x": 1.0, "n": 3})
    assert out == "스레드 (1, 2)가 A를 1.0으로 {literal}(이)가 3개"
    assert format_with_particles("{0}(와)과 {1}", ("gemm", "x"), {}) == "gemm과 x"


def test_a_korean_message_formats_with_particles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(i18n.ENV, "ko")
    message = not_written_message("predict_occupancy")
    assert message.startswith("predict_occupancy가 아직"), message
    assert not_written_message("check_tiled_gemm").startswith("check_tiled_gemm이 아직")
    monkeypatch.setenv(i18n.ENV, "en")
    assert type(i18n._("with your code")) is str  # English: plain strings, as before


def _korean_templates() -> list[tuple[str, str]]:
    with PO.open("rb") as f:
        catalog = read_po(f)
    return [(m.id, m.string) for m in catalog
            if m.id and isinstance(m.id, str) and isinstance(m.string, str) and "{" in m.string]


TEMPLATES = _korean_templates()


def test_the_catalog_has_templates_with_markers() -> None:
    assert len(TEMPLATES) > 200
    assert sum(bool(MARKER_AFTER_FIELD.search(s)) for _i, s in TEMPLATES) > 60


def test_no_korean_template_glues_a_particle_onto_a_placeholder() -> None:
    glued = [s for _i, s in TEMPLATES if GLUED.search(s.replace(QUOTATIVE, ""))]
    assert not glued, "\n".join(glued)


class _Sample(str):
    """A name that ignores format specs ({share:.0%} gets the name too)."""

    def __format__(self, spec: str) -> str:
        return str(self)


class _Fill(dict):  # type: ignore[type-arg]
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = _Sample(name)

    def __missing__(self, key: str) -> _Sample:
        return self.name


@pytest.mark.parametrize(("name", "sound"), [
    ("gemm_naive", "vowel"), ("함수", "vowel"), ("kernel", "rieul"), ("커널", "rieul"),
    ("check_tiled_gemm", "consonant"), ("블록", "consonant")])
def test_every_korean_template_filled_with_names_reads_right(name: str, sound: str) -> None:
    wrong = []
    for _msgid, template in TEMPLATES:
        fields = [f for _l, f, _s, _c in string.Formatter().parse(template) if f]
        if any(not re.fullmatch(r"[A-Za-z_]\w*", f) for f in fields):
            continue  # positional or dotted fields: none in the catalog today
        out = i18n.Message(template).format_map(_Fill(name))
        for match in MARKER_AFTER_FIELD.finditer(template):
            marker = match.group(2)
            base = next((m for m in FORMS if marker.startswith(m[:3]) and
                         marker[3:].startswith(m[3:])), None)
            expected = (FORMS[base][sound] + marker[len(base):]) if base else None
            if expected is None or name + expected not in out:
                wrong.append(f"{template!r} → {out!r}")
    assert not wrong, "\n".join(wrong[:20])


@pytest.mark.parametrize("then", ["with your kernel", "with your code", "with your CUDA C",
                                  "with your code and run its cell, then this one again."])
def test_the_not_written_sentence_says_its_verb_once(then: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(i18n.ENV, "ko")
    message = not_written_message("bound", then=i18n._(then))
    assert "바꿔야 한다" not in message and message.count("바꾸") == 1, message
    assert message.rstrip(".").endswith("자"), message
