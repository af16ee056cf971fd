"""The committed release is exactly what nbgrader generates, and gives nothing away."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from autograder.release import freshness

ROOT = Path(__file__).resolve().parents[1]
RELEASE = ROOT / "release" / "week4"
SOURCE = ROOT / "source" / "week4"


@pytest.fixture(scope="module")
def fresh_release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both releases built afresh from the sources (what ``make publish`` compares against)."""
    built = freshness.fresh_build(ROOT, tmp_path_factory.mktemp("course"))
    assert freshness.differences(built["ko"], ROOT / "release-ko" / "week4") == [], (
        "release-ko/week4 is stale: run `make release` and commit it")
    return built["en"]


def test_a_stale_release_is_named(tmp_path: Path) -> None:
    """The check ``make publish`` runs can fail: a source notebook edited, not released."""
    for name in ("source", "release", "release-ko", "i18n", "assets"):
        shutil.copytree(ROOT / name, tmp_path / name,
                        ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copy(ROOT / "nbgrader_config.py", tmp_path)
    path = tmp_path / "source" / "week4" / "04_writeup_experiment.ipynb"
    nb = json.loads(path.read_text())
    code = next(c for c in nb["cells"] if c["cell_type"] == "code")
    code["source"] = "".join(code["source"]) + "\n# edited after the release\n"
    path.write_text(json.dumps(nb, indent=1))
    assert freshness.stale(tmp_path) == ["release/week4/04_writeup_experiment.ipynb",
                                         "release-ko/week4/04_writeup_experiment.ipynb"]


def test_committed_release_matches_a_fresh_build(fresh_release: Path) -> None:
    built = sorted(p.name for p in fresh_release.iterdir())
    committed = sorted(p.name for p in RELEASE.iterdir())
    assert built == committed, "release/week4 is stale: run `make release` and commit it"
    for name in built:
        fresh = json.loads((fresh_release / name).read_text())
        ours = json.loads((RELEASE / name).read_text())
        assert fresh == ours, f"release/week4/{name} differs from a fresh build: `make release`"


def _solution_lines() -> set[str]:
    """Distinctive lines that appear ONLY inside solution or hidden-test regions of the
    source notebooks (a line the visible part also shows is no secret)."""
    inside, outside = set(), set()
    region = re.compile(r"### BEGIN (SOLUTION|HIDDEN TESTS)\n(.*?)### END \1", re.S)
    for path in SOURCE.glob("*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            text = "".join(cell["source"])
            for match in region.finditer(text):
                inside |= {ln.strip() for ln in match.group(2).splitlines()
                           if len(ln.strip()) > 25}
            outside |= {ln.strip() for ln in region.sub("", text).splitlines()}
    return inside - outside


def test_release_contains_no_solutions_or_hidden_tests() -> None:
    secrets = _solution_lines()
    assert secrets, "found no solution regions in source/: the test would prove nothing"
    for path in RELEASE.glob("*.ipynb"):
        text = "\n".join("".join(c["source"]) for c in json.loads(path.read_text())["cells"])
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text
        leaked = [ln for ln in secrets if ln in text]
        assert not leaked, f"{path.name} shows solution/hidden lines: {leaked[:3]}"
