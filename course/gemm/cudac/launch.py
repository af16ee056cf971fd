"""Launch CUDA C GEMM kernels the way the course contract fixes, on a GPU or the CPU runner.

The contract (same shapes as the Numba track):

* ``gemm_naive``: block (16, 16), grid (ceil(N/16), ceil(M/16)); x ↔ column, y ↔ row.
* ``gemm_tiled`` compiled with ``#define TILE t``: block (t, t), grid (ceil(N/t), ceil(M/t)).
* arguments ``(int M, int N, int K, const float* A, const float* B, float* C)``: the sizes as
  32-bit integers (``np.int32``), the matrices as float32, row-major device arrays.

:func:`call` is the student's way to launch a kernel by hand: it checks the arguments the way
a GPU cannot (a Python ``int`` where the kernel reads a 32-bit ``int`` is the classic
mistake), then runs on the GPU through CuPy, or on the course's CPU runner without one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from course.gemm.cudac import cpu, gpu, nvrtc
from course.gemm.cudac.source import NAIVE, TILED, KernelSpec, compile_kernel
from course.gemm.launch import (
    TILES,
    GemmInputError,
    Launch,
    check_operands,
    naive_launch,
    tiled_launch,
)
from course.runtime.i18n import _

ARGUMENTS = ("M", "N", "K", "A", "B", "C")


def where() -> str:
    """``"gpu"`` (CuPy and a GPU), ``"cpu"`` (the CPU runner) — or raise saying what is missing."""
    if gpu.available():
        return "gpu"
    cpu.compiler()
    return "cpu"


@dataclass(frozen=True)
class CudaGemm:
    """A student's CUDA C kernel with the contract's launch rule for it."""

    spec: KernelSpec
    source: str
    tile: int | None = None

    @property
    def name(self) -> str:
        return self.spec.name if self.tile is None else f"{self.spec.name} (TILE={self.tile})"

    @property
    def block(self) -> int:
        return self.tile or 16

    def launch_for(self, M: int, N: int) -> Launch:
        return naive_launch(M, N) if self.tile is None else tiled_launch(M, N, self.tile)


def naive(source: Any) -> CudaGemm:
    """``GEMM_NAIVE_CUDA``, compiled once with NVRTC to check it, with its contract launch."""
    compile_kernel(source, NAIVE)
    return CudaGemm(NAIVE, source)


def tiled(source: Any, tile: int) -> CudaGemm:
    """``GEMM_TILED_CUDA`` compiled with ``#define TILE tile``, with its contract launch."""
    if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)) or tile not in TILES:
        raise GemmInputError(f"tile must be one of {TILES}, got {tile!r}")
    compile_kernel(source, TILED, int(tile))
    return CudaGemm(TILED, source, int(tile))


def _is_device_array(x: Any) -> bool:
    return type(x).__module__.startswith("cupy")


def check_arguments(args: tuple, on_gpu: bool) -> tuple[int, int, int]:
    """Validate ``(M, N, K, A, B, C)`` as a launch needs them; return (M, N, K)."""
    if not isinstance(args, tuple) or len(args) != 6:
        raise GemmInputError(_(
            "the kernel takes 6 arguments (M, N, K, A, B, C) as a tuple, got {args}").format(
                args=f"{args!r:.80}"))
    sizes = []
    for name, value in zip(ARGUMENTS[:3], args[:3], strict=True):
        if isinstance(value, bool) or not isinstance(value, np.int32):
            kind = _("a Python int") if isinstance(value, int) else type(value).__name__
            raise GemmInputError(_(
                "argument {name} is {kind}, but the kernel declares `int {name}`, a 32-bit "
                "integer: pass np.int32({name}). CuPy passes a Python int as a 64-bit value, so "
                "the kernel would read the wrong bytes for every argument after it.").format(
                    name=name, kind=kind))
        sizes.append(int(value))
    for name, value in zip(ARGUMENTS[3:], args[3:], strict=True):
        if on_gpu and not _is_device_array(value):
            raise GemmInputError(_("argument {name} must be a CuPy array on the GPU "
                                   "(cupy.asarray({name})), got {kind}").format(
                name=name, kind=type(value).__name__))
    M, N, K = check_operands(*args[3:])
    if tuple(sizes) != (M, N, K):
        raise GemmInputError(_("M, N, K = {sizes} do not match the arrays' shapes (A {M}×{K}, "
                               "B {K}×{N}, C {M}×{N})").format(sizes=tuple(sizes), M=M, N=N, K=K))
    return M, N, K


def call(source: str, grid: tuple[int, int], block: tuple[int, int], args: tuple,
         tile: int | None = None) -> Any:
    """Launch a kernel by hand, as ``kernel(grid, block, args)`` would on a GPU; return C.

    ``source`` is ``GEMM_NAIVE_CUDA`` or ``GEMM_TILED_CUDA`` (then give ``tile``). On the CPU
    runner A, B and C are NumPy arrays and C is filled in place, as on a GPU.
    """
    spec = TILED if tile is not None else NAIVE
    on_gpu = where() == "gpu"
    check_arguments(args, on_gpu)
    compile_kernel(source, spec, tile)
    if on_gpu:
        gpu.launch(gpu.raw_kernel(source, spec, tile), grid, block, args)
        return args[5]
    result = cpu.run(cpu.build(source, spec, tile), args[3], args[4], grid, block)
    if result.printed:
        print(result.printed, end="")
    args[5][...] = result.C
    return args[5]


def matmul(gk: CudaGemm, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """C = A·B with the contract's launch (for demos), on the GPU or the CPU runner."""
    M, N, _K = check_operands(A, B)
    cfg = gk.launch_for(M, N)
    if where() == "gpu":
        cp = gpu.cupy_module()
        dC = cp.zeros((M, N), cp.float32)
        args = (np.int32(M), np.int32(N), np.int32(A.shape[1]), cp.asarray(A), cp.asarray(B), dC)
        gpu.launch(gpu.raw_kernel(gk.source, gk.spec, gk.tile), cfg.grid, cfg.block, args)
        return dC.get()
    return cpu.run(cpu.build(gk.source, gk.spec, gk.tile), A, B, cfg.grid, cfg.block).C


def describe() -> str:
    """A few plain lines: where CUDA C kernels compile and run here, and what needs a GPU."""

    lines = []
    try:
        major, minor = nvrtc.version()
        lines.append(_("CUDA C compiles here with NVRTC {version}.").format(
            version=f"{major}.{minor}"))
    except nvrtc.NvrtcUnavailableError as exc:
        lines.append(_("CUDA C cannot be compiled here: {error}.").format(error=exc))
    if gpu.available():
        lines.append(_("Kernels run on the GPU through CuPy's RawKernel; timings are real."))
    elif cpu.available():
        lines.append(_("No GPU with CuPy: kernels run on the course's CPU runner (correct "
                       "results, every memory access checked, no timings)."))
    else:
        try:
            cpu.compiler()
        except cpu.CpuRunnerUnavailableError as exc:
            lines.append(_("Kernels cannot run here: {reason}.").format(reason=exc))
    return "\n".join(lines)


def show() -> None:
    """Print :func:`describe`."""
    print(describe())
