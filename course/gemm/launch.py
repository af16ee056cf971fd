"""Launch shapes of the week-4 GEMM kernels, input validation, and one way to run them.

Students write kernels only; this module owns the launch configurations fixed by the course
contract, so every check, count and timing launches a kernel the same way:

* ``gemm_naive``: block (16, 16), grid (ceil(N/16), ceil(M/16)); x ↔ column, y ↔ row.
* ``make_gemm_tiled(tile)``: block (tile, tile), grid (ceil(N/tile), ceil(M/tile)).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import course  # noqa: F401  (chooses GPU or simulator before numba is imported)
from course.runtime import backend
from course.runtime.i18n import _

NAIVE_BLOCK = 16
TILES = (4, 8, 16, 32)


class GemmInputError(ValueError):
    """An array handed to a GEMM helper has the wrong dtype, shape, layout or kind."""


class NotAKernelError(TypeError):
    """Something that should be a ``@cuda.jit`` kernel is not one."""


@dataclass(frozen=True)
class Launch:
    """A grid and a block, both (x, y): x runs along columns of C, y along rows."""

    grid: tuple[int, int]
    block: tuple[int, int]

    @property
    def threads(self) -> int:
        return self.grid[0] * self.grid[1] * self.block[0] * self.block[1]


def _positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise GemmInputError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def naive_launch(M: int, N: int) -> Launch:
    """The contract's launch for ``gemm_naive``: 16×16 blocks covering the M×N output."""
    M, N = _positive("M", M), _positive("N", N)
    b = NAIVE_BLOCK
    return Launch(grid=(math.ceil(N / b), math.ceil(M / b)), block=(b, b))


def _check_tile(tile: int) -> None:
    """Tiles are whole numbers from TILES (8.0 equals 8 but is no tile size)."""
    if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)) or tile not in TILES:
        raise GemmInputError(f"tile must be one of {TILES}, got {tile!r}")


def tiled_launch(M: int, N: int, tile: int) -> Launch:
    """The contract's launch for a tiled kernel: one tile×tile block per output tile."""
    M, N = _positive("M", M), _positive("N", N)
    _check_tile(tile)
    return Launch(grid=(math.ceil(N / tile), math.ceil(M / tile)), block=(tile, tile))


def is_cuda_kernel(obj: Any) -> bool:
    """True for a ``@cuda.jit`` kernel (GPU dispatcher or simulator kernel), not a device fn."""
    cls = type(obj)
    if not cls.__module__.startswith("numba"):
        return False
    if cls.__name__ == "FakeCUDAKernel":
        return not getattr(obj, "_device", False)
    if cls.__name__ == "CUDADispatcher":
        return not obj.targetoptions.get("device", False)
    return False


def require_kernel(obj: Any, what: str) -> None:
    """Raise :class:`NotAKernelError` unless ``obj`` is a launchable ``@cuda.jit`` kernel."""
    if is_cuda_kernel(obj):
        return
    if type(obj).__module__.startswith("numba") and type(obj).__name__ in (
        "FakeCUDAKernel",
        "CUDADispatcher",
    ):
        raise NotAKernelError(_(
            "{what} is a device function (@cuda.jit(device=True)); it must be a kernel: "
            "decorate it with plain @cuda.jit").format(what=what))
    raise NotAKernelError(_(
        "{what} must be a kernel made with @cuda.jit, got {kind} ({value}). Write `@cuda.jit` "
        "on the line above `def`.").format(what=what, kind=type(obj).__name__,
                                           value=f"{obj!r:.60}"))


def _is_c_contiguous(x: Any) -> bool:
    if isinstance(x, np.ndarray):
        return bool(x.flags.c_contiguous)
    method = getattr(x, "is_c_contiguous", None)
    if callable(method):
        return bool(method())
    flags = getattr(x, "flags", None)  # CuPy arrays
    return bool(getattr(flags, "c_contiguous", False))


def check_array(x: Any, name: str) -> tuple[int, int]:
    """Validate one GEMM operand (host or device): 2-D, float32, C-contiguous (row-major)."""
    if not hasattr(x, "shape") or not hasattr(x, "dtype"):
        raise GemmInputError(f"{name} must be a NumPy or device array, got {type(x).__name__}")
    if len(x.shape) != 2:
        raise GemmInputError(f"{name} must be 2-D, got shape {tuple(x.shape)}")
    if np.dtype(x.dtype) != np.float32:
        raise GemmInputError(
            f"{name} must be float32, got {np.dtype(x.dtype)}: use {name}.astype(np.float32)"
        )
    if not _is_c_contiguous(x):
        raise GemmInputError(
            f"{name} must be C-contiguous (row-major); use np.ascontiguousarray({name}) "
            "(a transpose or a strided slice is not)"
        )
    rows, cols = (int(s) for s in x.shape)
    if rows < 1 or cols < 1:
        raise GemmInputError(f"{name} must not be empty, got shape {(rows, cols)}")
    return rows, cols


def check_operands(A: Any, B: Any, C: Any | None = None) -> tuple[int, int, int]:
    """Validate A (M×K), B (K×N) and optionally C (M×N); return (M, N, K)."""
    M, K = check_array(A, "A")
    K2, N = check_array(B, "B")
    if K != K2:
        raise GemmInputError(
            f"A is {M}×{K} but B is {K2}×{N}: A's columns must equal B's rows"
        )
    if C is not None:
        shape = check_array(C, "C")
        if shape != (M, N):
            raise GemmInputError(f"C must be {M}×{N} for A {M}×{K} and B {K}×{N}, got {shape}")
    return M, N, K


@dataclass(frozen=True)
class GemmKernel:
    """A student's kernel together with the contract's launch rule for it."""

    name: str
    kernel: Any
    launch_for: Callable[[int, int], Launch]
    tile: int | None = None
    #: edge of the block of C one thread block computes, and the step along K, where they are
    #: not ``tile`` (the register-tiled kernel): what a diagnosis of its C needs to know
    out_tile: int | None = None
    k_step: int | None = None

    def launch(self, A: Any, B: Any, C: Any) -> None:
        """Launch on device (or simulator) arrays and wait for the kernel to finish."""
        from numba import cuda

        M, N, _k = check_operands(A, B, C)
        cfg = self.launch_for(M, N)
        with quiet_numba():
            self.kernel[cfg.grid, cfg.block](A, B, C)
        cuda.synchronize()


def naive(kernel: Any) -> GemmKernel:
    """Wrap ``gemm_naive`` with its contract launch."""
    require_kernel(kernel, "gemm_naive")
    return GemmKernel("gemm_naive", kernel, naive_launch)


def tiled(factory: Callable[[int], Any], tile: int) -> GemmKernel:
    """Build ``make_gemm_tiled(tile)`` and wrap it with its contract launch."""
    if not callable(factory) or is_cuda_kernel(factory):
        raise NotAKernelError(_(
            "make_gemm_tiled must be a plain Python function that takes `tile` and returns a "
            "@cuda.jit kernel, got {kind}").format(kind=type(factory).__name__))
    _check_tile(tile)
    kernel = factory(tile)
    require_kernel(kernel, f"make_gemm_tiled({tile})")
    return GemmKernel(f"make_gemm_tiled({tile})", kernel, lambda M, N: tiled_launch(M, N, tile),
                      tile)


class quiet_numba(warnings.catch_warnings):
    """Silence Numba's performance warnings (small test grids), whichever module defines them.

    numba-cuda 0.30 has its own ``NumbaPerformanceWarning`` class; filtering only
    ``numba.core.errors``'s would do nothing there.
    """

    def __enter__(self):
        out = super().__enter__()
        for modname in ("numba.core.errors", "numba.cuda.core.errors"):
            try:
                mod = __import__(modname, fromlist=["NumbaPerformanceWarning"])
            except ImportError:
                continue
            cls = getattr(mod, "NumbaPerformanceWarning", None)
            if cls is not None:
                warnings.simplefilter("ignore", cls)
        return out


def compile_for(kernel: Any, args: tuple) -> bool:
    """Compile a Numba GPU kernel for the types of ``args`` without launching it; True if it
    did. Nothing happens on the simulator (its kernels have nothing to compile) or for a
    dispatcher that cannot be asked: those compile at their first launch, as usual. The speedup
    checks compile this way before they take the GPU alone, so that the compile's seconds of
    CPU are not seconds in which no other student may use the GPU."""
    typeof = getattr(kernel, "typeof_pyval", None)
    compile_ = getattr(kernel, "compile", None)
    if typeof is None or compile_ is None or backend.detect().kind != "gpu":
        return False
    with quiet_numba():
        compile_(tuple(typeof(a) for a in args))
    return True


def matmul(gk: GemmKernel, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Run a wrapped kernel on host arrays and return C on the host (for demos)."""
    from numba import cuda

    M, N, _k = check_operands(A, B)
    dA, dB = cuda.to_device(A), cuda.to_device(B)
    dC = cuda.device_array((M, N), dtype=np.float32)
    gk.launch(dA, dB, dC)
    return dC.copy_to_host()
