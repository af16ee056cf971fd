"""How much global memory a GEMM kernel reads, counted on the simulator, against the model.

The model (the same one ``ai_gemm_tiled`` turns into bytes): each of ceil(M/T)·ceil(N/T)
blocks loads, for each of ceil(K/T) steps along K, one T×T tile of A and one of B — whole
tiles, padding included. A kernel that skips out-of-range loads reads a little less; one that
still reads A or B from global memory inside its multiply loop reads ~T times more, even if
its results are right. That is the difference tiling is about, so it is graded.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from course import gate, isolated

#: a tiled kernel may read at most this multiple of the whole-tile model count.
TRAFFIC_SLACK = 1.25


def naive_reads(M: int, N: int, K: int) -> int:
    """Elements of A and B the naive kernel reads: K of each per output element."""
    return 2 * M * N * K


def tiled_reads(M: int, N: int, K: int, tile: int) -> int:
    """Elements of A and B the tiled kernel loads, whole tiles, padding included."""
    blocks = math.ceil(M / tile) * math.ceil(N / tile)
    return blocks * math.ceil(K / tile) * 2 * tile * tile


class TrafficCheckError(AssertionError):
    """The kernel reads far more global memory than a tiled kernel should."""


@dataclass(frozen=True)
class TrafficReport:
    tile: int
    shape: tuple[int, int, int]
    reads: int
    model: int
    naive: int

    def __str__(self) -> str:
        M, N, K = self.shape
        return (f"✓ tile {self.tile}, {M}×{N}×{K}: your kernel read {self.reads:,} elements of "
                f"A and B; the whole-tile model says {self.model:,}; the naive kernel reads "
                f"{self.naive:,} ({self.naive / max(self.reads, 1):.1f}× more)")


def _seed() -> int:
    return int.from_bytes(os.urandom(4))


def check_traffic(factory: Callable[[int], Any], tile: int = 16,
                  shape: tuple[int, int, int] | None = None, quiet: bool = False
                  ) -> TrafficReport:
    """Count ``make_gemm_tiled(tile)``'s reads of A and B on the simulator; fail if too many."""
    gate.begin_check("check_traffic")
    M, N, K = shape or (tile + 3, tile + 1, 2 * tile + 3)
    seen = isolated.inspect_tiled(factory, tile, (M, N, K), _seed())
    if seen.get("error"):
        raise TrafficCheckError(f"make_gemm_tiled({tile}) could not be counted: {seen['error']}")
    reads = int(seen["reads_a"]) + int(seen["reads_b"])
    model = tiled_reads(M, N, K, tile)
    report = TrafficReport(tile, (M, N, K), reads, model, naive_reads(M, N, K))
    if reads > TRAFFIC_SLACK * model:
        raise TrafficCheckError(
            f"make_gemm_tiled({tile}) read {reads:,} elements of A and B for M={M}, N={N}, "
            f"K={K}; a tiled kernel loads about {model:,} (whole tiles), at most "
            f"{TRAFFIC_SLACK}× that is accepted, and the naive kernel reads {report.naive:,}. "
            "Each thread should read ONE element of A and ONE of B per step into shared "
            "memory; the multiply loop must read only the shared tiles."
        )
    if reads == 0:
        raise TrafficCheckError(f"make_gemm_tiled({tile}) read nothing from A or B")
    if not quiet:
        print(report)
    return report
