"""Reuse the kernels a student wrote in an earlier notebook of the week.

Later notebooks (the experiment, the roofline, the sweep) need ``gemm_naive`` and
``make_gemm_tiled``. Rather than copying code between notebooks, they read the earlier
notebook from disk and rebuild just the named definitions, with the same rules the grader
applies (:mod:`course.kernel_source`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from course.kernel_source import bundle_from_cells


class MissingAnswerError(RuntimeError):
    """The earlier notebook is missing, or its answer has not been written yet."""


def definitions_from(notebook: str | Path, *names: str) -> dict[str, Any]:
    """Load ``names`` from the code cells of ``notebook`` (a path next to this notebook)."""
    path = Path(notebook)
    if not path.exists():
        raise MissingAnswerError(f"{path} was not found next to this notebook; keep the week's "
                                 "notebooks together in one folder")
    cells = [
        "".join(c["source"]) if isinstance(c["source"], list) else c["source"]
        for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
        if c.get("cell_type") == "code"
    ]
    try:
        namespace = bundle_from_cells(cells, set(names)).load()
    except NameError as exc:
        raise MissingAnswerError(f"{path.name}: {exc}") from None
    missing = [n for n in names if n not in namespace]
    if missing:
        raise MissingAnswerError(f"{path.name} does not define {', '.join(missing)}")
    return {n: namespace[n] for n in names}
