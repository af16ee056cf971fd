"""``python -m sample_class.similarity [FOLDER]``: the similarity class staged in FOLDER
(default ``build/similarity-demo``, a course directory of its own: its ``submitted/``, and
links to this repository's release and source), the report written there, and each pair's
scores printed by group (copied, honest) with the margins: the numbers docs/similarity.md
reports."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from autograder.similarity import command
from sample_class.similarity import copied_pairs, honest_pairs, stage

ROOT = Path(__file__).resolve().parents[2]


def stage_course(course: Path) -> None:
    """A course directory of its own with the similarity class in its ``submitted/``."""
    shutil.rmtree(course, ignore_errors=True)
    course.mkdir(parents=True)
    for name in ("release", "release-ko", "source"):
        (course / name).symlink_to(ROOT / name)
    stage(ROOT, course / "submitted")


def groups(course: Path) -> dict[str, list[tuple[str, str, float, float, bool]]]:
    """(a, b, best notebook score, combined score, flagged) of every copied and honest pair."""
    pairs, _ = command.run(course)
    found = {frozenset((p.a, p.b)): p for p in pairs}
    out: dict[str, list[tuple[str, str, float, float, bool]]] = {}
    for label, group in (("copied", copied_pairs()), ("honest", honest_pairs())):
        rows = []
        for a, b in sorted(group):
            pair = found.get(frozenset((a, b)))
            best = max((nb.score for nb in pair.notebooks.values()), default=0.0) \
                if pair else 0.0
            rows.append((a, b, best, pair.combined if pair else 0.0,
                         bool(pair and pair.flagged)))
        out[label] = rows
    return out


def main(argv: list[str]) -> int:
    course = Path(argv[0]) if argv else ROOT / "build" / "similarity-demo"
    stage_course(course)
    status = command.main(course)
    for label, rows in groups(course).items():
        print(f"\n{label} pairs ({len(rows)}): best notebook score, combined, flagged")
        for a, b, best, combined, flagged in sorted(rows, key=lambda r: -r[2]):
            print(f"  {a:<30} {b:<30} {best:5.2f} {combined:5.2f} {'FLAGGED' if flagged else ''}")
        bests = sorted(r[2] for r in rows)
        combos = sorted(r[3] for r in rows)
        print(f"  best notebook score: min {bests[0]:.2f}, median {bests[len(bests) // 2]:.2f}, "
              f"max {bests[-1]:.2f}; combined: min {combos[0]:.2f}, max {combos[-1]:.2f}")
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
