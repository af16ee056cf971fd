"""What a Korean student reads: run the Korean release with the solutions, find English prose.

Used by tests/test_korean_outputs.py (a slice in ``make test``, every notebook of both tracks
in ``make test-ko``). :func:`run_track` copies the Korean release into a scratch folder (the
notebooks read each other, as a student's do), fills every answer cell with the course's
solutions, leaves the other track's notebooks 2 and 3 out (as ``scripts/gpu/run_notebooks.py
--track`` does), and executes the chosen notebooks on the simulator with ``COURSE_LANG=ko``
(nbclient's kernel cannot find its notebook's metadata; a student's can). :func:`english_prose`
then names every output line that holds a run of three or more English words.
"""

from __future__ import annotations

import html
import os
import re
import sys
import types
from collections.abc import Iterable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

from course.runtime.backend import AUTOGRADE_ENV

ROOT = Path(__file__).resolve().parents[1]
RELEASE_KO = ROOT / "release-ko" / "week4"
sys.path.insert(0, str(ROOT / "scripts" / "gpu"))
from run_notebooks import TRACK_NOTEBOOKS, left_out, problems  # noqa: E402

#: Which notebooks each track's run executes: notebooks 04 and 06 read the student's kernels
#: of whichever track they did, so both tracks run them.
TRACK_RUNS = {
    "numba": ("00_setup", "01_arithmetic_intensity", "02_naive_gemm", "03_tiled_gemm",
              "04_writeup_experiment", "05_roofline", "06_tile_sweep",
              "07_bonus_register_tiling"),
    "cuda": ("02c_naive_gemm_cuda", "03c_tiled_gemm_cuda", "04_writeup_experiment",
             "06_tile_sweep"),
}
assert set(TRACK_RUNS) == set(TRACK_NOTEBOOKS)

#: English a Korean line may keep (docs/glossary-ko.md keeps the field's terms in English;
#: names of GPUs, libraries and the machine are names). Matched case-insensitively and removed
#: before words are counted, longest first.
ALLOWED = (
    "arithmetic intensity", "compute-bound", "memory-bound", "ridge point", "shared memory",
    "global memory", "register tiling", "roofline", "tiling", "tiled", "naive", "occupancy",
    "register", "registers", "warp", "barrier", "coalesced", "speedup", "sweep", "tile",
    "Numba's CUDA simulator", "NVIDIA", "Tesla", "Google Colab", "Colab", "Numba", "numba-cuda",
    "CuPy", "cuBLAS", "NumPy", "NVRTC", "Python", "Jupyter", "JupyterLab",
)
_ALLOWED = re.compile("|".join(re.escape(a) for a in sorted(ALLOWED, key=len, reverse=True)),
                      re.I)
#: what is code or a number, not prose: `code spans`, 'quoted' and "quoted" identifiers or
#: messages a student types, identifiers with _ . ( [ or digits, units such as GFLOP/s.
_CODE_SPAN = re.compile(r"`[^`]*`")
_WORD = re.compile(r"^[A-Za-z][a-z]+(?:'s)?$|^(?:a|I)$")
_NAME = re.compile(r"^[A-HJ-Zxyij]$")
_PUNCT = ".,;:!?()[]{}\"'“”‘’—–-…"
MIN_RUN = 3
#: lines another tool wrote that the course quotes as they are: NVRTC's diagnostics of a
#: student's CUDA C (``line 5: warning #177-D: variable "row" was declared but never
#: referenced``), which a student compares with the compiler's documentation.
QUOTED = re.compile(r"^\s*line \d+: (?:warning|error|remark)\b")


def english_runs(line: str) -> list[str]:
    """Runs of :data:`MIN_RUN` or more English words in one line of output.

    A word is letters only, lower case after its first letter ("reads", "Write"); an acronym
    (GPU, FLOP/byte), an identifier (``gemm_naive``, ``x.size``), a number or a symbol is
    not one and ends a run, and so do Hangul and the end of a clause (. ; : ? !). Code spans,
    the allowed terms (:data:`ALLOWED`) and one-letter names (the matrices A, B, C) are
    skipped without ending a run: "naive kernel reads 5 elements of A and B" holds the run
    "elements of and".
    """
    text = _ALLOWED.sub(" ", _CODE_SPAN.sub(" ", line))
    runs: list[str] = []
    current: list[str] = []
    for token in text.split():
        word = token.strip(_PUNCT)
        ends_clause = token.rstrip(")\"'”’").endswith((".", ";", ":", "?", "!"))
        if _NAME.match(word) and not ends_clause:
            continue
        if word and _WORD.match(word):
            current.append(word)
            if not ends_clause:
                continue
        if len(current) >= MIN_RUN:
            runs.append(" ".join(current))
        current = []
    if len(current) >= MIN_RUN:
        runs.append(" ".join(current))
    return runs


class _Text(HTMLParser):
    """The text of an HTML output, as a browser shows it (tags and styles dropped)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        self._skip += tag in ("style", "script")
        if tag in ("br", "tr", "p", "div", "li", "td", "th"):
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        self._skip -= tag in ("style", "script") and self._skip > 0

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def html_text(markup: str) -> str:
    """The visible text of ``markup``."""
    parser = _Text()
    parser.feed(markup)
    return html.unescape("".join(parser.parts))


def visible_text(output: dict[str, Any]) -> str:
    """What a student sees of one output: a stream's text; of a result, its HTML if it has
    one, nothing when it is an image (its text/plain is not shown), else its text/plain; an
    error's name and message (a solution must not raise, but if it does its words count)."""
    kind = output.get("output_type")
    if kind == "stream":
        return str(output.get("text", ""))
    if kind == "error":
        return f"{output.get('ename', '')}: {output.get('evalue', '')}"
    data = output.get("data", {})
    if "text/html" in data:
        return html_text("".join(data["text/html"]))
    if any(key.startswith("image/") for key in data):
        return ""
    if "application/vnd.jupyter.widget-view+json" in data:
        return ""  # the widget's own text is in the notebook's widget state
    return "".join(data.get("text/plain", ""))


def widget_text(nb: nbformat.NotebookNode) -> Iterator[str]:
    """Labels and text of every widget the notebook displayed (nbclient stores their state)."""
    state = nb.metadata.get("widgets", {}).get(
        "application/vnd.jupyter.widget-state+json", {}).get("state", {})
    for model in state.values():
        values = model.get("state", {})
        for key in ("description", "value", "placeholder", "tooltip"):
            value = values.get(key)
            if isinstance(value, str):
                yield html_text(value) if "<" in value else value
        for label in values.get("_options_labels", []) or []:
            yield str(label)


def english_prose(nb: nbformat.NotebookNode) -> list[str]:
    """Every output line (and widget text) of ``nb`` holding a run of English words."""
    found = []

    def scan(where: str, texts: Iterable[str]) -> None:
        for text in texts:
            for line in text.splitlines():
                runs = [] if QUOTED.match(line) else english_runs(line)
                if runs:
                    found.append(f"{where}: {line.strip()[:160]!r} ({'; '.join(runs)})")

    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            name = cell.metadata.get("nbgrader", {}).get("grade_id") or cell.get("id", "")
            scan(f"cell {i} ({name})", (visible_text(o) for o in cell.get("outputs", [])))
    scan("widgets", widget_text(nb))
    return found


def solved_folder(folder: Path, track: str) -> Path:
    """The Korean release with the solutions filled in, in ``folder``, without the other
    track's notebooks 2 and 3 (a student of ``track`` has only theirs)."""
    # Imported here: the detector above also runs where the grader's packages are not (the
    # GPU session's notebook pass scans its Korean outputs with it; scripts/gpu/session.sh).
    import sample_class as samples

    folder.mkdir(parents=True, exist_ok=True)
    solved = types.SimpleNamespace(BASE="solutions", LANGUAGE="ko")
    gone = left_out(track)
    for path in sorted(RELEASE_KO.glob("*.ipynb")):
        if path.name not in gone:
            nb = samples.build_notebook(ROOT, path.stem, solved)
            nbformat.write(nbformat.from_dict(nb), folder / path.name)
    return folder


def execute(path: Path, timeout: int = 600, grading: bool = False) -> nbformat.NotebookNode:
    """Run the notebook at ``path`` in its folder on this Python, speaking Korean; with
    ``grading``, as ``nbgrader autograde`` runs it (the cells that time or measure say that
    they are skipped)."""
    nb = nbformat.read(path, as_version=4)
    env = dict(os.environ, COURSE_LANG="ko", MPLBACKEND="module://matplotlib_inline.backend_inline")
    env.pop(AUTOGRADE_ENV, None)
    if grading:
        env[AUTOGRADE_ENV] = "autograde"
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute(env=env)
    return nb


def missing_glyphs(nb: nbformat.NotebookNode) -> list[str]:
    """Cells whose figures lack a glyph (matplotlib's "Glyph … missing from font(s)" warning):
    Hangul drawn without the Korean font, as boxes."""
    return [f"cell {i}: {out.text.strip()[:160]}" for i, cell in enumerate(nb.cells)
            if cell.cell_type == "code" for out in cell.get("outputs", [])
            if out.output_type == "stream" and "missing from font" in out.text]


def run_notebook(path: Path, grading: bool = False) -> list[str]:
    """Execute one solved Korean notebook (``grading``: as the grader runs it); its errors, its
    figures' missing glyphs and its lines of English prose."""
    nb = execute(path, grading=grading)
    return problems(nb) + missing_glyphs(nb) + english_prose(nb)
