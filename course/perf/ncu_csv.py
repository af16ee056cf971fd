"""Reading what Nsight Compute's command line prints: its raw page as CSV.

``ncu --csv --page raw --print-units base`` prints one header row (the launch's columns, then
one column per metric), one row of units, then one row per profiled kernel launch, in launch
order. This module turns that text into numbers in SI base units (bytes, seconds, cycles), with
the standard library's :mod:`csv` reader, and says plainly what is wrong when the text is not
such a table. It knows nothing about GPUs: the counters module (:mod:`course.perf.counters`)
runs the tool and decides what the numbers mean.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

#: the column that opens the raw page's header row.
FIRST_COLUMN = "ID"
#: the launch's own columns kept beside the metrics.
NAME_COLUMN = "Kernel Name"

_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
_TIME = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0,
         "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
#: rates: what ``--print-units base`` writes for a clock (2025.3: ``hz``).
_RATE = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}
_UNIT = re.compile(r"^(Ki|Mi|Gi|Ti|K|M|G|T|P)?(byte|cycle|inst|sector|request|warp|thread)$")


class NcuOutputError(ValueError):
    """The text is not the raw CSV page this module reads; the message says what is missing."""


@dataclass(frozen=True)
class ProfiledLaunch:
    """One profiled kernel launch: its name and each metric in SI base units."""

    kernel_name: str
    metrics: dict[str, float]


def unit_factor(unit: str) -> float:
    """The factor that turns a value in ``unit`` into SI base units: ``"Mbyte"`` → 1e6,
    ``"usecond"`` and ``"us"`` → 1e-6, ``"cycle/nsecond"`` → 1e9, ``"byte/cycle"`` → 1,
    ``"hz"`` → 1, ``""`` → 1 (Nsight Compute 2025.3's base units are ``byte``, ``ns``,
    ``hz`` and ``byte/cycle``)."""
    unit = unit.strip()
    if not unit or unit in ("%", "ratio"):
        return 1.0
    if "/" in unit:
        top, bottom = unit.split("/", 1)
        return unit_factor(top) / unit_factor(bottom)
    if unit in _TIME:
        return _TIME[unit]
    if unit.lower() in _RATE:
        return _RATE[unit.lower()]
    match = _UNIT.match(unit)
    if match is None:
        raise NcuOutputError(f"unknown unit {unit!r} in Nsight Compute's output")
    return _PREFIX[match.group(1) or ""]


def _number(text: str) -> float | None:
    text = text.strip().replace(",", "")
    if text in ("", "n/a", "N/A"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def parse_raw_csv(text: str, metrics: tuple[str, ...]) -> list[ProfiledLaunch]:
    """Every profiled launch of ``ncu --csv --page raw`` output, in launch order, with the named
    ``metrics`` in SI base units. Lines before the header (the tool's own ``==PROF==`` lines,
    the program's output) are skipped. ``NcuOutputError`` names a missing header, a missing
    metric column or a value that is not a number."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.startswith(f'"{FIRST_COLUMN}",')), None)
    if start is None:
        raise NcuOutputError("Nsight Compute printed no table of metrics (no line starts with "
                             f'"{FIRST_COLUMN}",)')
    rows = list(csv.reader(io.StringIO("\n".join(
        line for line in lines[start:] if line.startswith('"')))))
    header, body = rows[0], rows[1:]
    missing = [m for m in (NAME_COLUMN, *metrics) if m not in header]
    if missing:
        raise NcuOutputError("Nsight Compute's table has no column " + ", ".join(missing))
    units: list[str] = [""] * len(header)
    if body and not _number(body[0][0] if body[0] else ""):  # the units row: no launch ID
        units, body = body[0], body[1:]
    launches = []
    for row in body:
        if len(row) != len(header):
            continue  # a line the program printed that happens to start with a quote
        values: dict[str, float] = {}
        for metric in metrics:
            i = header.index(metric)
            value = _number(row[i])
            if value is None:
                raise NcuOutputError(f"{metric} of launch {row[0]} is {row[i]!r}, not a number")
            values[metric] = value * unit_factor(units[i] if i < len(units) else "")
        launches.append(ProfiledLaunch(row[header.index(NAME_COLUMN)], values))
    return launches
