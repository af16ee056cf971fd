"""The roof to draw on a roofline: measured on a GPU, the datasheet's elsewhere, and a
sentence saying which (:func:`ceilings_for_plot`), and measured ceilings against the
datasheet (:func:`compare_with_datasheet`); notebook 05's ceilings cell in one call
(:func:`measure_ceilings`). The measurements are :mod:`course.perf.ceilings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from course.perf import ceilings
from course.perf.ceilings import Ceiling, MissingDependencyError
from course.perf.roofline import Roof
from course.runtime import backend
from course.runtime.devices import DATASHEET, DEFAULT_SIMULATOR_DEVICE, lookup
from course.runtime.i18n import _, aligned_lines


def _simulator_roof() -> tuple[Roof, str]:
    spec = DATASHEET[DEFAULT_SIMULATOR_DEVICE]
    roof = Roof(_("{gpu} (datasheet)").format(gpu=spec.name), spec.fp32_peak_gflops,
                spec.bandwidth_gbs)
    source = _("No GPU here, so nothing can be measured: this is the datasheet roof of a "
               "{gpu}, Colab's free GPU ({peak:,.0f} GFLOP/s FP32, {bandwidth:,.0f} GB/s), not "
               "a measurement of this machine.").format(
        gpu=spec.name, peak=spec.fp32_peak_gflops, bandwidth=spec.bandwidth_gbs)
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
                raise MissingDependencyError(_(
                    "{error} course.tools.DATASHEET has no datasheet peak for {gpu} "
                    "either.").format(
                        error=exc, gpu=b.device_name)) from None
            peak_value = spec.fp32_peak_gflops
            words.append(_("the datasheet FP32 peak {peak:,.0f} GFLOP/s (CuPy is not "
                           "installed, so cuBLAS could not measure one)").format(peak=peak_value))
    if peak is not None:
        peak_value = peak.value_gflops
        words.append(f"{peak.what} {peak_value:,.0f} GFLOP/s")
    # A short name: plot_roofline labels every point with "N% of <name> roof".
    roof = Roof("measured", peak_value, bandwidth.value_gbs)
    bandwidth_words, peak_words = words
    return roof, _("Measured on this {gpu}: {bandwidth} and {peak}.").format(
        gpu=b.device_name, bandwidth=bandwidth_words, peak=peak_words)


def compare_with_datasheet(ceilings: Sequence[Ceiling], device_name: str) -> str:
    """A small table: each measured ceiling beside the datasheet number of its kind."""

    spec = lookup(device_name)
    rows = [(_("ceiling"), _("measured"), _("datasheet"), _("measured / datasheet"))]
    for c in ceilings:
        sheet = None
        if spec is not None:
            sheet = spec.bandwidth_gbs if c.unit == "GB/s" else spec.fp32_peak_gflops
        rows.append((c.what, f"{c.value:,.0f} {c.unit}",
                     "—" if sheet is None else f"{sheet:,.0f} {c.unit}",
                     "—" if sheet is None else f"{100 * c.value / sheet:.0f} %"))
    lines = aligned_lines(rows, rule=True)
    if spec is None:
        lines.append(_("(course.tools.DATASHEET has no datasheet entry for {gpu})").format(
            gpu=device_name))
    else:
        lines.append(_("(datasheet: {notes})").format(notes=_(spec.notes) if spec.notes else ""))
    return "\n".join(lines)


def measure_ceilings(vector_add_kernel: Any) -> dict[str, Ceiling]:
    """Notebook 05's ceilings, measured and printed; returns them by name.

    On a GPU that can time: the device-to-device copy bandwidth (``"copy"``), the bandwidth of
    the student's ``vector_add_kernel`` (``"vector_add"``, left out with the reason printed if
    it is wrong or unwritten) and cuBLAS's FP32 rate (``"peak"``, left out with the reason if
    CuPy is missing), each printed, then its share of the copy bandwidth and the table of
    :func:`compare_with_datasheet`. Elsewhere nothing is measured (an empty dict) and one line
    says which datasheet stands in.
    """
    b = backend.detect()
    if not b.can_time:
        spec = DATASHEET[DEFAULT_SIMULATOR_DEVICE]
        print(_("No GPU, so nothing to measure. Standing in: the datasheet of a {gpu} "
                "(course.tools.DEFAULT_SIMULATOR_DEVICE, Colab's free GPU): {peak:,.0f} "
                "GFLOP/s FP32, {bandwidth:,.0f} GB/s, ridge {ridge:.1f} FLOP/byte.").format(
            gpu=spec.name, peak=spec.fp32_peak_gflops, bandwidth=spec.bandwidth_gbs,
            ridge=spec.ridge_ai))
        return {}
    measured = {"copy": ceilings.measure_copy_bandwidth()}
    try:
        measured["vector_add"] = ceilings.measure_bandwidth(vector_add_kernel)
    except (ceilings.VectorAddCheckError, NotImplementedError) as exc:
        print(_("Your vector_add could not be measured: {error}").format(error=exc))
    try:
        measured["peak"] = ceilings.measure_fp32_peak()
    except MissingDependencyError as exc:
        print(exc)
    for ceiling in measured.values():
        print(ceiling)
    if "vector_add" in measured:
        share = measured["vector_add"].value_gbs / measured["copy"].value_gbs
        print()
        print(_("Your vector_add streams at {share:.0%} of the copy bandwidth.").format(
            share=share))
    print()
    print(compare_with_datasheet(list(measured.values()), b.device_name or ""))
    return measured
