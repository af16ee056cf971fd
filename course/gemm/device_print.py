"""Does a kernel print from the device? Asked of its source, before it is timed.

A ``printf`` (CUDA C) or ``print`` (Numba) in every thread is the commonest debugging line a
student leaves in, and it makes every launch at the timed size crawl: each thread's line is
formatted into one buffer on the GPU, which the host prints at the next synchronisation. Its
kernel then overruns the timing's budget (:mod:`course.perf.budget`), and the reason should say
so, not send the student looking for a hang. Each track asks the tool that reads its language:

* **CUDA C**: the compiler. NVRTC turns every ``printf`` into a call of the device runtime's
  ``vprintf`` in the PTX, after the preprocessor and dead-code elimination: a ``printf`` in a
  comment, in a string or under ``if (0)`` is not one, one behind a macro or in a
  ``__device__`` helper is (:func:`ptx_prints`).
* **Numba**: Python's own parser. A kernel's source, as the grader rebuilds it
  (:class:`course.trust.kernel_source.SourceBundle`), prints if the kernel, or a function of the
  same source that it names (a device function, a helper), names the builtin ``print``
  (:func:`python_prints`). Numba's simulator and its CUDA target both print there.

A print behind a condition that is false at run time still counts: the question is what the
source asks for, and the advice — remove it before timing — is right either way.
"""

from __future__ import annotations

import ast
import re

from course.trust.kernel_source import free_names

#: a PTX call of the device runtime's printf: ``call.uni (retval0), vprintf, (param0, …);``
_PTX_VPRINTF_CALL = re.compile(r"\bcall(?:\.uni)?\s+(?:\([^)]*\)\s*,\s*)?vprintf\s*,")


def ptx_prints(ptx: str) -> bool:
    """Whether compiled PTX calls ``vprintf``, which a CUDA C ``printf`` compiles to."""
    return bool(_PTX_VPRINTF_CALL.search(ptx))


def python_prints(source: str, name: str) -> bool:
    """Whether the device code of ``name`` in ``source`` (a module's text) names the builtin
    ``print``: the kernel's body, or, for a factory such as ``make_gemm_tiled`` (a plain
    function that defines its kernel inside), the ``jit``-decorated functions it defines — a
    print in the factory's own body runs on the host — and every definition of the module that
    device code names, directly or through others (device functions, helpers)."""
    tree = ast.parse(source)
    definitions: dict[str, list[ast.stmt]] = {}
    for node in tree.body:
        for defined in _defined_names(node):
            definitions.setdefault(defined, []).append(node)
    if "print" in definitions:  # the module's own print, not the builtin
        return False
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        for node in definitions.get(current, []):
            for part in _device_parts(node) if current == name else [node]:
                named = free_names(part)  # what it uses, not what it binds (a local ``acc``)
                if "print" in named:
                    return True
                todo.extend(named - seen)
    return False


def _jitted(node: ast.AST) -> bool:
    """A function with a decorator that names ``jit`` (``@cuda.jit``, ``@jit(device=True)``)."""
    return isinstance(node, ast.FunctionDef) and any(
        isinstance(n, ast.Name | ast.Attribute) and (getattr(n, "id", "") == "jit"
                                                     or getattr(n, "attr", "") == "jit")
        for d in node.decorator_list for n in ast.walk(d))


def _device_parts(node: ast.stmt) -> list[ast.AST]:
    """What of a named definition runs on the device: all of it, unless it is a plain function
    that defines kernels inside (a factory), whose kernels only."""
    if isinstance(node, ast.FunctionDef) and not _jitted(node):
        inner = [n for n in ast.walk(node) if n is not node and _jitted(n)]
        if inner:
            return inner
    return [node]


def _defined_names(node: ast.stmt) -> list[str]:
    """The module-level names a statement defines (a function, a class, an assignment)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return []
