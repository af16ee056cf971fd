"""A student's CUDA C kernel as text: what the course adds to it, and what NVRTC says about it.

Students write a kernel as a Python string (``GEMM_NAIVE_CUDA = r\"\"\"...\"\"\"``). Before it is
compiled, the course

* defines ``TILE`` for the tiled kernel (``#define TILE 16``), and then writes
  ``#line 1 "GEMM_TILED_CUDA"``, so that NVRTC's messages name the student's string and count
  its lines as the student does (line 1 is the first line of the string);
* blanks nbgrader's ``### BEGIN/END SOLUTION`` marker lines (they would be preprocessor
  directives), keeping the line count;
* appends, for the check compile only, a few lines that make NVRTC verify the kernel's
  parameter types at compile time (``int, int, int`` and three ``float`` pointers): a kernel
  taking ``long`` or ``size_t`` sizes, or the arguments in another order, would read garbage
  at launch instead of failing.

:func:`compile_kernel` turns every problem into a :class:`CudaCompileError` whose message
quotes NVRTC's log with the student's line numbers, or names what is missing (``extern "C"``,
the kernel's name, the right parameter types).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from course.gemm.cudac import nvrtc
from course.runtime.errors import not_written_message
from course.runtime.i18n import _

PARAMETERS = "(int M, int N, int K, const float* A, const float* B, float* C)"
_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*$", re.M)
_PROBE_FILE = "course-signature-check"
_PROBE = f"""
#line 1 "{_PROBE_FILE}"
template <class T> struct __course_fp {{ static const bool value = false; }};
template <> struct __course_fp<float*> {{ static const bool value = true; }};
template <> struct __course_fp<const float*> {{ static const bool value = true; }};
template <class T> struct __course_sig {{ static const bool ok = false; }};
template <class A, class B, class C> struct __course_sig<void(int, int, int, A, B, C)> {{
    static const bool ok = __course_fp<A>::value && __course_fp<B>::value
                           && __course_fp<C>::value;
}};
template <class T, bool ok> struct __course_report {{ }};
template <class T> struct __course_report<T, false> {{ typedef typename T::wrong_types x; }};
template struct __course_report<decltype(KERNEL), __course_sig<decltype(KERNEL)>::ok>;
"""


class CudaSourceError(TypeError):
    """The value handed in is not CUDA C source (not a string, or empty)."""


class CudaCompileError(ValueError):
    """The kernel does not compile, or does not define the kernel the course launches."""


@dataclass(frozen=True)
class KernelSpec:
    """One kernel of the contract: its CUDA name and the notebook variable that holds it."""

    name: str
    variable: str
    tiled: bool


NAIVE = KernelSpec("gemm_naive", "GEMM_NAIVE_CUDA", tiled=False)
TILED = KernelSpec("gemm_tiled", "GEMM_TILED_CUDA", tiled=True)


def require_text(source: object, spec: KernelSpec) -> str:
    """The source as a string; clear errors for anything else, and for the release's stub."""
    if not isinstance(source, str):
        raise CudaSourceError(_(
            "{variable} must be a string of CUDA C (r\"\"\"...\"\"\"), got {kind}").format(
                variable=spec.variable, kind=type(source).__name__))
    if "raise NotImplementedError" in source:
        raise NotImplementedError(not_written_message(
            spec.variable, _("the placeholder lines `# YOUR CODE HERE` and "
                             "`raise NotImplementedError()` inside the string"),
            _("with your CUDA C")))
    if not source.strip():
        raise CudaSourceError(_("{variable} is empty: write the kernel {name} in it").format(
            variable=spec.variable, name=spec.name))
    return source


def full_source(source: str, spec: KernelSpec, tile: int | None, probe: bool = False) -> str:
    """What is compiled: TILE, a #line directive, the student's lines, the optional probe."""
    body = _MARKER.sub("", require_text(source, spec))
    head = f"#define TILE {tile}\n" if spec.tiled and tile is not None else ""
    text = f'{head}#line 1 "{spec.variable}"\n{body}'
    if not text.endswith("\n"):
        text += "\n"
    if probe:
        text += _PROBE.replace("KERNEL", spec.name)
    return text


def _student_log(log: str, spec: KernelSpec) -> str:
    """NVRTC's log without its noise: errors and warnings about the student's lines, with the
    source line and caret NVRTC prints under each."""
    keep: list[str] = []
    blocks = re.split(r"\n(?=\S)", log.strip())
    for block in blocks:
        if block.startswith(f"{spec.variable}(") or block.startswith("ptxas") and "error" in block:
            keep.append(block.replace(f"{spec.variable}(", "line ", 1).replace("): ", ": ", 1))
    return "\n".join(keep) if keep else log.strip()


def _probe_problem(log: str, spec: KernelSpec) -> str | None:
    """Translate a failure inside the course's signature probe into plain words."""
    if _PROBE_FILE not in log:
        return None
    if "is undefined" in log:
        return _("{variable} defines no function called {name}: the kernel must be "
                 "`extern \"C\" __global__ void {name}{parameters}`").format(
            variable=spec.variable, name=spec.name, parameters=PARAMETERS)
    m = re.search(r"\[with T=void \(([^)]*)\)\]", log)
    got = f"({m.group(1)})" if m else _("other parameter types")
    return _("{name} takes {got}, but the course launches it with {parameters}: three 32-bit "
             "ints (the sizes are passed as np.int32) and three float pointers, in this order. "
             "Another type (long, size_t, double*) or order reads garbage at launch.").format(
        name=spec.name, got=got, parameters=PARAMETERS)


@dataclass(frozen=True)
class CompiledKernel:
    """A kernel that compiled and defines the contract's entry point."""

    spec: KernelSpec
    tile: int | None
    result: nvrtc.Compiled

    @property
    def resources(self) -> nvrtc.KernelResources | None:
        return self.result.resources.get(self.spec.name)


def compile_kernel(source: object, spec: KernelSpec, tile: int | None = None,
                   arch: str = nvrtc.DEFAULT_ARCH) -> CompiledKernel:
    """Compile with NVRTC and check the contract; raise :class:`CudaCompileError` if not met."""
    text = full_source(require_text(source, spec), spec, tile, probe=True)
    result = nvrtc.compile_source(text, f"{spec.variable}.cu", arch=arch)
    where = f" (TILE = {tile})" if spec.tiled and tile is not None else ""
    if not result.ok:
        problem = _probe_problem(result.log, spec)
        if problem is None:
            major, minor = nvrtc.version()
            problem = _("{variable}{where} does not compile. NVRTC {version} says (line "
                        "numbers count the lines of your string):\n{log}").format(
                variable=spec.variable, where=where, version=f"{major}.{minor}",
                log=_student_log(result.log, spec))
        raise CudaCompileError(problem)
    entries = result.entries
    if spec.name not in entries:
        mangled = [e for e in entries if spec.name in e]
        if mangled:
            raise CudaCompileError(_(
                "{variable}: the kernel is compiled as `{mangled}`, a C++ name, so the course "
                "cannot find `{name}`: start the definition with `extern \"C\" __global__`").format(
                    variable=spec.variable, mangled=mangled[0], name=spec.name))
        raise CudaCompileError(_("{variable}: {name} must be a kernel (`extern \"C\" __global__ "
                                 "void {name}{parameters}`)").format(
            variable=spec.variable, name=spec.name, parameters=PARAMETERS))
    return CompiledKernel(spec, tile, result)
