"""The Korean translation follows docs/glossary-ko.md: every paragraph whose English uses a term
is translated with one of the glossary's Korean forms, and no translation uses a ruled-out form."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog

from autograder.release import translation

ROOT = Path(__file__).resolve().parents[1]
GLOSSARY = ROOT / "docs" / "glossary-ko.md"
#: not prose: code spans, formulas, link targets, and quoted messages (kept as the code prints them)
_IGNORED = re.compile(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$|\]\([^)]*\)|\"[^\"\n]*\"", re.S)


@dataclass(frozen=True)
class Term:
    english: str
    korean: tuple[str, ...]
    avoid: tuple[str, ...]

    def used_in(self, english_text: str) -> bool:
        """Whether an English paragraph uses the term (whole words, any case, plurals)."""
        words = r"[\s-]+".join(re.escape(w) for w in self.english.split())
        return re.search(rf"(?<![\w-]){words}(?:s|es)?(?![\w-])",
                         _IGNORED.sub(" ", english_text), re.I) is not None


def glossary(path: Path = GLOSSARY) -> list[Term]:
    """The machine-readable table of the glossary (the one whose header starts `| English |`)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| English |"))
    terms = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        forms = [tuple(f.strip() for f in cell.split(" / ") if f.strip()) for cell in cells[1:3]]
        terms.append(Term(cells[0], forms[0], forms[1]))
    return terms


def violations(catalog: Catalog, terms: list[Term]) -> list[str]:
    """Every place where a translation does not follow the glossary."""
    found = []
    for message in catalog:
        if not message.id or not message.string:
            continue
        english, korean = str(message.id), str(message.string)
        where = f"[{message.context}] {english.strip().splitlines()[0][:60]!r}"
        for term in terms:
            if term.used_in(english) and not any(k in korean for k in term.korean):
                found.append(f"{where}: {term.english!r} is not translated as "
                             f"{' / '.join(term.korean)}")
            for bad in term.avoid:
                if bad in korean:
                    found.append(f"{where}: {bad!r} (the glossary says {term.korean[0]})")
    return found


def test_the_glossary_table_reads() -> None:
    terms = glossary()
    assert len(terms) >= 20
    by_term = {t.english: t for t in terms}
    for english in ("arithmetic intensity", "roofline", "tiling", "shared memory", "occupancy",
                    "compute-bound", "memory-bound", "HBM"):
        assert english in by_term, f"the glossary has no row for {english}"
    assert by_term["shared memory"].korean[0] == "shared memory"
    assert "공유 메모리" in by_term["shared memory"].avoid


@pytest.mark.parametrize("notebook", sorted(p.stem for p in
                                            (ROOT / "source" / "week4").glob("*.ipynb")))
def test_the_korean_catalog_follows_the_glossary(notebook: str) -> None:
    catalog = translation.read_catalog(translation.catalog_path(ROOT, "ko", notebook))
    assert [m for m in catalog if m.id], "an empty catalog would prove nothing"
    assert violations(catalog, glossary()) == []


def test_the_glossary_check_finds_a_term_left_out_and_a_ruled_out_form() -> None:
    catalog = Catalog(locale="ko")
    catalog.add("Stage the tile in shared memory.", "타일을 공유 메모리에 올린다.", context="a")
    catalog.add("Occupancy is warps over max warps.", "점유율은 warp 수를 나눈 값이다.",
                context="b")
    catalog.add("`shared_memory(x)` and $the\\ roofline$", "`shared_memory(x)`와 $the\\ roofline$",
                context="c")  # names in code spans and formulas are not prose
    found = violations(catalog, glossary())
    assert any("'shared memory' is not translated" in f for f in found)
    assert any("'공유 메모리'" in f for f in found)
    assert any("'occupancy' is not translated" in f for f in found)
    assert any("'점유율'" in f for f in found)
    assert not any(f.startswith("[c]") for f in found)
