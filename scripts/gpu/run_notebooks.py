"""Run source notebooks top to bottom (solutions included) and keep the executed copies.

    python scripts/gpu/run_notebooks.py 00 04 05 --out executed/
    python scripts/gpu/run_notebooks.py 04 06 --track cuda --out executed/   # a CUDA C student

This is how the notebooks' GPU branches are run on a GPU machine (scripts/gpu/session.sh
``roofline``). Every notebook of source/week4 is copied into a scratch assignment folder
(they read each other, as a student's do), the chosen ones are executed with nbclient, and
each executed notebook is written to ``--out`` with its outputs and plots. The summary names
every cell that raised and every graded cell that wrote to stderr (nbgrader would score it
0); :func:`problems` is also what tests/test_notebooks_execute.py counts as a failure.
``--track cuda`` leaves notebooks 02 and 03 out of the scratch folder (``--track numba``:
02c and 03c), so that notebooks 04 and 06 run on that track's kernels, as a student of that
track would.
Exit status 1 if any notebook had either.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import nbformat
from common import SOURCE  # first: the shared setup (common.py)
from nbclient import NotebookClient

#: the notebooks of each track; --track keeps one track's and leaves out the other's.
TRACK_NOTEBOOKS = {"numba": ("02_naive_gemm.ipynb", "03_tiled_gemm.ipynb"),
                   "cuda": ("02c_naive_gemm_cuda.ipynb", "03c_tiled_gemm_cuda.ipynb")}


def left_out(track: str | None) -> set[str]:
    """The notebooks a student of ``track`` would not have (none when ``track`` is None)."""
    if track is None:
        return set()
    return {name for other, names in TRACK_NOTEBOOKS.items() if other != track
            for name in names}


def pick(prefixes: list[str]) -> list[Path]:
    """The source notebooks whose names start with the given prefixes (all when none)."""
    notebooks = sorted(SOURCE.glob("*.ipynb"))
    chosen = [p for p in notebooks if not prefixes or any(p.name.startswith(x) for x in prefixes)]
    if not chosen:
        raise SystemExit(f"no notebook in {SOURCE} starts with {prefixes}")
    return chosen


def problems(nb: nbformat.NotebookNode, allow: Sequence[str] = (),
             any_stderr: bool = False) -> list[str]:
    """Cells that raised (except errors named in ``allow``), and graded cells that wrote to
    stderr (nbgrader scores those 0); with ``any_stderr``, every cell that wrote to stderr
    (a warning a student would see is worth knowing about too)."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        graded = cell.metadata.get("nbgrader", {}).get("grade")
        name = cell.metadata.get("nbgrader", {}).get("grade_id") or cell.get("id", "")
        for out in cell.outputs:
            if out.output_type == "error" and out.ename not in allow:
                found.append(f"cell {i} ({name}): {out.ename}: {out.evalue[:300]}")
            elif (graded or any_stderr) and out.output_type == "stream" and out.name == "stderr":
                kind = "graded" if graded else "not graded"
                found.append(f"cell {i} ({name}, {kind}) wrote to stderr: {out.text[:300]}")
    return found


def run(path: Path, work: Path, out: Path, timeout: int, any_stderr: bool = False) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    started = time.monotonic()
    # allow_errors: run every cell even after one raised; problems() reports them all.
    NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(work)}}).execute()
    nbformat.write(nb, out / path.name)
    found = problems(nb, any_stderr=any_stderr)
    status = "ok" if not found else f"{len(found)} problem(s)"
    print(f"{path.name}: {time.monotonic() - started:.1f} s, {status}", flush=True)
    for line in found:
        print(f"  {line}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prefixes", nargs="*", help="e.g. 00 05 (default: every notebook)")
    parser.add_argument("--out", type=Path, required=True, help="folder for executed copies")
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    parser.add_argument("--track", choices=sorted(TRACK_NOTEBOOKS),
                        help="leave the other track's notebooks 2 and 3 out of the folder")
    parser.add_argument("--any-stderr", action="store_true",
                        help="report every cell that wrote to stderr, not only graded ones")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    # The inline backend puts every figure into the executed notebook (Agg would drop them).
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "week4"
        shutil.copytree(SOURCE, work)
        gone = left_out(args.track)
        for name in gone:
            (work / name).unlink()
        for path in pick(args.prefixes):
            if path.name not in gone:
                bad += bool(run(work / path.name, work, args.out, args.timeout,
                                args.any_stderr))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
