"""The code policy's lists: which modules, built-ins, attributes and NumPy/Numba names graded
code may use, which constructs a ``@cuda.jit`` kernel may not, and why a dotted name is refused.

:mod:`course.trust.code_policy` walks the source and applies them.
"""

from __future__ import annotations

import ast

from course.runtime.i18n import N_, _

# ---------------------------------------------------------------------------------------------
# The lists.

#: modules graded code may import (submodules of numpy: see NUMPY_DENIED).
ALLOWED_MODULES = frozenset({"math", "cmath", "numpy", "numba", "numba.cuda", "typing",
                             "numpy.linalg", "numpy.fft", "numpy.random", "itertools",
                             "functools", "statistics", "fractions"})
#: names that stand for a module (or a module-like namespace): usable only as ``mod.name``,
#: never as a value (a module passed around would reach every attribute this policy denies).
MODULE_LIKE = ALLOWED_MODULES | frozenset({
    "numba.types", "numba.cuda.shared", "numba.cuda.local", "numba.cuda.const",
    "numba.cuda.atomic", "numba.cuda.fp16", "numba.cuda.libdevice", "numba.cuda.cg",
})
#: built-ins that reach code, files or other namespaces by name.
DENIED_BUILTINS = frozenset({
    "exec", "eval", "compile", "open", "getattr", "setattr", "delattr", "globals", "locals",
    "vars", "__import__", "breakpoint", "input", "exit", "quit", "help", "memoryview", "super",
    "classmethod", "staticmethod", "property", "object", "__build_class__", "__loader__",
    "__spec__", "__builtins__", "copyright", "credits", "license",
})
#: public attributes that lead to frames, code objects or raw memory.
DENIED_ATTRIBUTES = frozenset({
    "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "ag_frame",
    "ag_code", "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace",
    "tb_frame", "tb_next", "co_code", "func_globals", "func_code", "ctypes", "tofile", "dump",
    "dumps", "mro", "format_map", "__dict__",
})
#: numpy.<name> that read or write files, map memory, call C, or change global state.
NUMPY_DENIED = frozenset({
    "load", "loads", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt",
    "fromfile", "fromregex", "memmap", "ctypeslib", "testing", "lib", "core", "f2py",
    "distutils", "DataSource", "rec", "char", "seterr", "seterrcall", "setbufsize",
    "set_printoptions", "printoptions", "show_config", "show_runtime", "info", "source", "who",
    "lookfor", "get_include", "tracemalloc_domain", "matlib", "ma", "polynomial", "emath",
})
#: numba.<name> graded code may use.
NUMBA_ALLOWED = frozenset({
    "cuda", "types", "float16", "float32", "float64", "int8", "int16", "int32", "int64",
    "uint8", "uint16", "uint32", "uint64", "boolean", "void", "intp", "uintp", "complex64",
    "complex128",
})
#: numba.cuda.<name> graded code may use: the kernel API and host-side array helpers.
CUDA_ALLOWED = frozenset({
    "jit", "grid", "gridsize", "threadIdx", "blockIdx", "blockDim", "gridDim", "laneid",
    "warpsize", "syncthreads", "syncthreads_count", "syncthreads_and", "syncthreads_or",
    "syncwarp", "shared", "local", "const", "atomic", "fma", "selp", "cbrt", "brev", "clz",
    "ffs", "popc", "fp16", "libdevice", "threadfence", "threadfence_block",
    "threadfence_system", "activemask", "lanemask_lt", "shfl_sync", "shfl_up_sync",
    "shfl_down_sync", "shfl_xor_sync", "all_sync", "any_sync", "eq_sync", "ballot_sync",
    "match_any_sync", "match_all_sync", "to_device", "device_array", "device_array_like",
    "synchronize",
})
#: keyword arguments of @cuda.jit (``link=`` would load arbitrary files, so it is not here).
ALLOWED_JIT_KEYWORDS = frozenset({"device", "fastmath", "lineinfo", "max_registers", "opt",
                                  "inline", "launch_bounds", "debug", "cache"})

#: inside a @cuda.jit function: syntax Numba cannot compile for the GPU, with what to write.
KERNEL_SYNTAX: dict[type, tuple[str, str]] = {
    ast.List: (N_("a list"), N_("Use scalars, a tuple, or cuda.local.array.")),
    ast.ListComp: (N_("a list comprehension"), N_("Use a for loop.")),
    ast.Dict: (N_("a dict"), N_("Use scalars or a tuple.")),
    ast.DictComp: (N_("a dict comprehension"), N_("Use a for loop.")),
    ast.Set: (N_("a set"), N_("Use scalars or a tuple.")),
    ast.SetComp: (N_("a set comprehension"), N_("Use a for loop.")),
    ast.GeneratorExp: (N_("a generator expression"), N_("Use a for loop.")),
    ast.With: (N_("a `with` block"), ""),
    ast.Try: (N_("try/except"), N_("Test the condition with `if` instead.")),
    ast.Yield: (N_("yield"), ""),
    ast.YieldFrom: (N_("yield from"), ""),
    ast.JoinedStr: (N_("an f-string"), N_("Print the values directly: print('k =', k).")),
    ast.Global: (N_("a global statement"), ""),
    ast.Nonlocal: (N_("a nonlocal statement"), ""),
    ast.Import: (N_("an import"), N_("Import at the top of the cell instead.")),
    ast.ImportFrom: (N_("an import"), N_("Import at the top of the cell instead.")),
}
#: built-ins Numba cannot compile inside a GPU kernel (checked by compiling each on an H200,
#: scripts/gpu/policy_probe.py: sum over a tuple and lambda compile; these do not).
KERNEL_BUILTINS = frozenset({"list", "dict", "set", "frozenset", "sorted", "map", "filter",
                              "str", "repr", "format", "iter", "next", "any", "all"})
#: numpy names a kernel may call: the number types. Its functions (np.sqrt, np.zeros …) are
#: not compiled for the GPU by numba-cuda (np.sqrt on a float32: KeyError <ufunc 'sqrt'>).
KERNEL_NUMPY_CALLS = frozenset({"float16", "float32", "float64", "int8", "int16", "int32",
                                 "int64", "uint8", "uint16", "uint32", "uint64", "bool_",
                                 "complex64", "complex128", "intp", "uintp"})

#: in English; shown as ``_(WHAT_IS_FINE)``.
WHAT_IS_FINE = N_("Ordinary Python is fine (arithmetic, loops, if, comprehensions, isinstance, "
                  "helper functions, NumPy's numeric functions, math.*).")


def builtin_hint(name: str) -> str:
    """What to write instead of the refused built-in ``name`` (in the student's language)."""
    hints = {
        "getattr": _("Use the attribute directly (x.shape) or a dict."),
        "setattr": _("Assign to a local variable or an array element instead."),
        "open": _("Graded code works on the values it is given, never on files."),
        "eval": _("Write the expression itself."),
        "exec": _("Write the code itself."),
        "globals": _("Pass what a function needs as an argument."),
        "vars": _("Pass what a function needs as an argument."),
        "object": _("Use plain values (numbers, tuples, dicts, arrays)."),
    }
    return hints.get(name, _(WHAT_IS_FINE))


# ---------------------------------------------------------------------------------------------
# Module names.


def import_refusal(module: str, name: str | None = None) -> str | None:
    """Why ``import module`` (or ``from module import name``) is refused, or None."""
    if module == "__future__":
        return None
    if module not in ALLOWED_MODULES:
        return _("Graded code may import only math, cmath, numpy, numba, itertools, "
                 "functools, statistics, fractions and typing.")
    if name is None:
        return None
    if name == "*":
        return _("Import the names you use, one by one.")
    return qualname_refusal(f"{module}.{name}")


def qualname_refusal(qual: str) -> str | None:
    """Why the dotted name ``qual`` (rooted at a module) is refused, or None if it is fine."""
    parts = qual.split(".")
    for part in parts[1:]:
        if part.startswith("_") or part in DENIED_ATTRIBUTES:
            return _("Names starting with _ and `.{name}` reach Python's internals.").format(
                name=part)
    head = parts[0]
    if head in ("math", "cmath", "typing", "itertools", "functools", "statistics", "fractions"):
        return None
    if head == "numpy":
        if len(parts) > 1 and parts[1] in NUMPY_DENIED:
            return _("NumPy's file, memory-map, testing and global-state functions are not "
                     "available to graded code; its numeric functions are.")
        return None
    if head == "numba":
        if len(parts) == 1:
            return None
        if parts[1] not in NUMBA_ALLOWED:
            return _("From numba, graded code may use cuda and the number types (float32, "
                     "int32 …).")
        if parts[1] == "cuda" and len(parts) > 2 and parts[2] not in CUDA_ALLOWED:
            return _("From numba.cuda, graded code may use the kernel API (grid, threadIdx, "
                     "shared.array, syncthreads, atomic …) and to_device/device_array.")
        return None
    return _("Graded code may use only math, cmath, numpy, numba and the standard helpers.")
