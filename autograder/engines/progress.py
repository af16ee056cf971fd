"""What the instructor sees while a class is graded, and the summary at the end.

* a progress bar over students (tqdm, on stderr; shown where stderr is a terminal);
* one line per student as they finish: student, notebooks graded, score, seconds;
* after the grade table, one line per notebook: how many handed it in, their mean, how many
  had a check "not measured" (no GPU), how many failed to run (dead kernel, grading error),
  and how many still wait for hand grading.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import IO, Any

from tqdm import tqdm


@dataclass(frozen=True)
class StudentResult:
    """One student's grading, as reported when it finishes."""

    student: str
    notebooks: int
    score: float
    max_score: float
    seconds: float
    ok: bool = True

    def line(self) -> str:
        status = "" if self.ok else "  GRADING FAILED (see .nbgrader.log)"
        return (f"{self.student:<28} {self.notebooks} notebook{'s' * (self.notebooks != 1)} "
                f"graded  {self.score:g}/{self.max_score:g}  {self.seconds:.0f} s{status}")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StudentResult:
        return cls(**data)


class Progress:
    """A bar over ``total`` students plus a printed line for each one that finishes."""

    def __init__(self, total: int, *, out: IO[str] | None = None, bar: IO[str] | None = None,
                 show_bar: bool | None = None) -> None:
        self.out = out or sys.stdout
        self.results: list[StudentResult] = []
        # show_bar=None: only where the bar's stream is a terminal (not in CI logs).
        self._bar = tqdm(total=total, unit="student", desc="grading", file=bar or sys.stderr,
                         disable=None if show_bar is None else not show_bar, dynamic_ncols=True)

    def done(self, result: StudentResult) -> None:
        """Record a finished student: print the line, advance the bar."""
        self.results.append(result)
        self._bar.write(result.line(), file=self.out)
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def summary(notebooks: Sequence[str], rows: Sequence[Any]) -> str:
    """Per notebook: handed in, mean of those, not measured, failed to run, to grade by hand.

    ``rows`` are :class:`autograder.results.table.Row` objects.
    """
    head = (f"{'notebook':<28}{'handed in':>10}{'mean':>12}{'not measured':>14}"
            f"{'failed to run':>15}{'by hand':>9}")
    lines = ["per notebook:", head, "-" * len(head)]
    for nb in notebooks:
        handed = [r for r in rows if nb in r.scores and nb not in r.missing]
        maximum = max((r.scores[nb][1] for r in handed), default=0.0)
        mean = sum(r.scores[nb][0] for r in handed) / len(handed) if handed else 0.0
        unmeasured = sum(1 for r in handed if any(x.startswith(f"{nb}:") for x in r.not_measured))
        failed = sum(1 for r in handed if nb in r.failed)
        by_hand = sum(1 for r in handed if any(x.startswith(f"{nb}:") for x in r.manual))
        mean_text = f"{mean:.1f}/{maximum:g}" if handed else "—"
        lines.append(f"{nb:<28}{len(handed):>10}{mean_text:>12}{unmeasured:>14}{failed:>15}"
                     f"{by_hand:>9}")
    return "\n".join(lines)
