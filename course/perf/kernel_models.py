"""What the tile sweep runs: a kernel, the facts the occupancy model needs about it, and the GPU
it is modelled for.

A :class:`KernelModel` says how to build and launch one kernel at a tile and what the model
uses without a compiler (threads, static shared memory, the reads of notebook 1's request
model). Numba kernels (``gemm_naive``, ``make_gemm_tiled``, :func:`course.checks.bonus.sweep_model`)
get their registers from Numba's compiler on a GPU and an assumption without one. CUDA C
kernels (the strings ``GEMM_NAIVE_CUDA`` and ``GEMM_TILED_CUDA``, :func:`cuda_c_model`) always
have real numbers (:func:`cuda_counts`): ``RawKernel.attributes`` on this machine's GPU, else
ptxas' verbose lines from NVRTC compiling the source for the target's architecture, which
needs no GPU. A :class:`Target` is the GPU the model is worked out for
(:func:`resolve_target`). :mod:`course.perf.sweep` turns these into rows.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

from course.gemm.cudac import gpu as cuda_gpu
from course.gemm.cudac import launch as cuda_launch
from course.gemm.cudac import nvrtc
from course.gemm.cudac.source import NAIVE as CUDA_NAIVE
from course.gemm.cudac.source import TILED as CUDA_TILED
from course.gemm.cudac.source import compile_kernel
from course.gemm.launch import Launch, is_cuda_kernel, naive, naive_launch, tiled
from course.gemm.occupancy import ARCH_LIMITS
from course.gemm.reads import naive_reads, tiled_reads
from course.perf.cuda_experiment import time_gemm_cuda
from course.runtime import backend
from course.runtime.devices import DATASHEET, lookup
from course.runtime.i18n import _

if TYPE_CHECKING:
    from course.runtime.devices import DeviceSpec

__all__ = [
    "ASSUMED_REGS",
    "BYTES",
    "DEFAULT_PROFILE",
    "PROFILES",
    "CompiledCounts",
    "KernelModel",
    "SweepKernel",
    "Target",
    "as_kernel_model",
    "available_profiles",
    "cuda_c_model",
    "cuda_counts",
    "cuda_resources_line",
    "resolve_target",
]

#: Registers per thread the model assumes without a GPU (no compiler to ask). Simple GEMM
#: kernels compiled by Numba for sm_75..sm_90 use roughly 30-40; this is a round guess.
ASSUMED_REGS = 32
#: Target-GPU profiles by short name: the name the datasheet (course.runtime.devices) uses.
PROFILES: dict[str, str] = {
    "T4": "Tesla T4",
    "A100": "NVIDIA A100-SXM4-80GB",
    "H100": "NVIDIA H100 80GB HBM3",
    "H200": "NVIDIA H200",
}
DEFAULT_PROFILE = "T4"  # Colab's free GPU
BYTES = 4  # float32


# ---------------------------------------------------------------------------------------------
# What the sweep runs: a kernel and the facts the model needs about it.


class SweepKernel(Protocol):
    """A kernel at one tile as a row of the sweep needs it: a name and the contract's launch.

    Both kinds are one: a Numba :class:`course.gemm.launch.GemmKernel` and a CUDA C
    :class:`course.gemm.cudac.launch.CudaGemm`.
    """

    @property
    def name(self) -> str: ...

    def launch_for(self, M: int, N: int) -> Launch: ...


@dataclass(frozen=True)
class KernelModel:
    """How to build, launch and model one kernel of the sweep at a given tile.

    ``gemm(tile)`` gives the kernel to launch (a :class:`SweepKernel`: Numba's
    :class:`course.gemm.launch.GemmKernel`, or a CUDA C kernel, which brings its own ``counts``
    and ``timer``); ``threads(tile)`` and ``static_smem(tile)`` are what the model uses without
    a compiler; ``reads(M, N, K, tile)`` counts the elements of A and B the kernel requests
    (notebook 1's model).
    ``tile_dependent`` is False for kernels whose launch ignores the tile (the naive kernel, a
    register-tiled kernel with fixed blocks): their rows repeat one configuration as a
    reference line, and a GPU times them once.
    """

    name: str
    gemm: Callable[[int], SweepKernel]
    threads: Callable[[int], int]
    static_smem: Callable[[int], int]
    reads: Callable[[int, int, int, int], int]
    tile_dependent: bool = True
    assumed_regs: int = ASSUMED_REGS
    #: (tile, target) → the compiler's counts where they can be had without a Numba launch
    #: (CUDA C); None: ask Numba's compiler on a GPU (:func:`_resources`).
    counts: Callable[[int, Target], CompiledCounts | None] | None = None
    #: (tile, size, repeats) → a :class:`course.perf.timing.Timing` on this GPU; None:
    #: :func:`course.perf.timing.time_gemm` (Numba kernels).
    timer: Callable[[int, int, int], Any] | None = None


@dataclass(frozen=True)
class CompiledCounts:
    """Registers per thread and static shared memory per block, and who reported them."""

    registers: int
    shared_bytes: int
    source: str  # e.g. "ptxas for sm_75 (NVRTC 13.5)" or "RawKernel.attributes on this GPU"


def _naive_model(name: str, kernel: Any) -> KernelModel:
    gk = naive(kernel)
    block = naive_launch(16, 16).block
    return KernelModel(
        name=name, gemm=lambda tile: gk, threads=lambda tile: block[0] * block[1],
        static_smem=lambda tile: 0, reads=lambda M, N, K, tile: naive_reads(M, N, K),
        tile_dependent=False)


def _tiled_model(name: str, factory: Callable[[int], Any]) -> KernelModel:
    return KernelModel(
        name=name, gemm=lambda tile: tiled(factory, tile), threads=lambda tile: tile * tile,
        static_smem=lambda tile: 2 * tile * tile * BYTES,
        reads=lambda M, N, K, tile: tiled_reads(M, N, K, tile))


@functools.lru_cache(maxsize=64)
def _cuda_gemm(source: str, tile: int | None) -> cuda_launch.CudaGemm:
    """The CUDA C kernel at ``tile`` (None: the naive kernel), compiled once to check it."""
    return cuda_launch.naive(source) if tile is None else cuda_launch.tiled(source, tile)


@functools.lru_cache(maxsize=128)
def cuda_counts(source: str, tile: int | None, cc: tuple[int, int],
                own: bool) -> CompiledCounts | None:
    """Registers and shared memory of a CUDA C kernel at ``tile`` (None: the naive kernel).

    On this machine's GPU (``own``, with CuPy): what the driver reports for the loaded
    kernel, ``RawKernel.attributes``. Otherwise: ptxas' own count, from NVRTC compiling the
    source for ``sm_<cc>`` with ``-Xptxas=-v`` — the same compiler a GPU of that architecture
    would use, no GPU needed. None where NVRTC is missing; a kernel that does not compile
    raises :class:`course.gemm.cudac.source.CudaCompileError`.
    """
    spec = CUDA_NAIVE if tile is None else CUDA_TILED
    if own and cuda_gpu.available():
        attrs = cuda_gpu.attributes(cuda_gpu.raw_kernel(source, spec, tile))
        return CompiledCounts(attrs["num_regs"], attrs["shared_size_bytes"],
                              _("RawKernel.attributes on this GPU"))
    arch = f"sm_{cc[0]}{cc[1]}"
    try:
        res = compile_kernel(source, spec, tile, arch=arch).resources
        major, minor = nvrtc.version()
    except nvrtc.NvrtcUnavailableError:
        return None
    if res is None:
        return None
    return CompiledCounts(res.registers, res.shared_bytes,
                          _("ptxas for {arch} (NVRTC {major}.{minor})").format(
                              arch=arch, major=major, minor=minor))


def cuda_resources_line(source: str, tile: int | None, profile: str | None = None) -> str:
    """One line for a notebook: what the compiler gave the CUDA C kernel at ``tile``.

    The counts are :func:`cuda_counts` for :func:`resolve_target` (``profile``; None: this
    machine's GPU, else a T4): the loaded kernel's own attributes on this GPU, else ptxas'
    count for the target's architecture. Where no count can be had (no NVRTC and no GPU), the
    line says so in words instead of failing; a kernel that does not compile raises
    :class:`course.gemm.cudac.source.CudaCompileError` with NVRTC's log.
    """
    target = resolve_target(profile)
    counts = cuda_counts(source, tile, target.cc, target.own)
    label = _("naive kernel") if tile is None else f"TILE {tile:2d}"
    if counts is None:
        return _("{label}: no register or shared-memory count on this machine (it has no GPU "
                 "and no NVRTC to compile for {target}): {hint}").format(
                     label=label, target=target.label, hint=nvrtc.INSTALL_HINT)
    return _("{label}: {registers:3d} registers per thread, {shared:5d} bytes of shared memory "
             "per block ({threads} threads) — {source}").format(
                 label=label, registers=counts.registers, shared=counts.shared_bytes,
                 threads="16×16" if tile is None else tile * tile, source=counts.source)


_CUDA_ENTRY = re.compile(r"__global__\s+void\s+(gemm_naive|gemm_tiled)\s*\(")


def cuda_c_model(name: str, source: str) -> KernelModel:
    """A CUDA C kernel as a row of the sweep: ``GEMM_TILED_CUDA`` (block TILE×TILE, compiled
    per tile) or ``GEMM_NAIVE_CUDA`` (block 16×16, the same at every tile).

    Its registers and shared memory are the compiler's (:func:`cuda_counts`); on a GPU it is
    timed with CuPy's events, every launch verified
    (:func:`course.perf.cuda_experiment.time_gemm_cuda`).
    """

    found = _CUDA_ENTRY.search(source)
    if found is None:
        raise TypeError(f"{name}: this CUDA C string defines neither gemm_naive nor gemm_tiled "
                        "(extern \"C\" __global__ void gemm_tiled(int M, int N, int K, ...))")
    if found.group(1) == "gemm_naive":
        block = naive_launch(16, 16).block
        return KernelModel(
            name=name, gemm=lambda tile: _cuda_gemm(source, None),
            threads=lambda tile: block[0] * block[1], static_smem=lambda tile: 0,
            reads=lambda M, N, K, tile: naive_reads(M, N, K), tile_dependent=False,
            counts=lambda tile, target: cuda_counts(source, None, target.cc, target.own),
            timer=lambda tile, size, repeats: time_gemm_cuda(_cuda_gemm(source, None), size,
                                                             repeats))
    return KernelModel(
        name=name, gemm=lambda tile: _cuda_gemm(source, tile), threads=lambda tile: tile * tile,
        static_smem=lambda tile: 2 * tile * tile * BYTES,
        reads=lambda M, N, K, tile: tiled_reads(M, N, K, tile),
        counts=lambda tile, target: cuda_counts(source, tile, target.cc, target.own),
        timer=lambda tile, size, repeats: time_gemm_cuda(_cuda_gemm(source, tile), size,
                                                         repeats))


def as_kernel_model(name: str, obj: Any) -> KernelModel:
    """Turn what a student hands the sweep into a :class:`KernelModel`.

    * a ``@cuda.jit`` kernel: ``gemm_naive`` (block 16×16, no shared memory);
    * a plain function of ``tile``: ``make_gemm_tiled`` (block tile×tile, 2·tile² floats of
      shared memory);
    * a string of CUDA C: ``GEMM_TILED_CUDA`` or ``GEMM_NAIVE_CUDA`` (:func:`cuda_c_model`);
    * a :class:`KernelModel` (e.g. :func:`course.checks.bonus.sweep_model`): used as it is.
    """
    if isinstance(obj, KernelModel):
        return replace(obj, name=name)
    if isinstance(obj, str):
        return cuda_c_model(name, obj)
    if is_cuda_kernel(obj):
        return _naive_model(name, obj)
    if callable(obj):
        return _tiled_model(name, obj)
    raise TypeError(f"{name}: expected gemm_naive (a @cuda.jit kernel), make_gemm_tiled (a "
                    f"function of tile), a CUDA C string (GEMM_TILED_CUDA) or a KernelModel, "
                    f"got {type(obj).__name__}")


# ---------------------------------------------------------------------------------------------
# The target GPU.


@dataclass(frozen=True)
class Target:
    """The GPU the occupancy model is worked out for."""

    name: str  # "T4", "H200", … or the own GPU's name
    cc: tuple[int, int]
    spec: DeviceSpec | None  # datasheet numbers (SM count, peaks), when known
    own: bool  # True when this is the GPU the kernels run on

    @property
    def label(self) -> str:
        own = " (this machine's GPU)" if self.own else ""
        return f"{self.name}, sm_{self.cc[0]}{self.cc[1]}{own}"


def available_profiles() -> list[str]:
    """Profile names to offer: this machine's GPU first (when there is one), then PROFILES."""
    b = backend.detect()
    own = [b.device_name] if b.kind == "gpu" and b.device_name else []
    return own + [p for p in PROFILES if p not in own]


def resolve_target(profile: str | None = None) -> Target:
    """The target for ``profile``: None means this machine's GPU, else ``DEFAULT_PROFILE``.

    ``profile`` is a key of :data:`PROFILES` (case-insensitive), or the own GPU's name.
    """

    b = backend.detect()
    own_cc = tuple(b.compute_capability) if b.kind == "gpu" and b.compute_capability else None
    if profile is None or (b.device_name and profile == b.device_name):
        if own_cc is not None:
            if own_cc not in ARCH_LIMITS:
                raise ValueError(f"this GPU ({b.device_name}, sm_{own_cc[0]}{own_cc[1]}) is not "
                                 f"in the occupancy model; pick one of {', '.join(PROFILES)}")
            return Target(b.device_name or "this GPU", own_cc, lookup(b.device_name or ""),
                          True)
        profile = DEFAULT_PROFILE
    key = {k.lower(): k for k in PROFILES}.get(str(profile).strip().lower())
    if key is None:
        raise ValueError(f"unknown GPU profile {profile!r}; choose one of "
                         f"{', '.join(PROFILES)} (or None for this machine's GPU)")
    spec = DATASHEET[PROFILES[key]]
    own = b.kind == "gpu" and lookup(b.device_name or "") == spec
    return Target(key, spec.compute_capability, spec, own)
