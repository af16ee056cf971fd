"""How much global memory a GEMM kernel reads, counted on the simulator, against the model.

The model is :mod:`course.gemm.reads` (whole tiles, padding included). A kernel that skips
out-of-range loads reads a little less; one that still reads A or B from global memory inside
its multiply loop reads ~T times more, even if its results are right. That is the difference
tiling is about, so it is graded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from course.checks.success_lines import PrintedReport
from course.gemm import inspection
from course.gemm.reads import naive_reads, tiled_reads
from course.runtime.i18n import _
from course.runtime.seeds import fresh_seed
from course.trust import gate, replay

#: a tiled kernel may read at most this multiple of the whole-tile model count.
TRAFFIC_SLACK = 1.25


class TrafficCheckError(AssertionError):
    """The kernel reads far more global memory than a tiled kernel should."""


@dataclass(frozen=True)
class TrafficReport(PrintedReport):
    tile: int
    shape: tuple[int, int, int]
    reads: int
    model: int
    naive: int

    def __str__(self) -> str:
        M, N, K = self.shape
        return _("✓ tile {tile}, {shape}: your kernel read {reads} elements of A and B; the "
                 "whole-tile model says {model}; the naive kernel reads {naive} ({ratio}× more)"
                 ).format(tile=self.tile, shape=f"{M}×{N}×{K}", reads=f"{self.reads:,}",
                          model=f"{self.model:,}", naive=f"{self.naive:,}",
                          ratio=f"{self.naive / max(self.reads, 1):.1f}")


def judge_reads(kernel: str, tile: int, shape: tuple[int, int, int], reads: int
                ) -> TrafficReport:
    """The verdict on a tiled kernel's counted reads of A and B, for either track: its report,
    or a :class:`TrafficCheckError` naming ``kernel`` when it read more than
    :data:`TRAFFIC_SLACK` times the whole-tile model, or nothing at all."""
    M, N, K = shape
    model = tiled_reads(M, N, K, tile)
    report = TrafficReport(tile, (M, N, K), reads, model, naive_reads(M, N, K))
    if reads > TRAFFIC_SLACK * model:
        raise TrafficCheckError(_(
            "{kernel} read {reads} elements of A and B for M={M}, N={N}, K={K}; "
            "a tiled kernel loads about {model} (whole tiles), at most {slack}× that is "
            "accepted, and the naive kernel reads {naive}. Each thread should read ONE element "
            "of A and ONE of B per step into shared memory; the multiply loop must read only "
            "the shared tiles.").format(kernel=kernel, reads=f"{reads:,}", M=M, N=N, K=K,
                                        model=f"{model:,}", slack=TRAFFIC_SLACK,
                                        naive=f"{report.naive:,}"))
    if reads == 0:
        raise TrafficCheckError(_("{kernel} read nothing from A or B").format(kernel=kernel))
    return report


@replay.replayable
def check_traffic(factory: Callable[[int], Any], tile: int = 16,
                  shape: tuple[int, int, int] | None = None, quiet: bool = False
                  ) -> TrafficReport:
    """Count ``make_gemm_tiled(tile)``'s reads of A and B on the simulator; fail if too many."""
    gate.begin_check("check_traffic")
    M, N, K = shape or (tile + 3, tile + 1, 2 * tile + 3)
    seen = inspection.inspect_tiled(factory, tile, (M, N, K), fresh_seed())
    if seen.get("error"):
        raise TrafficCheckError(_("{kernel} could not be counted: {why}").format(
            kernel=f"make_gemm_tiled({tile})", why=seen["error"]))
    report = judge_reads(f"make_gemm_tiled({tile})", tile, (M, N, K),
                         int(seen["reads_a"]) + int(seen["reads_b"]))
    if not quiet:
        print(report)
    return report
