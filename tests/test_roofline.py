"""Tests for course.perf.roofline (plotting) and course.runtime.devices (datasheet lookup)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402

import course.perf.roofline as roofline  # noqa: E402
from course.perf.roofline import KernelPoint, Roof, percent_of_roof, plot_roofline  # noqa: E402
from course.runtime.devices import DATASHEET, DEFAULT_SIMULATOR_DEVICE, DeviceSpec, lookup  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def gids(ax: Axes, gid: str) -> list:
    """Artists (lines and patches) that plot_roofline tagged with ``gid``."""
    return [a for a in ax.get_lines() + ax.patches if a.get_gid() == gid]


# --------------------------------------------------------------------------- Roof / points

ROOF = Roof("toy", peak_gflops=1000.0, bandwidth_gbs=100.0)  # ridge at 10 FLOP/B


def test_ridge_is_peak_over_bandwidth():
    assert ROOF.ridge_ai == pytest.approx(10.0)
    assert Roof("T4", 8141.0, 320.0).ridge_ai == pytest.approx(25.44, abs=0.01)


def test_attainable_memory_side_is_bandwidth_times_ai():
    assert ROOF.attainable(1.0) == pytest.approx(100.0)
    assert ROOF.attainable(0.25) == pytest.approx(25.0)


def test_attainable_compute_side_is_flat_peak():
    assert ROOF.attainable(10.0) == pytest.approx(1000.0)
    assert ROOF.attainable(500.0) == pytest.approx(1000.0)


def test_attainable_scalar_gives_float_and_array_gives_array():
    assert isinstance(ROOF.attainable(2), float)
    out = ROOF.attainable(np.array([1.0, 10.0, 100.0]))
    np.testing.assert_allclose(out, [100.0, 1000.0, 1000.0])


def test_percent_of_roof_on_both_sides():
    assert percent_of_roof(KernelPoint("mem", 1.0, 50.0), ROOF) == pytest.approx(50.0)
    assert percent_of_roof(KernelPoint("cmp", 100.0, 410.0), ROOF) == pytest.approx(41.0)


def test_roof_from_spec():
    roof = Roof.from_spec(DATASHEET["Tesla T4"])
    assert (roof.peak_gflops, roof.bandwidth_gbs) == (8141.0, 320.0)


def test_student_exercises_are_not_defined_in_course():
    for name in ("attainable_gflops", "critical_ai", "bound"):
        assert not hasattr(roofline, name), f"{name} is a student exercise"


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("make", "argname"),
    [
        (lambda: Roof("r", 0.0, 100.0), "peak_gflops"),
        (lambda: Roof("r", -5.0, 100.0), "peak_gflops"),
        (lambda: Roof("r", 1000.0, 0.0), "bandwidth_gbs"),
        (lambda: Roof("r", 1000.0, float("nan")), "bandwidth_gbs"),
        (lambda: KernelPoint("k", 0.0, 10.0), "ai"),
        (lambda: KernelPoint("k", -1.0, 10.0), "ai"),
        (lambda: KernelPoint("k", 1.0, 0.0), "gflops"),
        (lambda: KernelPoint("k", 1.0, -3.0), "gflops"),
        (lambda: ROOF.attainable(0.0), "ai"),
        (lambda: ROOF.attainable(np.array([1.0, -1.0])), "ai"),
    ],
)
def test_non_positive_values_raise_value_error_naming_the_argument(make, argname):
    with pytest.raises(ValueError, match=rf"\b{argname}\b"):
        make()


def test_bad_ai_range_and_empty_roofs_raise():
    with pytest.raises(ValueError, match="ai_range"):
        plot_roofline(ROOF, ai_range=(10, 1))
    with pytest.raises(ValueError, match="ai_range"):
        plot_roofline(ROOF, ai_range=(0, 1))
    with pytest.raises(ValueError, match="roofs"):
        plot_roofline([])


def test_shading_two_roofs_with_different_peaks_is_refused():
    with pytest.raises(ValueError, match="same peak"):
        plot_roofline([ROOF, Roof("other", 2000.0, 100.0)], shade_regions=True)


# --------------------------------------------------------------------------- plot


def test_plot_axes_labels_and_log_scales():
    ax = plot_roofline(ROOF)
    assert isinstance(ax, Axes)
    assert ax.get_xlabel() == "Arithmetic intensity [FLOP/byte]"
    assert ax.get_ylabel() == "Performance [GFLOP/s]"
    assert ax.get_xscale() == "log"
    assert ax.get_yscale() == "log"


def test_plot_draws_into_given_axes_and_sets_title():
    _, ax = plt.subplots()
    assert plot_roofline(ROOF, ax=ax, title="My GPU") is ax
    assert ax.get_title() == "My GPU"


def test_plot_line_and_marker_counts():
    roofs = [ROOF, Roof("fast", 1000.0, 400.0)]
    points = [KernelPoint("a", 1.0, 50.0), KernelPoint("b", 100.0, 1000.0)]  # b sits on roof
    ax = plot_roofline(roofs, points)
    assert len(gids(ax, "roof-memory")) == 2
    assert len(gids(ax, "roof-compute")) == 2
    assert len(gids(ax, "ridge")) == 2
    assert len(gids(ax, "kernel")) == 2
    assert len(gids(ax, "gap")) == 1  # only the kernel below its roof gets a gap line
    assert len(ax.get_lines()) == 2 + 2 + 2 + 2 + 1


def test_each_roof_is_one_colour_with_the_right_shape():
    ax = plot_roofline(ROOF, ai_range=(0.5, 200))
    (mem,) = gids(ax, "roof-memory")
    (cmp,) = gids(ax, "roof-compute")
    (ridge,) = gids(ax, "ridge")
    assert mem.get_color() == cmp.get_color() == ridge.get_color()
    np.testing.assert_allclose(mem.get_xydata(), [[0.5, 50.0], [10.0, 1000.0]])
    np.testing.assert_allclose(cmp.get_xydata(), [[10.0, 1000.0], [200.0, 1000.0]])
    np.testing.assert_allclose(ridge.get_xydata(), [[10.0, 1000.0]])


def test_ridge_and_percent_annotations():
    ax = plot_roofline(ROOF, [KernelPoint("tiled 32", 100.0, 410.0)])
    texts = [t.get_text() for t in ax.texts]
    assert "ridge: 10 FLOP/B" in texts
    assert "tiled 32: 41% of roof" in texts


def test_crowded_labels_do_not_cover_each_other_or_leave_the_axes():
    """The H200 run of notebook 05: tiles 16 and 32 close together, cuBLAS at the right edge,
    two ridges 12.5 and 13.9 FLOP/byte apart by a hair. Every label must stay readable."""
    roofs = [Roof("measured", 50_890.0, 4_068.0), Roof("datasheet", 66_900.0, 4_800.0)]
    points = [KernelPoint("vector add", 1 / 12, 274.0), KernelPoint("naive", 0.25, 1_316.0),
              KernelPoint("tiled 8", 1.996, 5_046.0), KernelPoint("tiled 16", 3.984, 7_841.0),
              KernelPoint("tiled 32", 7.938, 8_077.0), KernelPoint("cuBLAS", 341.3, 48_936.0)]
    fig, ax = plt.subplots(figsize=(10, 6), layout="constrained")
    plot_roofline(roofs, points, ax=ax)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    labels = [t for t in ax.texts if t.get_gid() in ("ridge-label", "kernel-label")]
    assert len(labels) == 8
    boxes = [t.get_window_extent(renderer) for t in labels]
    frame = ax.get_window_extent(renderer)
    for i, box in enumerate(boxes):
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1, labels[i].get_text()
        for j in range(i):
            assert not box.overlaps(boxes[j]), (labels[i].get_text(), labels[j].get_text())
    markers = [line.get_window_extent(renderer) for line in ax.lines
               if line.get_gid() in ("ridge", "kernel")]
    for text, box in zip(labels, boxes, strict=True):
        assert not any(box.overlaps(m) for m in markers), text.get_text()
    plt.close(fig)


def test_percent_is_against_first_roof_when_several():
    ax = plot_roofline([ROOF, Roof("fast", 1000.0, 400.0)], [KernelPoint("k", 1.0, 50.0)])
    assert "k: 50% of toy roof" in [t.get_text() for t in ax.texts]


def test_no_shading_unless_asked():
    ax = plot_roofline([ROOF, Roof("fast", 1000.0, 400.0)])
    assert gids(ax, "region") == []


def test_three_shaded_regions_for_same_peak_two_bandwidths():
    ax = plot_roofline([Roof("slow", 10_000.0, 500.0), Roof("fast", 10_000.0, 2000.0)],
                       shade_regions=True)
    regions = gids(ax, "region")
    assert len(regions) == 3
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    for label in ("memory-bound on both", "bandwidth-dependent", "compute-bound on both"):
        assert label in legend


def test_two_shaded_regions_for_one_roof():
    ax = plot_roofline(ROOF, shade_regions=True)
    assert len(gids(ax, "region")) == 2


def test_plot_never_calls_show(monkeypatch):
    def fail():
        raise AssertionError("plt.show() called")

    monkeypatch.setattr(plt, "show", fail)
    plot_roofline(ROOF, [KernelPoint("k", 1.0, 50.0)], shade_regions=True)


def test_plot_renders_with_agg(tmp_path):
    ax = plot_roofline(ROOF, [KernelPoint("k", 1.0, 50.0)], shade_regions=True)
    ax.figure.savefig(tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 1000


# --------------------------------------------------------------------------- devices


@pytest.mark.parametrize(
    ("reported", "expected"),
    [
        (b"Tesla T4", "Tesla T4"),
        ("Tesla T4", "Tesla T4"),
        ("tesla t4", "Tesla T4"),
        ("NVIDIA L4", "NVIDIA L4"),
        ("Tesla V100-SXM2-16GB", "Tesla V100-SXM2-16GB"),
        (b"Tesla V100-SXM2-32GB", "Tesla V100-SXM2-32GB"),
        ("NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB"),
        ("NVIDIA A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB"),
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"),
        ("NVIDIA H100 PCIe", "NVIDIA H100 PCIe"),
        ("NVIDIA H200", "NVIDIA H200"),
        (b"NVIDIA H200", "NVIDIA H200"),
        ("nvidia h200", "NVIDIA H200"),
    ],
)
def test_lookup_reported_names(reported, expected):
    spec = lookup(reported)
    assert isinstance(spec, DeviceSpec)
    assert spec.name == expected


@pytest.mark.parametrize(
    "name",
    ["NVIDIA GeForce RTX 4090", b"Quadro P1000", "NVIDIA H200 NVL", "Tesla P100-PCIE-16GB",
     "", "cpu"],
)
def test_lookup_unknown_gives_none(name):
    assert lookup(name) is None


def test_t4_datasheet_values():
    t4 = lookup(b"Tesla T4")
    assert t4.compute_capability == (7, 5)
    assert (t4.sm_count, t4.fp32_peak_gflops, t4.bandwidth_gbs) == (40, 8141.0, 320.0)
    assert (t4.memory_gb, t4.l2_mb) == (16, 4)


def test_h200_has_h100_compute_and_more_bandwidth():
    h100, h200 = lookup("NVIDIA H100 80GB HBM3"), lookup("NVIDIA H200")
    assert h200.fp32_peak_gflops == h100.fp32_peak_gflops == 66900.0
    assert (h100.bandwidth_gbs, h200.bandwidth_gbs) == (3350.0, 4800.0)
    assert (h200.sm_count, h200.memory_gb, h200.l2_mb) == (132, 141, 60)
    assert lookup("NVIDIA A100-SXM4-80GB").bandwidth_gbs == 2039.0


def test_datasheet_is_consistent():
    assert DEFAULT_SIMULATOR_DEVICE in DATASHEET
    for key, spec in DATASHEET.items():
        assert key == spec.name
        assert lookup(spec.name) is spec  # every reported name round-trips
        assert spec.notes, f"{key} needs a source in notes"
        assert 1 < spec.fp32_peak_gflops / spec.bandwidth_gbs < 200
        assert len(spec.compute_capability) == 2
