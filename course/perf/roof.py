"""The roof to draw on a roofline: measured on a GPU, the datasheet's elsewhere, and a
sentence saying which (:func:`ceilings_for_plot`), and measured ceilings against the
datasheet (:func:`compare_with_datasheet`). The measurements are :mod:`course.perf.ceilings`.
"""

from __future__ import annotations

from collections.abc import Sequence

from course.perf import ceilings
from course.perf.ceilings import Ceiling, MissingDependencyError
from course.perf.roofline import Roof
from course.runtime import backend
from course.runtime.devices import DATASHEET, DEFAULT_SIMULATOR_DEVICE, lookup


def _simulator_roof() -> tuple[Roof, str]:
    spec = DATASHEET[DEFAULT_SIMULATOR_DEVICE]
    roof = Roof(f"{spec.name} (datasheet)", spec.fp32_peak_gflops, spec.bandwidth_gbs)
    source = (f"No GPU here, so nothing can be measured: this is the datasheet roof of a "
              f"{spec.name}, Colab's free GPU ({spec.fp32_peak_gflops:,.0f} GFLOP/s FP32, "
              f"{spec.bandwidth_gbs:,.0f} GB/s), not a measurement of this machine.")
    return roof, source


def ceilings_for_plot(bandwidth: Ceiling | None = None, peak: Ceiling | None = None
                      ) -> tuple[Roof, str]:
    """The roof to draw, and one sentence saying where its numbers come from.

    On a GPU: the measured device-copy bandwidth and the measured cuBLAS FP32 rate (pass
    ceilings you already measured to reuse them). If CuPy is missing, the peak falls back to
    the datasheet, and the sentence says so. Without a GPU: the datasheet roof of
    ``course.runtime.devices.DEFAULT_SIMULATOR_DEVICE``.
    """
    b = backend.detect()
    if b.kind != "gpu":
        return _simulator_roof()

    spec = lookup(b.device_name or "")
    bandwidth = bandwidth or ceilings.measure_copy_bandwidth()
    words = [f"{bandwidth.what} {bandwidth.value_gbs:,.0f} GB/s"]
    if peak is None:
        try:
            peak = ceilings.measure_fp32_peak()
        except MissingDependencyError as exc:
            if spec is None:
                raise MissingDependencyError(
                    f"{exc} course.tools.DATASHEET has no datasheet peak for "
                    f"{b.device_name} either."
                ) from None
            peak_value = spec.fp32_peak_gflops
            words.append(f"the datasheet FP32 peak {peak_value:,.0f} GFLOP/s (CuPy is not "
                         "installed, so cuBLAS could not measure one)")
    if peak is not None:
        peak_value = peak.value_gflops
        words.append(f"the {peak.what} {peak_value:,.0f} GFLOP/s")
    # A short name: plot_roofline labels every point with "N% of <name> roof".
    roof = Roof("measured", peak_value, bandwidth.value_gbs)
    return roof, f"Measured on this {b.device_name}: {' and '.join(words)}."


def compare_with_datasheet(ceilings: Sequence[Ceiling], device_name: str) -> str:
    """A small table: each measured ceiling beside the datasheet number of its kind."""

    spec = lookup(device_name)
    rows = [("ceiling", "measured", "datasheet", "measured / datasheet")]
    for c in ceilings:
        sheet = None
        if spec is not None:
            sheet = spec.bandwidth_gbs if c.unit == "GB/s" else spec.fp32_peak_gflops
        rows.append((c.what, f"{c.value:,.0f} {c.unit}",
                     "—" if sheet is None else f"{sheet:,.0f} {c.unit}",
                     "—" if sheet is None else f"{100 * c.value / sheet:.0f} %"))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    lines = ["  ".join([r[0].ljust(widths[0])] + [x.rjust(w) for x, w in
                                                  zip(r[1:], widths[1:], strict=True)])
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if spec is None:
        lines.append(f"(course.tools.DATASHEET has no datasheet entry for {device_name})")
    else:
        lines.append(f"(datasheet: {spec.notes})")
    return "\n".join(lines)
