"""Datasheet numbers for the GPUs students are likely to meet (Colab, cloud, the course cluster).

The roofline model needs two numbers per GPU: peak FP32 throughput and DRAM bandwidth.
Students measure their kernels and compare against these *vendor peaks*, so the table keeps
datasheet values (boost clock, no sparsity, non-tensor-core FP32), with the source in
``notes`` (in the message catalog: shown in the student's language). Units are decimal:
1 GB/s = 1e9 bytes/s, 1 GFLOP/s = 1e9 FLOP/s.

``lookup`` maps the name a runtime reports (``numba.cuda.get_current_device().name``, which
is ``bytes``, or CuPy's ``getDeviceProperties(0)['name']``) to a spec. Unknown GPUs give
``None`` so callers can fall back to asking the student for numbers instead of crashing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from course.runtime.i18n import N_

__all__ = ["DATASHEET", "DEFAULT_SIMULATOR_DEVICE", "DeviceSpec", "lookup"]


@dataclass(frozen=True)
class DeviceSpec:
    """Headline numbers of one GPU model, as the vendor publishes them."""

    name: str  # the name the CUDA driver reports, e.g. "Tesla T4"
    compute_capability: tuple[int, int]
    sm_count: int
    fp32_peak_gflops: float  # non-tensor-core FP32, boost clock
    bandwidth_gbs: float  # DRAM (GDDR/HBM) bandwidth, decimal GB/s
    memory_gb: float
    l2_mb: float
    notes: str = ""

    @property
    def ridge_ai(self) -> float:
        """FP32 intensity [FLOP/byte] where the datasheet's bandwidth meets its peak (the ridge
        of :meth:`course.perf.roofline.Roof.from_spec`)."""
        return self.fp32_peak_gflops / self.bandwidth_gbs


_SPECS = (
    DeviceSpec(
        "Tesla T4", (7, 5), 40, 8141.0, 320.0, 16, 4,
        N_("NVIDIA T4 Tensor Core GPU datasheet: 8.1 TFLOP/s FP32, 320 GB/s GDDR6, 16 GB. "
           "8141 = 2560 cores x 2 FLOP x 1.59 GHz boost. L2 4 MB (Turing whitepaper/TU104)."),
    ),
    DeviceSpec(
        "NVIDIA L4", (8, 9), 58, 30300.0, 300.0, 24, 48,
        N_("NVIDIA L4 Tensor Core GPU datasheet: 30.3 TFLOP/s FP32, 300 GB/s GDDR6, 24 GB. "
           "58 SMs x 128 cores (7424) at 2.04 GHz boost. L2 48 MB (AD104)."),
    ),
    DeviceSpec(
        "Tesla V100-SXM2-16GB", (7, 0), 80, 15700.0, 900.0, 16, 6,
        N_("NVIDIA Tesla V100 datasheet (SXM2): 15.7 TFLOP/s FP32, 900 GB/s HBM2. "
           "L2 6 MB (Volta whitepaper)."),
    ),
    DeviceSpec(
        "Tesla V100-SXM2-32GB", (7, 0), 80, 15700.0, 900.0, 32, 6,
        N_("NVIDIA Tesla V100 datasheet (SXM2, 32 GB): same compute and bandwidth as 16 GB."),
    ),
    DeviceSpec(
        "NVIDIA A100-SXM4-40GB", (8, 0), 108, 19500.0, 1555.0, 40, 40,
        N_("NVIDIA A100 datasheet (SXM4 40GB): 19.5 TFLOP/s FP32, 1555 GB/s HBM2. "
           "L2 40 MB (Ampere GA100 whitepaper)."),
    ),
    DeviceSpec(
        "NVIDIA A100-SXM4-80GB", (8, 0), 108, 19500.0, 2039.0, 80, 40,
        N_("NVIDIA A100 datasheet (SXM4 80GB): 19.5 TFLOP/s FP32, 2039 GB/s HBM2e. "
           "L2 40 MB (Ampere GA100 whitepaper)."),
    ),
    DeviceSpec(
        "NVIDIA A100 80GB PCIe", (8, 0), 108, 19500.0, 1935.0, 80, 40,
        N_("NVIDIA A100 datasheet (PCIe 80GB): 19.5 TFLOP/s FP32, 1935 GB/s HBM2e."),
    ),
    DeviceSpec(
        "NVIDIA H100 80GB HBM3", (9, 0), 132, 66900.0, 3350.0, 80, 50,
        N_("H100 SXM5. NVIDIA H100 datasheet: 67 TFLOP/s FP32 (66.9 in the Hopper whitepaper), "
           "3.35 TB/s HBM3, 80 GB. L2 50 MB (Hopper whitepaper)."),
    ),
    DeviceSpec(
        "NVIDIA H100 PCIe", (9, 0), 114, 51000.0, 2000.0, 80, 50,
        N_("NVIDIA H100 datasheet (PCIe): 51 TFLOP/s FP32, 2 TB/s HBM2e, 80 GB. L2 50 MB."),
    ),
    DeviceSpec(
        "NVIDIA H200", (9, 0), 132, 66900.0, 4800.0, 141, 60,
        N_("H200 SXM. NVIDIA H200 datasheet: 67 TFLOP/s FP32 (same GH100 compute as H100 SXM), "
           "4.8 TB/s HBM3e, 141 GB. SMs and L2 (60 MiB) as the device reports them "
           "(cudaDeviceProp); the datasheet does not list them."),
    ),
)

#: Every known GPU, keyed by the name the CUDA driver reports.
DATASHEET: dict[str, DeviceSpec] = {spec.name: spec for spec in _SPECS}

#: The GPU the notebooks pretend to have when no GPU is present (Colab's free tier GPU).
DEFAULT_SIMULATOR_DEVICE = "Tesla T4"

# Patterns over *normalised* names (see _normalise): lower case, vendor words dropped,
# '-' and '_' turned into spaces. Matched in full, so a variant we have no numbers for
# (e.g. "H200 NVL", "V100-PCIE-16GB") gives None rather than a sibling's wrong numbers.
_PATTERNS: dict[str, str] = {
    "Tesla T4": r"t4",
    "NVIDIA L4": r"l4",
    "Tesla V100-SXM2-16GB": r"v100 sxm2( 16gb)?",
    "Tesla V100-SXM2-32GB": r"v100 sxm2 32gb",
    "NVIDIA A100-SXM4-40GB": r"a100 sxm4 40gb",
    "NVIDIA A100-SXM4-80GB": r"a100 sxm4 80gb|a100 sxm4|a100 80gb sxm4?",
    "NVIDIA A100 80GB PCIe": r"a100 (80gb pcie|pcie 80gb)",
    "NVIDIA H100 80GB HBM3": r"h100 80gb hbm3|h100 sxm5?( 80gb)?",
    "NVIDIA H100 PCIe": r"h100 pcie( 80gb)?",
    "NVIDIA H200": r"h200( sxm5?)?( 141gb)?",
}


def _normalise(name: str) -> str:
    name = name.lower().replace("-", " ").replace("_", " ")
    words = [w for w in name.split() if w not in ("nvidia", "tesla")]
    return " ".join(words)


def lookup(device_name: str | bytes) -> DeviceSpec | None:
    """Return the datasheet entry for a GPU name as Numba or CuPy report it, else ``None``.

    Matching ignores case, the words "NVIDIA"/"Tesla" and '-'/'_' separators, so
    ``b'Tesla T4'``, ``'NVIDIA A100-SXM4-80GB'`` and ``'nvidia h200'`` all resolve.
    """
    if isinstance(device_name, bytes):
        device_name = device_name.decode("utf-8", errors="replace")
    key = _normalise(device_name.replace("\x00", " "))
    for spec_name, pattern in _PATTERNS.items():
        if re.fullmatch(pattern, key):
            return DATASHEET[spec_name]
    return None
