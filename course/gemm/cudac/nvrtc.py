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
import io
import os
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import SymbolTableSection

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


#: ``.nv.info`` records are (format byte, attribute byte, 2-byte size, value); the register
#: count is attribute 0x2f with an 8-byte value: (symbol index, registers).
_EIATTR_REGCOUNT = 0x2F
_EIFMT_SVAL = 0x04


def cubin_resources(cubin: bytes) -> dict[str, KernelResources]:
    """Registers and static shared memory per kernel, read from the cubin itself.

    What ``cuobjdump --dump-resource-usage`` reads: the register count is a record of the
    ``.nv.info`` section, the static shared memory the size of ``.nv.shared.<kernel>``. It does
    not depend on ptxas printing its log, so it answers where a compile was served from NVRTC's
    cache. Spill stores are not recorded in a cubin (``spill_bytes`` is 0). An unreadable cubin
    gives an empty mapping.
    """
    try:
        elf = ELFFile(io.BytesIO(cubin))
        symtab = elf.get_section_by_name(".symtab")
        info = elf.get_section_by_name(".nv.info")
        if not isinstance(symtab, SymbolTableSection) or info is None:
            return {}
        names = {i: sym.name for i, sym in enumerate(symtab.iter_symbols())}
        registers: dict[str, int] = {}
        data, at = info.data(), 0
        while at + 4 <= len(data):
            fmt, attr = data[at], data[at + 1]
            size = struct.unpack_from("<H", data, at + 2)[0] if fmt == _EIFMT_SVAL else 0
            if fmt == _EIFMT_SVAL and attr == _EIATTR_REGCOUNT and size == 8:
                index, count = struct.unpack_from("<II", data, at + 4)
                registers[names.get(index, "")] = count
            at += 4 + size
        shared = {sec.name.removeprefix(".nv.shared."): sec["sh_size"]
                  for sec in elf.iter_sections() if sec.name.startswith(".nv.shared.")}
    except (ELFError, struct.error, ValueError):
        return {}
    return {name: KernelResources(count, int(shared.get(name, 0)))
            for name, count in registers.items() if name}


def no_cache_option(version: tuple[int, int]) -> list[str]:
    """``--no-cache`` where NVRTC has a cache (12.9 and newer), else nothing.

    A compile served from NVRTC's cache skips ptxas, so its log has no resource lines even with
    ``-Xptxas=-v`` (seen on the H200 with NVRTC 13.0: tile 16 came back with an empty log).
    Older NVRTC rejects the option, hence the version test.
    """
    return ["--no-cache"] if version >= (12, 9) else []


def _check(lib: ctypes.CDLL, code: int, what: str) -> None:
    if code:
        lib.nvrtcGetErrorString.restype = ctypes.c_char_p
        raise RuntimeError(f"NVRTC {what} failed: {lib.nvrtcGetErrorString(code).decode()}")


def compile_source(source: str, filename: str = "kernel.cu", *,
                   options: Sequence[str] = (), arch: str = DEFAULT_ARCH,
                   verbose_ptxas: bool = True) -> Compiled:
    """Compile CUDA C for ``arch`` (e.g. ``sm_75``) to PTX and cubin; never raises on bad code.

    A failed compile returns ``ok=False`` with NVRTC's log. ``verbose_ptxas`` asks ptxas for
    its resource lines, bypassing NVRTC's cache so that ptxas runs every time; the counts in
    :attr:`Compiled.resources` come from those lines, and, for any kernel they miss, from the
    cubin (:func:`cubin_resources`).
    """
    lib = library()
    prog = ctypes.c_void_p()
    _check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), filename.encode(),
                                       0, None, None), "create")
    try:
        opts = [f"--gpu-architecture={arch}", *options]
        if verbose_ptxas:
            opts += ["-Xptxas=-v", *no_cache_option(version())]
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
        resources = {**cubin_resources(cubin.raw), **parse_ptxas(log)}
        return Compiled(True, log, ptx.value.decode(errors="replace"), cubin.raw, resources)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
