"""The README is a newcomer's page (issue 38): the quick start fits on one screen, each job has
a short section that links to its docs/ page, every link into docs/ lands on a heading, and no
figure in it is unchecked: each is in the table of docs/instructor.md ("How long things take"),
and the sample-class sizes are counted from the sample class itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograder.release import generated

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
GUIDE = (ROOT / "docs" / "instructor.md").read_text()
#: the README's own lines, without the generated Open-in-Colab lists
OWN = re.sub(r"<!-- BEGIN colab-links.*?<!-- END colab-links(-ko)? -->", "", README, flags=re.S)
#: a number with what it counts: minutes, seconds, students, percent, times
FIGURE = re.compile(r"\b\d+(?:\.\d+)?\s?(?:minutes?|min|s\b|%|×|sample students|students)")
JOBS = ("Grade a class", "Hand in", "Hand back", "Publish for students", "GPU machine",
        "Cluster")


def _section(text: str, heading: str) -> str:
    return text[text.index(f"## {heading}\n"):].split("\n## ", 1)[0]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_the_readme_is_short_and_its_quick_start_fits_on_a_screen() -> None:
    assert len(OWN.splitlines()) <= 100, len(OWN.splitlines())
    quick = _section(README, "Quick start")
    assert len(quick.splitlines()) <= 25, quick
    assert "make demo" in quick and "make test" in quick and "Needs:" in quick
    assert README.index("## Quick start") < README.index("## Publish for students")


@pytest.mark.parametrize("job", JOBS)
def test_each_job_has_a_short_section_that_links_to_docs(job: str) -> None:
    section = _section(README, job)
    assert len(section.splitlines()) <= 8, section
    assert "](docs/" in section, section


def test_every_link_into_docs_lands_on_a_heading() -> None:
    for page, anchor in re.findall(r"\]\(docs/([\w\-]+\.md)(?:#([^)]+))?\)", README):
        path = ROOT / "docs" / page
        assert path.is_file(), page
        if anchor:
            headings = {_slug(h) for h in re.findall(r"^#+ (.+)$", path.read_text(), re.M)}
            assert anchor in headings, (page, anchor, sorted(headings))


def test_every_figure_in_the_readme_is_in_the_docs_table() -> None:
    table = _section(GUIDE, "How long things take")
    figures = FIGURE.findall(OWN)
    assert figures, "no figure found: the pattern is stale"
    for figure in figures:
        assert figure in table, f"{figure!r} is in the README but not in docs/instructor.md"


def test_the_class_sizes_are_the_sample_class_s() -> None:
    import sample_class as samples

    table = _section(GUIDE, "How long things take")
    for name, words in (("demo", "grade {n} sample students"), ("core", "core class of {n}")):
        n = len(samples.class_members(name))
        assert words.format(n=n) in README, (name, n)
        assert f"{n} sample students" in table, (name, n)


def test_the_colab_links_stay_generated_in_the_readme() -> None:
    assert generated.BEGIN_LINKS in README and generated.BEGIN_LINKS_KO in README
    assert not generated.sync_readme(ROOT / "README.md", [
        p.name for p in sorted((ROOT / "release" / "week4").glob("*.ipynb"))], write=False)
