"""Occupancy: how many blocks of a kernel fit on one SM at once, and which resource stops more.

An SM holds several blocks at a time, as long as four budgets last: warp slots, registers,
shared memory and block slots. *Occupancy* is the fraction of the SM's warp slots in use.
Tiling trades these budgets: a bigger tile reuses more data from shared memory but takes
more shared memory and threads per block, so fewer blocks fit.

:func:`theoretical_occupancy` works this out with the same rules as NVIDIA's occupancy
calculator (the ``cuda_occupancy.h`` header that ships with the CUDA toolkit, which
``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` follows): allocation granularities,
registers split over the SM's four sub-partitions, and the 1 KiB of shared memory the driver
reserves per block on sm_80 and newer. It needs no GPU.

On a real GPU, :func:`kernel_resources` reads what the compiler gave a kernel (registers,
static shared memory, spills to local memory) and :func:`driver_occupancy` asks the driver,
so students (and ``scripts/gpu/check_occupancy.py``) can compare model and hardware. Numba
and CuPy are imported only inside those functions, so importing this module is cheap.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ARCH_LIMITS",
    "ArchLimits",
    "KernelResources",
    "Occupancy",
    "RESOURCES",
    "ResourcesUnavailableError",
    "UNLIMITED",
    "describe",
    "driver_occupancy",
    "kernel_resources",
    "theoretical_occupancy",
]

KIB = 1024
#: Block count of a resource the kernel does not use (no registers, no shared memory); the
#: CUDA calculator uses INT_MAX the same way.
UNLIMITED = 2**31 - 1
#: The resources that bound blocks per SM, in the order used to break ties (see ``limited_by``).
RESOURCES = ("warps", "registers", "shared_memory", "blocks")


@dataclass(frozen=True)
class ArchLimits:
    """Resource limits of one compute capability that decide occupancy."""

    name: str  # architecture and a GPU students may meet
    max_warps_per_sm: int  # resident warps (max threads per SM / 32)
    max_blocks_per_sm: int  # resident blocks
    smem_per_sm: int  # bytes, at the largest shared-memory carveout (the default's limit)
    smem_per_block_optin: int  # bytes a block may use after opting in (above 48 KiB)
    smem_reserved_per_block: int  # bytes the driver adds to every block (sm_80 and newer)
    smem_alloc_unit: int  # shared memory is allocated per block in multiples of this
    regs_per_sm: int = 64 * KIB  # 32-bit registers; a block may use all of them
    max_regs_per_thread: int = 255
    reg_alloc_unit: int = 256  # registers are allocated per warp in multiples of this
    reg_sub_partitions: int = 4  # register file split over the SM's 4 warp schedulers
    max_threads_per_block: int = 1024
    smem_per_block_default: int = 48 * KIB  # without opt-in; also the limit on static smem
    warp_size: int = 32


# Per-architecture limits. Sources: CUDA C++ Programming Guide, "Compute Capabilities",
# table "Technical Specifications per Compute Capability" (warps, blocks, registers and
# shared memory per SM and per block); the allocation units, the 4 register sub-partitions and
# the reserved 1 KiB per block (sm_80+) from the toolkit's cuda_occupancy.h (CUDA 12.6), which
# cudaOccupancyMaxActiveBlocksPerMultiprocessor follows. An H200 reports
# sharedMemPerMultiprocessor = 233472 (228 KiB) and reservedSharedMemPerBlock = 1024.
ARCH_LIMITS: dict[tuple[int, int], ArchLimits] = {
    (7, 5): ArchLimits("Turing (T4)", 32, 16, 64 * KIB, 64 * KIB, 0, 256),
    (8, 0): ArchLimits("Ampere (A100)", 64, 32, 164 * KIB, 163 * KIB, KIB, 128),
    (8, 6): ArchLimits("Ampere (RTX 30xx, A10)", 48, 16, 100 * KIB, 99 * KIB, KIB, 128),
    (8, 9): ArchLimits("Ada (L4, RTX 40xx)", 48, 24, 100 * KIB, 99 * KIB, KIB, 128),
    (9, 0): ArchLimits("Hopper (H100, H200)", 64, 32, 228 * KIB, 227 * KIB, KIB, 128),
}


@dataclass(frozen=True)
class Occupancy:
    """Result of :func:`theoretical_occupancy`: blocks and warps per SM, and what limits them.

    ``blocks_by_*`` give how many blocks each resource alone would allow; ``blocks_per_sm`` is
    the smallest. ``limited_by`` names one resource that gives it: on a tie, the first of
    warps, registers, shared_memory, blocks (as at 100% occupancy the warp slots are the
    honest answer); ``limiting_factors`` lists every resource that ties.
    """

    cc: tuple[int, int]
    threads_per_block: int
    regs_per_thread: int
    smem_per_block: int  # bytes requested (static + dynamic)
    blocks_per_sm: int
    warps_per_sm: int
    occupancy: float  # warps_per_sm / max_warps_per_sm, 0..1
    limited_by: str
    limiting_factors: tuple[str, ...]
    warps_per_block: int
    max_warps_per_sm: int
    blocks_by_warps: int
    blocks_by_registers: int
    blocks_by_shared_memory: int
    blocks_by_blocks: int
    regs_per_warp_alloc: int  # registers a warp really takes (rounded up to 256)
    regs_per_block_alloc: int
    smem_per_block_alloc: int  # bytes a block really takes (reserved 1 KiB, rounded up)
    smem_per_sm: int


def _arch(cc: Any) -> tuple[tuple[int, int], ArchLimits]:
    """Normalise ``cc`` to an ``(int, int)`` key of ARCH_LIMITS, or say what is supported."""
    try:
        key = tuple(int(x) for x in cc) if isinstance(cc, (tuple, list)) else None
    except (TypeError, ValueError):
        key = None
    if key not in ARCH_LIMITS:
        known = ", ".join(f"{k} sm_{k[0]}{k[1]} {lim.name}" for k, lim in ARCH_LIMITS.items())
        raise ValueError(f"unknown compute capability {cc!r}; supported: {known}")
    return key, ARCH_LIMITS[key]


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def theoretical_occupancy(
    cc: tuple[int, int], threads_per_block: int, regs_per_thread: int, smem_per_block: int
) -> Occupancy:
    """Blocks and warps of one kernel that fit on an SM of compute capability ``cc``.

    ``smem_per_block`` is static plus dynamic shared memory in bytes. Above 48 KiB a kernel
    must opt in (``cudaFuncSetAttribute(..., MaxDynamicSharedMemorySize, ...)``); the model
    assumes it did. The shared-memory carveout is the largest (the driver's default choice).

    Raises ``ValueError`` naming the resource for an unknown ``cc``, an impossible input, or
    a launch of which not even one block fits on an SM.
    """
    key, lim = _arch(cc)
    threads = operator.index(threads_per_block)
    regs = operator.index(regs_per_thread)
    smem = operator.index(smem_per_block)
    sm = f"sm_{key[0]}{key[1]}"
    if not 1 <= threads <= lim.max_threads_per_block:
        raise ValueError(f"threads_per_block must be 1..{lim.max_threads_per_block} "
                         f"(the threads-per-block limit), got {threads}")
    if not 0 <= regs <= lim.max_regs_per_thread:
        raise ValueError(f"registers per thread must be 0..{lim.max_regs_per_thread}, got {regs}")
    if smem < 0:
        raise ValueError(f"shared memory per block must be >= 0 bytes, got {smem}")
    if smem > lim.smem_per_block_optin:
        raise ValueError(f"shared memory per block of {smem} B exceeds the {sm} maximum of "
                         f"{lim.smem_per_block_optin} B ({lim.smem_per_block_optin // KIB} KiB, "
                         "with opt-in)")

    # Warps: a block takes whole warps.
    warps_per_block = math.ceil(threads / lim.warp_size)
    by_warps = lim.max_warps_per_sm // warps_per_block

    # Registers: allocated per warp in units of 256, from the 4 sub-partitions (quarters) of
    # the register file; a warp lives in one quarter, so count warps per quarter first. (This
    # also covers the per-block limit: on these GPUs a block may use all 64 Ki registers.)
    regs_per_warp = _round_up(regs * lim.warp_size, lim.reg_alloc_unit)
    regs_per_block = regs_per_warp * warps_per_block
    quarter = lim.regs_per_sm // lim.reg_sub_partitions
    if regs_per_warp:
        warps_per_quarter = quarter // regs_per_warp
        by_regs = warps_per_quarter * lim.reg_sub_partitions // warps_per_block
    else:
        warps_per_quarter = by_regs = UNLIMITED

    # Shared memory: request + reserved bytes, rounded up to the allocation unit.
    smem_alloc = _round_up(smem + lim.smem_reserved_per_block, lim.smem_alloc_unit)
    by_smem = lim.smem_per_sm // smem_alloc if smem_alloc else UNLIMITED

    counts = dict(zip(RESOURCES, (by_warps, by_regs, by_smem, lim.max_blocks_per_sm),
                      strict=True))
    blocks = min(counts.values())
    factors = tuple(r for r in RESOURCES if counts[r] == blocks)
    if blocks == 0:
        why = {
            "warps": f"{warps_per_block} warps per block exceed the {lim.max_warps_per_sm} "
                     "warp slots of an SM",
            "registers": f"at {regs} registers/thread a warp takes {regs_per_warp} registers, "
                         f"so a register-file quarter of {quarter} holds {warps_per_quarter} "
                         f"warps and the SM {warps_per_quarter * lim.reg_sub_partitions}, "
                         f"fewer than the {warps_per_block} warps of one block",
            "shared_memory": f"{smem_alloc} B of shared memory per block exceed the "
                             f"{lim.smem_per_sm} B of an SM",
        }[factors[0]]
        raise ValueError(f"launch impossible on {sm}: not even one block fits, limited by "
                         f"{factors[0]}: {why}")
    warps = blocks * warps_per_block
    return Occupancy(
        cc=key, threads_per_block=threads, regs_per_thread=regs, smem_per_block=smem,
        blocks_per_sm=blocks, warps_per_sm=warps, occupancy=warps / lim.max_warps_per_sm,
        limited_by=factors[0], limiting_factors=factors, warps_per_block=warps_per_block,
        max_warps_per_sm=lim.max_warps_per_sm, blocks_by_warps=by_warps,
        blocks_by_registers=by_regs, blocks_by_shared_memory=by_smem,
        blocks_by_blocks=lim.max_blocks_per_sm, regs_per_warp_alloc=regs_per_warp,
        regs_per_block_alloc=regs_per_block, smem_per_block_alloc=smem_alloc,
        smem_per_sm=lim.smem_per_sm,
    )


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def describe(occ: Occupancy) -> str:
    """One line in plain words: what fits on an SM and which resource stops more blocks."""
    lim = ARCH_LIMITS[occ.cc]
    quarter = lim.regs_per_sm // lim.reg_sub_partitions
    reserved = lim.smem_reserved_per_block
    reason = {
        "warps": f"the SM's {occ.max_warps_per_sm} warp slots",
        "registers": f"registers (a warp takes {occ.regs_per_warp_alloc}; each of the SM's "
                     f"{lim.reg_sub_partitions} register-file quarters of {quarter} holds "
                     f"{_n(quarter // occ.regs_per_warp_alloc, 'warp')})",
        "shared_memory": f"shared memory (a block takes {occ.smem_per_block_alloc} B"
                         + (f" incl. {reserved} B reserved" if reserved else "")
                         + f" of the SM's {occ.smem_per_sm} B)",
        "blocks": f"the cap of {lim.max_blocks_per_sm} resident blocks per SM",
    }[occ.limited_by]
    return (f"sm_{occ.cc[0]}{occ.cc[1]}: blocks of {occ.threads_per_block} threads "
            f"({_n(occ.warps_per_block, 'warp')}), {occ.regs_per_thread} registers/thread, "
            f"{occ.smem_per_block} B shared memory -> {_n(occ.blocks_per_sm, 'block')} per SM "
            f"= {occ.warps_per_sm} of {occ.max_warps_per_sm} warps, occupancy "
            f"{occ.occupancy:.0%}, limited by {reason}.")


# ---------------------------------------------------------------------------------------------
# What the compiler and the driver say (real GPU only).


class ResourcesUnavailableError(RuntimeError):
    """Resource numbers need a compiled kernel on a real GPU (not the simulator)."""


@dataclass(frozen=True)
class KernelResources:
    """What the compiler gave one compiled kernel, as the driver reports it."""

    regs_per_thread: int
    static_smem_bytes: int
    local_bytes_per_thread: int  # > 0 means spills or local arrays (slow local memory)
    max_threads_per_block: int  # the most threads a block may have with these registers


_NO_GPU = ("resource numbers need a real CUDA GPU: the Numba CUDA simulator has no compiler, "
           "so it knows no registers, shared-memory sizes or occupancy")


def _is_cupy_kernel(kernel: Any) -> bool:
    # Look on the class, so that no property runs (a RawKernel compiles when asked).
    return hasattr(type(kernel), "num_regs") and hasattr(type(kernel), "kernel")


def _is_simulator_kernel(kernel: Any) -> bool:
    return ".simulator" in type(kernel).__module__


def _cupy_call(fn: Any) -> Any:
    """Run a CuPy query, turning "no GPU / no driver" into ResourcesUnavailableError."""
    import cupy  # optional, heavy: imported when used (import course stays light)

    errors = (cupy.cuda.runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError)
    try:
        return fn()
    except errors as exc:
        raise ResourcesUnavailableError(f"{_NO_GPU} (CuPy: {exc})") from exc


def _looks_like_signature(arg: Any) -> bool:
    if isinstance(arg, str) or (hasattr(arg, "args") and hasattr(arg, "return_type")):
        return True
    return isinstance(arg, tuple) and all(type(t).__module__.startswith("numba") for t in arg)


def _numba_overload(kernel: Any, args: tuple[Any, ...]) -> Any:
    """The compiled kernel (one overload) of a Numba dispatcher, compiling it if needed.

    ``args`` are example arguments or one signature; with none, the dispatcher must have
    exactly one compiled signature (launch it once first). An overload passed in directly
    (``dispatcher.overloads[argtypes]``) is returned as is.
    """
    if _is_simulator_kernel(kernel):
        raise ResourcesUnavailableError(_NO_GPU)
    overloads = getattr(kernel, "overloads", None)
    if overloads is None:
        if hasattr(kernel, "regs_per_thread") or hasattr(kernel, "_codelibrary"):
            return kernel  # already one compiled overload
        raise TypeError(f"expected a Numba @cuda.jit kernel or a CuPy RawKernel, got "
                        f"{type(kernel).__name__}")
    from numba import cuda

    if not cuda.is_available():
        raise ResourcesUnavailableError(f"{_NO_GPU} (numba.cuda.is_available() is False)")
    if args:
        if len(args) == 1 and _looks_like_signature(args[0]):
            sig = args[0]
        else:
            sig = tuple(kernel.typeof_pyval(a) for a in args)
        return kernel.compile(sig)
    if len(overloads) == 1:
        return next(iter(overloads.values()))
    if not overloads:
        raise ValueError("the kernel is not compiled yet: launch it once, or pass example "
                         "arguments or a signature")
    raise ValueError(f"the kernel has {len(overloads)} compiled signatures; pass example "
                     "arguments or a signature to choose one")


def _first_attr(obj: Any, *names: str) -> int:
    """The first of ``names`` that ``obj`` has (names moved between numba-cuda versions)."""
    for name in names:
        value = getattr(obj, name, None)
        if value is not None:
            return int(value() if callable(value) else value)
    raise AttributeError(f"{type(obj).__name__} has none of {names}")


def kernel_resources(kernel: Any, *example_args_or_signature: Any) -> KernelResources:
    """Registers, static shared memory and local memory of a compiled kernel (real GPU only).

    ``kernel`` is a Numba ``@cuda.jit`` dispatcher (give example arguments or a signature such
    as ``"void(float32[:, ::1], float32[:, ::1], float32[:, ::1])"``, or nothing once it has
    been launched with one signature) or a CuPy ``RawKernel``. On the simulator or without a
    GPU this raises :class:`ResourcesUnavailableError`.
    """
    if _is_simulator_kernel(kernel):
        raise ResourcesUnavailableError(_NO_GPU)
    if _is_cupy_kernel(kernel):
        return _cupy_call(lambda: KernelResources(
            int(kernel.num_regs), int(kernel.shared_size_bytes), int(kernel.local_size_bytes),
            int(kernel.max_threads_per_block)))
    k = _numba_overload(kernel, example_args_or_signature)
    try:
        return KernelResources(
            _first_attr(k, "regs_per_thread"), _first_attr(k, "shared_mem_per_block"),
            _first_attr(k, "local_mem_per_thread"), _first_attr(k, "max_threads_per_block"))
    except AttributeError:  # older layouts: the driver function's attribute tuple
        attrs = k._codelibrary.get_cufunc().attrs
        return KernelResources(int(attrs.regs), int(attrs.shared), int(attrs.local),
                               int(attrs.maxthreads))


def driver_occupancy(kernel: Any, threads_per_block: int, dynamic_smem: int = 0) -> int:
    """Blocks per SM by the driver's ``cuOccupancyMaxActiveBlocksPerMultiprocessor``.

    For a CuPy ``RawKernel``; or a Numba dispatcher with exactly one compiled signature (or one
    overload, ``dispatcher.overloads[argtypes]``), through numba-cuda's own wrapper of that
    driver call. Real GPU only: otherwise raises :class:`ResourcesUnavailableError`.
    """
    threads, dyn = operator.index(threads_per_block), operator.index(dynamic_smem)
    if _is_simulator_kernel(kernel):
        raise ResourcesUnavailableError(_NO_GPU)
    if _is_cupy_kernel(kernel):
        import cupy  # optional, heavy: imported when used (import course stays light)

        return _cupy_call(lambda: int(cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, threads, dyn)))
    k = _numba_overload(kernel, ())
    from numba import cuda

    try:  # the context method numba-cuda itself uses (0.22 to 0.30 at least)
        cufunc = k._codelibrary.get_cufunc()
        return int(cuda.current_context().get_active_blocks_per_multiprocessor(
            cufunc, threads, dyn))
    except AttributeError:  # documented route: blocks in a full cooperative grid / SMs
        sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
        return int(k.max_cooperative_grid_blocks(threads, dyn)) // sms
