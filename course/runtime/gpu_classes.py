"""Performance bars per class of GPU: the graded speedup and the bandwidth bar.

Both bars are ratios measured in one run on one GPU (tiled vs naive GEMM; vector add vs the
fastest device copy), so they do not depend on how fast the GPU is. They do depend on how
its caches, load/store units and memory behave, so each class of GPU carries its own values
and says what they rest on:

* **Hopper (H100, H200)**, sm_90: *measured* on an H200 (docs/results-gpu.md): correct tile-32
  kernels ran 5.75–6.09× faster than the reference naive kernel at 2048³ (bar 2.0×, margin
  2.9×); a "tiled" kernel still reading global memory in its inner loop ran 0.82× (fails);
  vector add streamed at 87–88 % of the fastest copy (bar 80 %).
* **Turing (T4, Colab's free GPU)**, sm_75: *estimated* from a model calibrated on the H200
  (docs/t4-estimate.md: about 5.4×, range 3.3–6.7×, for the same kernels at 2048³; vector add
  about 90–105 % of a copy on GDDR6); the bars stay at 2.0× and 80 % until a T4 run replaces
  the estimate.
* **any other GPU**: the H200's bars, marked as not validated for that GPU.

:func:`for_device` picks the class from the name the driver reports (or the compute
capability); :mod:`course.checks.speedup` and the GPU ceilings script read their bar from it.
"""

from __future__ import annotations

from dataclasses import dataclass

from course.runtime.devices import lookup

__all__ = ["CLASSES", "OTHER", "GpuClass", "for_device"]


@dataclass(frozen=True)
class GpuClass:
    """The bars for one class of GPU, and what they rest on."""

    name: str
    compute_capabilities: tuple[tuple[int, int], ...]
    speedup_threshold: float  # tiled / naive time ratio the graded check asks for
    bandwidth_bar: float  # vector add bandwidth / fastest device copy
    measured: bool  # True: measured on a GPU of this class; False: estimated or borrowed
    basis: str  # where the numbers come from, in a few words

    def describe(self) -> str:
        how = "measured" if self.measured else "not measured on this class yet"
        return f"{self.name}: {how} ({self.basis})"


CLASSES: tuple[GpuClass, ...] = (
    GpuClass("Hopper (H100, H200)", ((9, 0),), 2.0, 0.80, True,
             "an H200, docs/results-gpu.md"),
    GpuClass("Turing (T4)", ((7, 5),), 2.0, 0.80, False,
             "estimated from the H200 by a model, docs/t4-estimate.md"),
)
OTHER = GpuClass("another GPU", (), 2.0, 0.80, False,
                 "the H200's bars, not validated for this GPU")


def for_device(device_name: str | bytes | None,
               compute_capability: tuple[int, int] | None = None) -> GpuClass:
    """The class of a GPU, from its reported name or else its compute capability."""
    spec = lookup(device_name) if device_name else None
    cc = spec.compute_capability if spec is not None else compute_capability
    if cc is not None:
        cc = (int(cc[0]), int(cc[1]))
        for gpu_class in CLASSES:
            if cc in gpu_class.compute_capabilities:
                return gpu_class
    return OTHER
