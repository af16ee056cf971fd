"""Compile CUDA C with NVRTC, NVIDIA's runtime compiler library — no GPU needed.

NVRTC turns CUDA C into PTX and, through its built-in ptxas, into machine code (cubin) for a
chosen GPU architecture. It is a plain shared library: it needs no driver and no GPU, so a
laptop or CI can tell a student whether their kernel compiles, show the compiler's own log,
and report the registers and shared memory ptxas allots (``-Xptxas -v``).

Where the library comes from, in order: ``cuda-pathfinder`` (NVIDIA's locator; it finds the
``nvidia-cuda-nvrtc`` / ``nvidia-cuda-nvrtc-cu12`` wheels, a conda or a system CUDA), then the
usual system places (``CUDA_HOME``, ``CUDA_PATH``, ``/usr/local/cuda``). The C API used here
(create, compile, log, PTX, cubin) has been stable since CUDA 11.1, so any NVRTC 12 or 13
works; it is called through :mod:`ctypes` to avoid a binding package tied to one CUDA version.
"""

from __future__ import annotations

import ctypes
import functools
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: the oldest architecture CUDA 13 compiles for (T4, Colab's free GPU); every course kernel
#: is checked against it unless a caller asks for another.
DEFAULT_ARCH = "sm_75"
INSTALL_HINT = ("pip install nvidia-cuda-nvrtc cuda-pathfinder (CUDA 13; ~60 MB download) or "
                "nvidia-cuda-nvrtc-cu12 (CUDA 12); on Colab NVRTC is already there")


class NvrtcUnavailableError(RuntimeError):
    """No NVRTC library could be found on this machine."""


def _candidates() -> list[str]:
    names = ["libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "nvrtc64_130_0.dll",
             "nvrtc64_120_0.dll"]
    folders = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    paths = [str(Path(f, sub, n)) for f in folders if f for sub in ("lib64", "lib", "bin")
             for n in names]
    return paths + names


@functools.lru_cache(maxsize=1)
def library() -> ctypes.CDLL:
    """The NVRTC library (cached); :class:`NvrtcUnavailableError` with an install hint if none."""
    try:
        from cuda.pathfinder import load_nvidia_dynamic_lib

        return ctypes.CDLL(load_nvidia_dynamic_lib("nvrtc").abs_path)
    except Exception:  # noqa: BLE001 - not installed, or it found nothing: try the usual places
        pass
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    loaded = _loaded_by_cupy()
    if loaded is not None:
        return ctypes.CDLL(loaded)
    raise NvrtcUnavailableError(f"NVRTC (NVIDIA's CUDA C compiler library) was not found: "
                                f"{INSTALL_HINT}")


def _loaded_by_cupy() -> str | None:
    """Where a GPU machine's CuPy found NVRTC: ask CuPy to load it, then read the path from
    this process's memory map (Linux)."""
    try:
        import cupy.cuda.nvrtc  # noqa: F401  (loads the library CuPy compiles with)

        maps = Path("/proc/self/maps").read_text()
    except Exception:  # noqa: BLE001 - no CuPy, no /proc: nothing to find here
        return None
    found = re.search(r"(/\S*libnvrtc\.so[.\d]*)\s*$", maps, re.M)
    return found.group(1) if found else None


def available() -> bool:
    """True where CUDA C can be compiled."""
    try:
        library()
    except NvrtcUnavailableError:
        return False
    return True


def version() -> tuple[int, int]:
    """NVRTC's (major, minor) version, e.g. (13, 5)."""
    major, minor = ctypes.c_int(), ctypes.c_int()
    library().nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return major.value, minor.value


@dataclass(frozen=True)
class KernelResources:
    """What ptxas allotted one kernel: registers per thread, static shared memory per block."""

    registers: int
    shared_bytes: int
    spill_bytes: int = 0


@dataclass(frozen=True)
class Compiled:
    """The outcome of one NVRTC compile."""

    ok: bool
    log: str
    ptx: str = ""
    cubin: bytes = b""
    resources: dict[str, KernelResources] = field(default_factory=dict)

    @property
    def entries(self) -> list[str]:
        """Names of the kernels (``.entry``) in the PTX, as the driver will look them up."""
        return re.findall(r"\.entry\s+([A-Za-z_$][\w$]*)\s*\(", self.ptx)


_PTXAS_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_PTXAS_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")
_PTXAS_SPILL = re.compile(r"(\d+) bytes spill stores")


def parse_ptxas(log: str) -> dict[str, KernelResources]:
    """Registers and shared memory per kernel from ptxas' verbose lines in an NVRTC log."""
    out: dict[str, KernelResources] = {}
    name, spill = None, 0
    for line in log.splitlines():
        if m := _PTXAS_ENTRY.search(line):
            name, spill = m.group(1), 0
        elif (m := _PTXAS_SPILL.search(line)) and name:
            spill = int(m.group(1))
        elif (m := _PTXAS_USED.search(line)) and name:
            out[name] = KernelResources(int(m.group(1)), int(m.group(2) or 0), spill)
    return out


def _check(lib: ctypes.CDLL, code: int, what: str) -> None:
    if code:
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        raise RuntimeError(f"NVRTC {what} failed: {lib.nvrtcGetErrorString(code).decode()}")


def compile_source(source: str, filename: str = "kernel.cu", *,
                   options: Sequence[str] = (), arch: str = DEFAULT_ARCH,
                   verbose_ptxas: bool = True) -> Compiled:
    """Compile CUDA C for ``arch`` (e.g. ``sm_75``) to PTX and cubin; never raises on bad code.

    A failed compile returns ``ok=False`` with NVRTC's log. ``verbose_ptxas`` asks ptxas for
    its resource lines (parsed into :attr:`Compiled.resources`).
    """
    lib = library()
    prog = ctypes.c_void_p()
    _check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), filename.encode(),
                                       0, None, None), "create")
    try:
        opts = [f"--gpu-architecture={arch}", *options]
        if verbose_ptxas:
            opts.append("-Xptxas=-v")
        argv = (ctypes.c_char_p * len(opts))(*[o.encode() for o in opts])
        status = lib.nvrtcCompileProgram(prog, len(opts), argv)
        size = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetProgramLog(prog, buf)
        log = buf.value.decode(errors="replace")
        if status != 0:
            return Compiled(False, log)
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        ptx = ctypes.create_string_buffer(size.value)
        _check(lib, lib.nvrtcGetPTX(prog, ptx), "PTX")
        lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
        cubin = ctypes.create_string_buffer(size.value)
        _check(lib, lib.nvrtcGetCUBIN(prog, cubin), "cubin")
        return Compiled(True, log, ptx.value.decode(errors="replace"), cubin.raw,
                        parse_ptxas(log))
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
