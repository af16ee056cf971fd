"""Counter readings recorded on a real GPU, shipped with the course: the week's measured memory
traffic for students without a GPU (or without permission to read its counters).

``recorded_traffic.json`` (beside this module) holds, for the naive and tiled GEMM kernels of
both tracks at a few sizes, what Nsight Compute read from the GPU's counters during one launch
each: bytes read and written in DRAM, bytes through L2 and L1, and the kernel's time; and the
roofs of that GPU, each measured or from its datasheet, saying which. Its ``recorded`` block
says when, on which GPU, with which versions and command (``scripts/gpu/traffic_table.py``
writes the file; docs/traffic.md keeps the same table). Nothing here computes an answer: it
only reads numbers.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from course.runtime.i18n import _

#: the file, in this package (package data).
TABLE = Path(__file__).with_name("recorded_traffic.json")

#: the memory levels of the hierarchical roofline, nearest the arithmetic last.
LEVELS = ("DRAM", "L2", "L1")


@dataclass(frozen=True)
class RecordedRun:
    """One kernel launch as the counters saw it."""

    track: str  # "Numba" or "CUDA C"
    kernel: str  # "naive" or "tiled"
    tile: int | None  # the tile of a tiled kernel; None for the naive one (16×16 blocks)
    size: int  # M = N = K
    flops: float  # 2·size³
    seconds: float  # the kernel's duration under the profiler (gpu__time_duration)
    dram_read: float  # bytes
    dram_write: float  # bytes
    l2: float  # bytes through the L2 cache (lts__t_bytes)
    l1: float  # bytes through L1 (l1tex__t_bytes: global loads and stores, not shared memory)

    @property
    def label(self) -> str:
        """``naive`` or ``tiled 32``, as tables and plots name the kernel."""
        return self.kernel if self.tile is None else f"{self.kernel} {self.tile}"

    @property
    def level_bytes(self) -> dict[str, float]:
        """Bytes per level, as the hierarchical roofline counts them (DRAM: read + written)."""
        return {"DRAM": self.dram_read + self.dram_write, "L2": self.l2, "L1": self.l1}

    @property
    def gflops(self) -> float:
        """The rate the launch reached [GFLOP/s]."""
        return self.flops / self.seconds / 1e9


@dataclass(frozen=True)
class RecordedTable:
    """The shipped readings, the roofs of their GPU, and where both come from."""

    runs: tuple[RecordedRun, ...]
    gpu: str
    date: str
    command: str
    versions: Mapping[str, str]
    peak_gflops: float
    bandwidths_gbs: Mapping[str, float]  # per level of LEVELS
    roof_sources: Mapping[str, str]  # per level and "peak": how the roof was obtained
    notes: tuple[str, ...] = field(default=())

    def find(self, track: str, kernel: str, size: int, tile: int | None = None) -> RecordedRun:
        """The run of ``kernel`` (``tile``) on ``track`` at ``size``; KeyError naming the runs."""
        for run in self.runs:
            if (run.track, run.kernel, run.tile, run.size) == (track, kernel, tile, size):
                return run
        have = ", ".join(f"{r.track} {r.label} {r.size}³" for r in self.runs)
        raise KeyError(_("no recorded run of {track} {kernel} (tile {tile}) at {size}³; the table "
                         "has: {have}").format(track=track, kernel=kernel, tile=tile, size=size,
                                               have=have))

    def source(self) -> str:
        """One sentence: where and how these numbers were measured."""
        return _("Recorded on an {gpu} on {date} with Nsight Compute ({command}).").format(
            gpu=self.gpu, date=self.date, command=self.command)


def _run(entry: Mapping[str, Any]) -> RecordedRun:
    return RecordedRun(entry["track"], entry["kernel"], entry.get("tile"), int(entry["size"]),
                       float(entry["flops"]), float(entry["seconds"]),
                       float(entry["dram_read"]), float(entry["dram_write"]),
                       float(entry["l2"]), float(entry["l1"]))


def from_json(data: Mapping[str, Any]) -> RecordedTable:
    """A table from the file's structure (see ``recorded_traffic.json``)."""
    rec, roofs = data["recorded"], data["roofs"]
    return RecordedTable(
        tuple(_run(e) for e in data["runs"]), rec["gpu"], rec["date"], rec["command"],
        dict(rec.get("versions", {})), float(roofs["peak_gflops"]),
        {k: float(v) for k, v in roofs["bandwidth_gbs"].items()}, dict(roofs["sources"]),
        tuple(rec.get("notes", ())))


@functools.lru_cache(maxsize=1)
def load_recorded() -> RecordedTable:
    """The readings shipped with the course (``recorded_traffic.json``)."""
    return from_json(json.loads(TABLE.read_text(encoding="utf-8")))
