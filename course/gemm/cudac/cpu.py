"""Run a student's CUDA C GEMM kernel on the CPU, watched: the course's CPU runner.

No well-kept CUDA-on-CPU layer can be installed from the package registries a course machine
reaches (HIP-CPU is header-only and unpackaged, chipStar needs an LLVM build, pocl runs
OpenCL C, not CUDA C), and none of them counts memory reads or finds shared-memory races. So
the course builds its own small runner (``runtime.cpp`` and ``prelude.h`` beside this file;
docs/cuda-c-track.md has the reasoning and the measurements):

* The kernel is compiled as C++ by g++ with ``prelude.h`` (CUDA's keywords and built-ins
  mapped to C++) and ``-fsanitize=thread``, which makes the compiler call a hook before every
  memory access. ``runtime.cpp`` implements those hooks itself (no ThreadSanitizer library is
  linked): it counts reads of A and B, catches accesses to the guard regions around A, B, C,
  and tracks who wrote and read each shared-memory element in which barrier interval.
* The threads of a block are fibers that run in a fixed order until each reaches
  ``__syncthreads()``; blocks run one after another. Same input, same verdict, every run.

Before g++ sees it, the source has compiled with NVRTC (:mod:`course.gemm.cudac.source`), so it is
CUDA C a GPU would accept. The g++ object may only call the runtime, the hooks and a few math
and memory functions (checked on its symbol table), inline assembly is refused, and no header
can be included (``-nostdinc``); the runner is a separate process with a time limit, and while
grading it runs inside the grading sandbox.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from course.gemm.access import explain_access
from course.gemm.cudac.source import KernelSpec, full_source
from course.gemm.operands import Access
from course.runtime.i18n import N_, _

HERE = Path(__file__).resolve().parent
RUN_TIMEOUT_S = 120.0
BUILD_TIMEOUT_S = 120.0
MAX_PRINTED = 2000
#: what the kernel's object file may reference besides the runtime (__course_*) and the hooks
ALLOWED_SYMBOLS = frozenset({
    "_GLOBAL_OFFSET_TABLE_", "memcpy", "memset", "memmove", "printf", "__stack_chk_fail",
    "sqrtf", "sqrt", "expf", "logf", "floorf", "ceilf", "fmaf", "fma", "fminf", "fmaxf",
})


class CpuRunnerUnavailableError(RuntimeError):
    """This machine has no C++ compiler for the CPU runner."""


class CpuBuildError(ValueError):
    """The kernel compiles for a GPU but uses something the CPU runner cannot run."""


@dataclass
class CpuRun:
    """What one run on the CPU runner produced and saw."""

    C: np.ndarray
    reads_a: int
    reads_b: int
    wrote_outside: bool
    problems: list[str] = field(default_factory=list)
    races: list[str] = field(default_factory=list)
    uninitialised: list[str] = field(default_factory=list)
    printed: str = ""


def compiler() -> str:
    """The C++ compiler (``$CXX`` or g++); raise with an install hint where there is none."""
    name = os.environ.get("CXX") or "g++"
    path = shutil.which(name)
    if path is None:
        raise CpuRunnerUnavailableError(
            f"the CPU runner for CUDA C needs a C++ compiler and `{name}` was not found: on "
            "Debian/Ubuntu `apt-get install g++`, on macOS `xcode-select --install` (then set "
            "CXX=g++-14 from Homebrew: Apple's clang lacks the hooks), or run on a GPU")
    return path


def available() -> bool:
    try:
        compiler()
    except CpuRunnerUnavailableError:
        return False
    return True


_WORK: Path | None = None


def _workdir() -> Path:
    """One scratch folder per process: builds are cached there, never shared between runs."""
    global _WORK
    if _WORK is None:
        _WORK = Path(tempfile.mkdtemp(prefix="course-cudac-"))
        atexit.register(shutil.rmtree, _WORK, True)
    return _WORK


def _run(argv: list[str], what: str,
         timeout: float = BUILD_TIMEOUT_S) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise CpuBuildError(f"{what} failed: {(proc.stderr or proc.stdout).strip()[:1500]}")
    return proc


def _runtime_object() -> Path:
    obj = _workdir() / "runtime.o"
    if not obj.exists():
        _run([compiler(), "-std=c++17", "-O1", "-c", str(HERE / "runtime.cpp"), "-o", str(obj)],
             "building the CPU runner")
    return obj


def _first_errors(stderr: str, spec: KernelSpec) -> str:
    lines = [ln for ln in stderr.splitlines() if "error" in ln]
    text = "\n".join(lines[:4]) or stderr.strip()[:800]
    return text.replace(str(_workdir()) + "/", "").replace(f"{spec.variable}:", "line ")


@dataclass(frozen=True)
class Runner:
    """A built runner executable for one kernel source (and tile)."""

    path: Path
    spec: KernelSpec
    #: the lines of the student's source that call __syncthreads() (which barrier a race
    #: went without is told from where they sit between a load and a read)
    barrier_lines: tuple[int, ...] = ()


def build(source: str, spec: KernelSpec, tile: int | None = None) -> Runner:
    """Compile the kernel with the prelude and hooks, link it with the runtime (cached)."""
    cxx = compiler()
    text = full_source(source, spec, tile)
    key = hashlib.sha256(f"{spec.name}|{tile}|{text}".encode()).hexdigest()[:20]
    folder = _workdir() / key
    exe = folder / "runner"
    barriers = tuple(n for n, line in enumerate(str(source).splitlines(), 1)
                     if "__syncthreads" in line.split("//")[0])
    if exe.exists():
        return Runner(exe, spec, barriers)
    folder.mkdir(exist_ok=True)
    src, obj = folder / "kernel.cu", folder / "kernel.o"
    src.write_text(text)
    proc = subprocess.run(
        [cxx, "-x", "c++", "-std=c++17", "-O0", "-g", "-w", "-nostdinc", "-include",
         str(HERE / "prelude.h"), "-fsanitize=thread", "--param",
         "tsan-instrument-func-entry-exit=0", "-fno-exceptions", "-c", str(src), "-o", str(obj)],
        capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    if proc.returncode != 0:
        hint = (" (inline assembly runs on a GPU only)" if "inline_assembly" in proc.stderr
                else "")
        raise CpuBuildError(
            f"{spec.variable} compiles for a GPU, but the course's CPU runner cannot run it"
            f"{hint}; it supports the CUDA C of this course (indices, __shared__ arrays, "
            f"__syncthreads(), float arithmetic). The C++ compiler said:\n"
            f"{_first_errors(proc.stderr, spec)}")
    undefined = _run(["nm", "-u", str(obj)], "listing the kernel's symbols").stdout.split()
    foreign = sorted({s for s in undefined if s not in ("U", "w") and not s.startswith(
        ("__tsan_", "__course_")) and s not in ALLOWED_SYMBOLS})
    if foreign:
        raise CpuBuildError(f"{spec.variable} calls {', '.join(foreign[:5])}, which a kernel "
                            "checked by the course may not call")
    glue = folder / "glue.cpp"
    signature = "int, int, int, const float*, const float*, float*"
    glue.write_text(f'extern "C" void {spec.name}({signature});\n'
                    f'extern "C" {{ void (*__course_kernel)({signature}) = {spec.name}; }}\n')
    _run([cxx, "-no-pie", "-O0", str(_runtime_object()), str(glue), str(obj), "-lm", "-o",
          str(exe)], "linking the CPU runner")
    return Runner(exe, spec, barriers)


# ---------------------------------------------------------------------------------------------
# Running, and turning what the runtime saw into sentences.

_BARRIER_HINT = N_("a tiled kernel needs one __syncthreads() after loading the tiles (so "
                   "nobody reads a tile element before it is stored) and one after the multiply "
                   "loop (so nobody overwrites a tile element another thread is still using)")
_MISSING_BARRIER = {
    "after_load": N_("the barrier after loading the tiles is missing: call __syncthreads() "
                     "between the loads and the multiply loop, so nobody reads a tile element "
                     "before it is stored"),
    "after_multiply": N_("the barrier after the multiply loop is missing: call __syncthreads() "
                         "after it, so nobody overwrites a tile element another thread is still "
                         "using"),
}


def _lines(exe: Path, pcs: list[int]) -> dict[int, str]:
    """Source line of each program counter, as ``line N`` (via addr2line)."""
    pcs = sorted({p for p in pcs if p})
    if not pcs or shutil.which("addr2line") is None:
        return {}
    proc = subprocess.run(["addr2line", "-e", str(exe), *[hex(p - 1) for p in pcs]],
                          capture_output=True, text=True, timeout=30)
    out = {}
    for pc, text in zip(pcs, proc.stdout.splitlines(), strict=False):
        m = re.search(r":(\d+)", text)
        if m and not text.startswith("??"):
            out[pc] = _("line {number}").format(number=m.group(1))
    return out


def _shared_names(exe: Path) -> list[tuple[int, int, str]]:
    """(offset in the shared section, size, name) of every __shared__ array."""
    proc = subprocess.run(["nm", "-C", "-S", "--defined-only", str(exe)], capture_output=True,
                          text=True, timeout=30)
    start, arrays = None, []
    for line in proc.stdout.splitlines():
        parts = line.split()
        if parts and parts[-1] == "__start_cudac_shared":
            start = int(parts[0], 16)
        elif len(parts) >= 4 and parts[2] in "bBdD":
            arrays.append((int(parts[0], 16), int(parts[1], 16), parts[-1].split("::")[-1]))
    if start is None:
        return []
    return [(addr - start, size, name) for addr, size, name in arrays if addr >= start]


def _describe_shared(offset: int, names: list[tuple[int, int, str]]) -> str:
    for start, size, name in names:
        if start <= offset < start + size:
            return _("{name} (element {index})").format(name=name, index=(offset - start) // 4)
    return _("shared memory (byte {offset})").format(offset=offset)


def _thread(t: int, block_x: int) -> str:
    return f"({t % block_x}, {t // block_x})"


def _line_number(text: str) -> int | None:
    m = re.search(r"(\d+)", text)
    return int(m.group(1)) if m else None


def _barrier_hint(load_line: int | None, read_line: int | None,
                  barriers: tuple[int, ...]) -> str:
    """Which barrier a race went without: the one between the tile loads and the multiply
    loop (is there a __syncthreads() between the two lines?), or the one after the loop."""
    if load_line is None or read_line is None or load_line >= read_line or not barriers:
        return _(_BARRIER_HINT)
    if any(load_line < b < read_line for b in barriers):
        return _(_MISSING_BARRIER["after_multiply"])
    return _(_MISSING_BARRIER["after_load"])


def _format(err: dict, runner: Runner, block_dim: tuple[int, int],
            shape: tuple[int, int, int], lines: dict[int, str],
            names: list[tuple[int, int, str]]) -> tuple[str, str]:
    """(category, sentence) for one event the runtime reported."""
    M, N, K = shape
    block_x = block_dim[0]
    kind = err["kind"]
    thread, block = _thread(err["thread"], block_x), f"({err['block'][0]}, {err['block'][1]})"
    who = _("thread {thread} of block {block}").format(thread=thread, block=block)
    at = lines.get(err["pc"], "")
    at = _(" at {line}").format(line=at) if at else ""
    if kind in ("oob_read", "oob_write"):
        array, i = err["array"], err["index"]
        size = {"A": M * K, "B": K * N, "C": M * N}[array]
        place = (_("{count} element(s) before the start of {array}").format(count=-i, array=array)
                 if i < 0 else _("{array}[{index}], past its end ({array} has {size} elements)"
                                 ).format(array=array, index=i, size=size))
        if err["thread"] < 0:
            return "problem", _("something wrote just outside C for M={M}, N={N}, K={K}").format(
                M=M, N=N, K=K)
        sentence = (_("index out of range for M={M}, N={N}, K={K}: {who} read {place}{at}. "
                      "{hint}") if kind == "oob_read" else
                    _("index out of range for M={M}, N={N}, K={K}: {who} wrote {place}{at}. "
                      "{hint}"))
        t = err["thread"]
        access = Access(array, i, kind == "oob_write", (t % block_x, t // block_x),
                        (err["block"][0], err["block"][1]))
        hint = explain_access(access, shape, block_dim, block_dim[0],
                              runner.spec.name == "gemm_naive", cuda_c=True)
        return "problem", sentence.format(M=M, N=N, K=K, who=who, place=place, at=at,
                                          hint=hint[:1].upper() + hint[1:])
    if kind == "write_input":
        return "problem", _("{who} wrote into {array}{at}, an input: only C may be written"
                            ).format(who=who, array=err["array"], at=at)
    if kind.startswith("race"):
        where = _describe_shared(err["index"], names)
        other = _("thread {thread}").format(thread=_thread(err["other"], block_x))
        other_at = lines.get(err["pc2"], "")
        other_at = f" ({other_at})" if other_at else ""
        here, there = _line_number(at), _line_number(other_at)
        if kind == "race_read_after_write":
            what = _("{who} read {where}{at}, which {other} wrote{other_at}")
            hint = _barrier_hint(there, here, runner.barrier_lines)
        elif kind == "race_write_after_read":
            what = _("{who} wrote {where}{at}, which {other} read{other_at}")
            hint = _barrier_hint(here, there, runner.barrier_lines)
        else:
            what = _("{who} and {other} both wrote {where}{at}")
            hint = _(_BARRIER_HINT)
        what = what.format(who=who, where=where, at=at, other=other, other_at=other_at)
        return "race", _("{what} with no __syncthreads() in between: {hint}").format(
            what=what, hint=hint)
    if kind == "uninitialised_shared":
        where = _describe_shared(err["index"], names)
        return "uninitialised", _("{who} read {where}{at} before any thread of its block wrote "
                                  "it: load (or zero-pad) every tile element before "
                                  "__syncthreads(), then read").format(who=who, where=where,
                                                                       at=at)
    if kind == "barrier_divergence":
        return "problem", _("thread {thread} of block {block} finished while thread {other} "
                            "waits at the __syncthreads() on line {line}: every thread of a "
                            "block must reach every barrier (do not `return` early in a tiled "
                            "kernel: guard the loads and the store instead). On a GPU this "
                            "hangs or misbehaves.").format(
            thread=thread, block=block, other=_thread(err["other"], block_x), line=err["line"])
    if kind == "barrier_mismatch":
        return "problem", _("threads of one block wait at different __syncthreads() calls (line "
                            "{line} and line {line2}): a barrier inside an `if` that not every "
                            "thread takes").format(line=err["line"], line2=err["line2"])
    return "problem", _("the kernel crashed ({signal}) in {who}: an index far outside the "
                        "arrays, or a runaway pointer").format(signal=err["array"], who=who)


def run(runner: Runner, A: np.ndarray, B: np.ndarray, grid: tuple[int, int],
        block: tuple[int, int], timeout_s: float = RUN_TIMEOUT_S,
        c_init: np.ndarray | None = None) -> CpuRun:
    """Launch the built kernel on A, B (float32, C-contiguous) and return C and the report.

    C starts as the marked NaN, or as ``c_init`` (the runtime reads it after A and B)."""
    M, K = A.shape
    N = B.shape[1]
    with tempfile.TemporaryDirectory(dir=_workdir()) as tmp:
        inp, out, rep = Path(tmp, "in.bin"), Path(tmp, "out.bin"), Path(tmp, "report.json")
        inp.write_bytes(np.ascontiguousarray(A, np.float32).tobytes()
                        + np.ascontiguousarray(B, np.float32).tobytes()
                        + (b"" if c_init is None else
                           np.ascontiguousarray(c_init, np.float32).tobytes()))
        argv = [str(runner.path), *map(str, (M, N, K, grid[0], grid[1], block[0], block[1])),
                str(inp), str(out), str(rep)]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise TimeoutError(_(
                "{name} did not finish within {seconds} s on the CPU runner for M={M}, N={N}, "
                "K={K}: an endless loop?").format(name=runner.spec.name,
                                                  seconds=f"{timeout_s:.0f}", M=M, N=N, K=K)
            ) from None
        if not rep.exists():
            raise RuntimeError(f"the CPU runner stopped without a report (exit code "
                               f"{proc.returncode}): {proc.stderr.strip()[:300]}")
        report = json.loads(rep.read_text())
        C = (np.fromfile(out, np.float32).reshape(M, N) if out.exists() else
             np.full((M, N), np.nan, np.float32))
    errors = report["errors"]
    lines = _lines(runner.path, [e["pc"] for e in errors] + [e["pc2"] for e in errors])
    names = _shared_names(runner.path) if any(
        e["kind"].startswith(("race", "uninit")) for e in errors) else []
    result = CpuRun(C, int(report["reads_a"]), int(report["reads_b"]),
                    any(e["kind"] == "oob_write" and e["array"] == "C" for e in errors),
                    printed=proc.stdout[:MAX_PRINTED])
    for err in errors:
        category, text = _format(err, runner, block, (M, N, K), lines, names)
        {"problem": result.problems, "race": result.races,
         "uninitialised": result.uninitialised}[category].append(text)
    if report.get("crashed") and not result.problems:
        result.problems.append(_("the kernel crashed on the CPU runner for M={M}, N={N}, K={K}"
                                 ).format(M=M, N=N, K=K))
    return result
