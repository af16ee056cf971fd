"""The course's own packages are byte-compiled before anything grades (``make install``).

Grading runs them in sandboxes that see the repository read-only, and the test machines set
PYTHONDONTWRITEBYTECODE: no process writes a .pyc, so without the ones ``make install`` writes
every kernel, re-check and check process compiled each module it imports from source again
(about 1.5 CPU-s per full submission, measured with ``scripts/gpu/profile_grading.py``).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_module_of_the_course_has_its_bytecode() -> None:
    missing = [str(path.relative_to(ROOT))
               for package in ("course", "autograder", "sample_class")
               for path in sorted((ROOT / package).rglob("*.py"))
               if not Path(importlib.util.cache_from_source(str(path))).is_file()]
    assert not missing, (f"{len(missing)} modules have no .pyc, e.g. {missing[:3]}: "
                         "`make install` byte-compiles them (run it, or `make test`)")
