"""The report's file names and the one line the grade table prints about it: light (no
parsing library), since every process that reads the grade table imports it."""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

CSV_NAME = "similarity.csv"
HTML_NAME = "similarity.html"
#: the ``notebook`` of a pair's row over all its notebooks
ALL = "all"


def summary(root: Path) -> str | None:
    """What the grade table says about the last similarity report, or None without one."""
    path = root / CSV_NAME
    if not path.exists():
        return None
    with path.open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("notebook") == ALL]
    flagged = sum(r.get("flagged") == "true" for r in rows)
    written = datetime.fromtimestamp(path.stat().st_mtime).strftime("%Y-%m-%d %H:%M")
    return (f"similarity (make similarity, {written}): {flagged} pair(s) flagged for a person "
            f"to read, never a grade: {root / HTML_NAME}")
