"""The recorded counter readings as notebook 5 prints them: the table of bytes per level, and
the student's intensities and verdicts beside each run.

Both only format numbers they are given: the readings (:mod:`course.perf.recorded`) and, for
the second table, what the student's ``measured_intensities`` and ``bounding_level`` returned.
Nothing here divides FLOPs by bytes or compares times (the exercise's answers live in the
student's notebook and in the grader, never in the course), and a value the student's function
got wrong in kind (not a number, a missing level) shows as ``?`` rather than stopping the cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from course.perf.recorded import LEVELS, RecordedRun, RecordedTable, load_recorded
from course.runtime.i18n import _, aligned_lines


def _run_cells(run: RecordedRun) -> list[str]:
    return [run.track, run.label, f"{run.size}³"]


def format_recorded(table: RecordedTable | None = None) -> str:
    """Where the readings come from, the GPU's roofs, and one line per run: its time, its rate
    and the bytes each memory level moved (``table``: default, the shipped one)."""
    table = load_recorded() if table is None else table
    roofs = ", ".join(f"{level} {bandwidth:,.0f} GB/s"
                      for level, bandwidth in table.bandwidths_gbs.items())
    head = [_("track"), _("kernel"), _("size"), _("time [ms]"), "GFLOP/s",
            *(_("{level} bytes").format(level=level) for level in LEVELS)]
    body = [[*_run_cells(run), f"{run.seconds * 1e3:.3f}", f"{run.gflops:,.0f}",
             *(f"{run.level_bytes[level]:.3g}" for level in LEVELS)] for run in table.runs]
    return "\n".join([table.source(),
                      _("Roofs of this GPU: peak {peak} GFLOP/s; bandwidths {roofs}").format(
                          peak=f"{table.peak_gflops:,.0f}", roofs=roofs),
                      "", *aligned_lines([head, *body], left=2)])


def _number(values: Any, level: str) -> str:
    """``values[level]`` as a short number, or ``?`` where it is not one."""
    try:
        return f"{float(values[level]):.3g}"
    except (KeyError, IndexError, TypeError, ValueError):
        return "?"


def _verdict(value: Any, width: int = 24) -> str:
    """A verdict as the table shows it: a string as it is, anything else as its repr, cut to
    ``width`` characters (a dict returned by mistake should not stretch every line)."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= width else text[:width - 1] + "…"


def format_level_verdicts(runs: Sequence[RecordedRun], intensities: Sequence[Mapping[str, Any]],
                          verdicts: Sequence[Any]) -> str:
    """One line per run: the intensity of each level and the bounding level, as the student's
    functions gave them (``intensities[i]`` and ``verdicts[i]`` belong to ``runs[i]``)."""
    head = [_("track"), _("kernel"), _("size"),
            *(_("AI {level}").format(level=level) for level in LEVELS), _("bound by")]
    body = [[*_run_cells(run), *(_number(ai, level) for level in LEVELS),
             _verdict(verdict)]
            for run, ai, verdict in zip(runs, intensities, verdicts, strict=True)]
    return "\n".join([_("intensities in FLOP/byte, one per memory level"), "",
                      *aligned_lines([head, *body], left=2)])
