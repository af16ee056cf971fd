"""Tests for course.trust.kernel_source: what graded code may contain, and how bundles are built.

The whitelist must accept what students typically write (kernels, a tiled factory with shared
arrays, formulas using math and ValueError, helper device functions, constants) and refuse,
with a message that names the construct, anything that could reach outside a kernel.
"""

from __future__ import annotations

import textwrap

import kernels_for_tests as kft
import numpy as np
import pytest

from course.gemm.launch import is_cuda_kernel, matmul, naive, tiled
from course.trust.kernel_source import (
    DisallowedCodeError,
    SourceBundle,
    bundle_from_cells,
    bundle_from_objects,
    referenced_names,
    validate_module,
)


def cell(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


# --------------------------------------------------------------------------- typical answers

SETUP = cell("""
    %matplotlib inline
    import numpy as np
    import matplotlib.pyplot as plt
    import course
    from course.checks import check_naive_gemm, check_tiled_gemm
    from numba import cuda, float32
    import math
    from course.tools import backend
    backend.show()
""")

NAIVE = cell("""
    @cuda.jit
    def gemm_naive(A, B, C):
        col, row = cuda.grid(2)
        M, K = A.shape
        N = B.shape[1]
        if row < M and col < N:
            acc = float32(0.0)
            for k in range(K):
                acc += A[row, k] * B[k, col]
            C[row, col] = acc
""")

TILED = cell("""
    TILE = 16

    @cuda.jit(device=True)
    def madd(acc, a, b):
        return acc + a * b

    def make_gemm_tiled(tile=TILE):
        @cuda.jit
        def gemm_tiled(A, B, C):
            As = cuda.shared.array((tile, tile), float32)
            Bs = cuda.shared.array((tile, tile), float32)
            tx = cuda.threadIdx.x
            ty = cuda.threadIdx.y
            row = cuda.blockIdx.y * cuda.blockDim.y + ty
            col = cuda.blockIdx.x * cuda.blockDim.x + tx
            M, K = A.shape
            N = B.shape[1]
            acc = float32(0.0)
            for t in range((K + tile - 1) // tile):
                k = t * tile + tx
                As[ty, tx] = A[row, k] if row < M and k < K else 0.0
                k = t * tile + ty
                Bs[ty, tx] = B[k, col] if k < K and col < N else 0.0
                cuda.syncthreads()
                for i in range(tile):
                    acc = madd(acc, As[ty, i], Bs[i, tx])
                cuda.syncthreads()
            if row < M and col < N:
                C[row, col] = acc

        return gemm_tiled
""")

FORMULAS = cell("""
    def ai_gemm_naive(M, N, K, bytes_per_element=4):
        \"\"\"FLOPs per byte of the naive kernel.\"\"\"
        if min(M, N, K) <= 0:
            raise ValueError(f"sizes must be positive, got {M}, {N}, {K}")
        flops = 2 * M * N * K
        return flops / (2 * M * N * K * bytes_per_element)

    def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):
        if tile <= 0:
            raise ValueError("tile must be positive")
        steps = math.ceil(K / tile)
        blocks = math.ceil(M / tile) * math.ceil(N / tile)
        return 2 * M * N * K / (blocks * steps * 2 * tile * tile * bytes_per_element)
""")

DEMO = cell("""
    A = np.random.rand(64, 64).astype(np.float32)
    print("max", A.max())
    plt.plot([1, 2, 3])
    check_naive_gemm(gemm_naive)
""")

NOTEBOOK = [SETUP, NAIVE, DEMO, TILED, FORMULAS, DEMO]


def test_naive_kernel_cell_is_accepted_and_launchable():
    b = bundle_from_cells(NOTEBOOK, {"gemm_naive"})
    assert b.names == ("gemm_naive",)
    assert "from numba import cuda" in b.source and "from numba import float32" in b.source
    assert "@cuda.jit\ndef gemm_naive(A, B, C):" in b.source
    k = b.load()["gemm_naive"]
    assert is_cuda_kernel(k)
    A = np.arange(6, dtype=np.float32).reshape(2, 3)
    B = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_allclose(matmul(naive(k), A, B), A @ B)


def test_tiled_factory_with_shared_arrays_and_device_helper_is_accepted():
    b = bundle_from_cells(NOTEBOOK, ["make_gemm_tiled"])
    for piece in ("TILE = 16", "def madd(", "def make_gemm_tiled(tile=TILE):",
                  "cuda.shared.array((tile, tile), float32)", "cuda.syncthreads()"):
        assert piece in b.source
    ns = b.load()
    rng = np.random.default_rng(0)
    A = rng.uniform(-1, 1, (5, 6)).astype(np.float32)
    B = rng.uniform(-1, 1, (6, 3)).astype(np.float32)
    np.testing.assert_allclose(matmul(tiled(ns["make_gemm_tiled"], 4), A, B), A @ B,
                               rtol=1e-5, atol=1e-6)


def test_formulas_with_math_and_value_error_are_accepted():
    b = bundle_from_cells(NOTEBOOK, {"ai_gemm_naive", "ai_gemm_tiled"})
    assert "import math" in b.source
    ns = b.load()
    assert ns["ai_gemm_naive"](4, 4, 4) == 0.25
    assert ns["ai_gemm_tiled"](32, 32, 32, 16) == pytest.approx(2 * 32**3 / (4 * 2 * 2 * 256 * 4))
    with pytest.raises(ValueError, match="sizes must be positive"):
        ns["ai_gemm_naive"](0, 4, 4)


def test_only_what_is_needed_is_bundled():
    b = bundle_from_cells(NOTEBOOK, {"ai_gemm_naive"})
    assert "gemm_naive(A, B, C)" not in b.source
    assert "numba" not in b.source and "import math" not in b.source
    assert "TILE" not in b.source


def test_demo_statements_are_left_out():
    b = bundle_from_cells(NOTEBOOK, {"gemm_naive", "make_gemm_tiled", "ai_gemm_naive"})
    for demo in ("print(", "plt", "np.random", "check_naive_gemm", "course", "matplotlib",
                 "%matplotlib", "A = "):
        assert demo not in b.source, demo
    assert b.names == ("ai_gemm_naive", "gemm_naive", "make_gemm_tiled")


def test_last_definition_wins():
    first = NAIVE.replace("acc += A[row, k] * B[k, col]", "acc += A[row, k]")
    b = bundle_from_cells([SETUP, first, DEMO, NAIVE], {"gemm_naive"})
    assert b.source.count("def gemm_naive") == 1
    assert "acc += A[row, k] * B[k, col]" in b.source
    # ...and the other way round: the later, wrong cell is the one that counts.
    b = bundle_from_cells([SETUP, NAIVE, first], {"gemm_naive"})
    assert "acc += A[row, k]\n" in b.source and "* B[k, col]" not in b.source


def test_a_redefined_constant_takes_its_last_value():
    b = bundle_from_cells([SETUP, "TILE = 8", TILED, "TILE = 32"], {"make_gemm_tiled"})
    assert "TILE = 32" in b.source and "TILE = 8" not in b.source and "TILE = 16" not in b.source


def test_magics_and_shell_lines_are_ignored():
    b = bundle_from_cells(["!nvidia-smi\n%time x = 1\nTILE = 16\n"], {"TILE"})
    assert b.load()["TILE"] == 16


def test_aliased_imports_are_kept():
    cells = ["from numba import cuda as cu, float32 as f32\n",
             "@cu.jit\ndef k(A):\n    i = cu.grid(1)\n    A[i] = f32(1.0)\n"]
    b = bundle_from_cells(cells, {"k"})
    assert "from numba import cuda as cu" in b.source
    assert is_cuda_kernel(b.load()["k"])


# --------------------------------------------------------------------------- refusals


def rejected(cells: list[str] | str, wanted: str = "ai_x") -> str:
    with pytest.raises(DisallowedCodeError) as info:
        bundle_from_cells([cells] if isinstance(cells, str) else cells, {wanted})
    return str(info.value)


REFUSALS = {
    "import os": ("import os\ndef ai_x(M):\n    return os.getpid()\n", "`import os`"),
    "import subprocess as sp": ("import subprocess as sp\ndef ai_x(M):\n    return sp\n",
                                "`import subprocess`"),
    "open": ("def ai_x(M):\n    return open('/etc/passwd')\n", "`open`"),
    "__import__": ("def ai_x(M):\n    return __import__('os')\n", "`__import__`"),
    "patch np.allclose": ("import numpy as np\ndef ai_x(M):\n    np.allclose = max\n"
                          "    return M\n", "`np.allclose`"),
    "patch a value attribute": ("def ai_x(M):\n    M.shape = 3\n    return M\n",
                                "assignment to the attribute `M.shape`"),
    "dunder attribute": ("def ai_x(M):\n    return ().__class__\n", "`.__class__`"),
    "dunder subclasses": ("def ai_x(M):\n    return M.__class__.__subclasses__\n",
                          "`.__subclasses__`"),
    "getattr": ("def ai_x(M):\n    return getattr(M, 'x')\n", "`getattr`"),
    "eval": ("def ai_x(M):\n    return eval('M')\n", "`eval`"),
    "exec": ("def ai_x(M):\n    exec('M = 1')\n    return M\n", "`exec`"),
    "globals": ("def ai_x(M):\n    return globals()\n", "`globals`"),
    "vars": ("def ai_x(M):\n    return vars(M)\n", "`vars`"),
    "breakpoint": ("def ai_x(M):\n    breakpoint()\n    return M\n", "`breakpoint`"),
    "input": ("def ai_x(M):\n    return input()\n", "`input`"),
    "type with three arguments": ("def ai_x(M):\n    return type('X', (), {})\n",
                                  "`type(...)` with more than one argument"),
    "generator frame": ("def ai_x(M):\n    g = (i for i in range(M))\n"
                        "    return g.gi_frame\n", "`.gi_frame`"),
    "format reaching attributes": ("def ai_x(M):\n    return '{0.real}'.format(M)\n",
                                   "`.format` on a template"),
    "numpy.load": ("import numpy\ndef ai_x(M):\n    return numpy.load('answers.npy')\n",
                   "`numpy.load`"),
    "np.testing": ("import numpy as np\ndef ai_x(M):\n    return np.testing\n", "`np.testing`"),
    "np.memmap": ("import numpy as np\ndef ai_x(M):\n    return np.memmap('x')\n",
                  "`np.memmap`"),
    "ndarray.tofile": ("def ai_x(M):\n    M.tofile('x')\n    return M\n", "`.tofile`"),
    "ndarray.ctypes": ("def ai_x(M):\n    return M.ctypes\n", "`.ctypes`"),
    "course.checks": ("import course\ndef ai_x(M):\n    return course.checks\n",
                      "`import course`"),
    "from course import": ("from course import checks\ndef ai_x(M):\n    return checks\n",
                           "`from course import checks`"),
    "from numba import njit": ("from numba import njit\ndef ai_x(M):\n    return njit\n",
                               "`from numba import njit`"),
    "numba driver internals": ("import numba\ndef ai_x(M):\n    return numba.cuda.cudadrv\n",
                               "`numba.cuda.cudadrv`"),
    "other decorator": ("import functools\n@functools.cache\ndef ai_x(M):\n    return M\n",
                        "the decorator `@functools.cache`"),
    "decorator from a name": ("def deco(f):\n    return f\n@deco\ndef ai_x(M):\n    return M\n",
                              "the decorator `@deco`"),
    "jit that links files": ("from numba import cuda\n@cuda.jit(link=['/etc/passwd'])\n"
                             "def ai_x(M):\n    M[0] = 1\n", "@cuda.jit(link=…)"),
    "module as a value": ("from numba import cuda\ndef ai_x(M):\n    return cuda\n",
                          "the module `cuda` as a value"),
    "module passed on": ("import numpy as np\ndef f(m):\n    return m\ndef ai_x(M):\n"
                         "    return f(np)\n", "the module `np` as a value"),
    "dunder name store": ("def ai_x(M):\n    __x = 1\n    return M\n", "the name `__x`"),
    "undefined helper": ("def ai_x(M):\n    return helper(M)\n",
                         "`helper` (not defined in your answer cells)"),
    "list in a kernel": ("from numba import cuda\n@cuda.jit\ndef ai_x(M):\n"
                         "    xs = [1, 2]\n    M[0] = xs[0]\n", "a list inside the @cuda.jit"),
    "f-string in a kernel": ("from numba import cuda\n@cuda.jit\ndef ai_x(M):\n"
                             "    print(f'{M[0]}')\n", "an f-string inside the @cuda.jit"),
    "allocation in a kernel": ("import numpy as np\nfrom numba import cuda\n@cuda.jit\n"
                               "def ai_x(M):\n    t = np.zeros(3)\n    M[0] = t[0]\n",
                               "`np.zeros(…)` (a NumPy function)"),
    "numpy ufunc in a kernel": ("import numpy as np\nfrom numba import cuda\n@cuda.jit\n"
                                "def ai_x(M):\n    M[0] = np.sqrt(M[1])\n",
                                "`np.sqrt(…)` (a NumPy function)"),
    "try in a device function": ("from numba import cuda\n@cuda.jit(device=True)\n"
                                 "def ai_x(M):\n    try:\n        return M\n"
                                 "    except Exception:\n        return 0\n",
                                 "try/except inside the @cuda.jit"),
    "any in a kernel": ("from numba import cuda\n@cuda.jit\ndef ai_x(M):\n"
                        "    M[0] = 1.0 if any((M[1] > 0, M[2] > 0)) else 0.0\n", "`any`"),
}

#: ordinary Python that graded code may use (issue: correct answers were zeroed).
ACCEPTED = {
    "isinstance": "def ai_x(M):\n    if not isinstance(M, int) or isinstance(M, bool):\n"
                  "        raise ValueError('M')\n    return M\n",
    "type of one value": "def ai_x(M):\n    if type(M) is not int:\n        raise ValueError"
                         "('M')\n    return M\n",
    "any over a generator": "def ai_x(M):\n    if any(v <= 0 for v in (M, M + 1)):\n"
                            "        raise ValueError('M')\n    return M\n",
    "dict literal and methods": "def ai_x(M):\n    d = {'M': M}\n"
                                "    return sum(v for _, v in d.items())\n",
    "set and list comprehensions": "def ai_x(M):\n    s = {m % 3 for m in range(M)}\n"
                                   "    return len([x for x in s]) + M\n",
    "lambda": "ai_x = lambda M: M\n",
    "lambda in a body": "def ai_x(M):\n    f = lambda: M\n    return f()\n",
    "try/except": "def ai_x(M):\n    try:\n        return int(M)\n    except (TypeError, "
                  "ValueError):\n        raise ValueError('M') from None\n",
    "with": "import numpy as np\ndef ai_x(M):\n    with np.errstate(all='ignore'):\n"
            "        return np.divide(M, 1)\n",
    "assert": "def ai_x(M):\n    assert M > 0, 'M must be positive'\n    return M\n",
    "method calls": "def ai_x(M):\n    return float(M).is_integer() and 'ab'.upper() == 'AB'\n",
    "str.format on a literal": "def ai_x(M):\n    return 'M = {}'.format(M) and M\n",
    "star args": "def ai_x(*M, **kw):\n    return len(M) + len(kw)\n",
    "numpy numeric API": "import numpy as np\ndef ai_x(M):\n    a = np.array([M, 2.0], "
                         "dtype=float)\n    return float(np.minimum(np.multiply(a, 2), "
                         "np.full(2, 3.0)).sum() + np.ceil(np.clip(M, 0, 9)))\n",
    "math and itertools": "import math\nimport itertools\ndef ai_x(M):\n"
                          "    return math.prod(itertools.repeat(M, 2))\n",
    "annotations": "import typing\ndef ai_x(M: int, k: typing.Optional[float] = None) -> "
                   "float:\n    return float(M)\n",
    "unpacking at the top": "ai_x, OTHER = max, 3\n",
    "helper function": "def helper(v):\n    return v * 2\ndef ai_x(M):\n    return helper(M)\n",
    "functools.reduce": "from functools import reduce\ndef ai_x(M):\n"
                        "    return reduce(lambda a, b: a * b, [M, 1])\n",
    "numba module spelling": "import numba\n@numba.cuda.jit\ndef ai_x(M):\n"
                             "    M[numba.cuda.threadIdx.x] = numba.float32(1.0)\n",
    "api names from numba.cuda": "from numba.cuda import jit, grid\n@jit\ndef ai_x(M):\n"
                                 "    M[grid(1)] = 1.0\n",
    "jit cache": "from numba import cuda\n@cuda.jit(cache=True)\ndef ai_x(M):\n    M[0] = 1\n",
    "what the GPU compiles in a kernel": "import math\nimport numpy as np\nfrom numba import "
                                         "cuda\n@cuda.jit\ndef ai_x(M):\n    f = lambda x: "
                                         "x + 1\n    M[0] = np.float32(math.sqrt(sum((M[1], "
                                         "M[2])))) + f(M[3])\n",
    "attribute set on a local": "import numpy as np\ndef ai_x(M):\n    a = np.zeros(4)\n"
                                "    a.shape = (2, 2)\n    return a\n",
}


@pytest.mark.parametrize("case", list(ACCEPTED), ids=list(ACCEPTED))
def test_ordinary_python_is_accepted(case):
    namespace = bundle_from_cells([ACCEPTED[case]], {"ai_x"}).load()
    assert "ai_x" in namespace


@pytest.mark.parametrize("case", list(REFUSALS), ids=list(REFUSALS))
def test_refusals_name_the_construct(case):
    source, phrase = REFUSALS[case]
    msg = rejected(source)
    assert phrase in msg, msg


def test_class_named_like_the_answer_is_refused():
    msg = rejected("class gemm_naive:\n    def __getitem__(self, cfg):\n        return self\n",
                   "gemm_naive")
    assert "`gemm_naive` is a class; graded code must define it with `def`" in msg


def test_instance_of_a_class_is_refused():
    msg = rejected(["class Cheat:\n    pass\n", "gemm_naive = Cheat()\n"], "gemm_naive")
    assert "`Cheat` is a class" in msg


def test_a_name_bound_through_an_index_is_refused():
    msg = rejected(["TABLE = {}\n", "TABLE['x'], ai_x = 1, max\n"])
    assert "`ai_x` is assigned through an attribute or an index" in msg


def test_refusal_message_says_what_is_allowed():
    msg = rejected(REFUSALS["getattr"][0])
    assert "`ai_x` (line 2)" in msg
    assert "the attribute directly" in msg
    msg = rejected(REFUSALS["import os"][0])
    assert "may import only math, cmath, numpy, numba" in msg


def test_a_refused_helper_refuses_the_answer_that_needs_it():
    cells = ["import os\n", "def helper(M):\n    return os.getpid()\n",
             "def ai_x(M):\n    return helper(M)\n"]
    assert "`import os`" in rejected(cells)
    # The same bad helper is harmless when nothing that is graded needs it.
    assert bundle_from_cells(cells + ["def ai_y(M):\n    return M\n"], {"ai_y"}).names == (
        "ai_y",)


def test_annotations_that_could_run_code_are_refused():
    # Annotations are expressions, checked like any other.
    with pytest.raises(DisallowedCodeError, match="`__import__`"):
        bundle_from_cells(["def ai_x(M: __import__('os').system('exit 3')) -> open('x'):\n"
                           "    return M\n"], {"ai_x"})
    ok = bundle_from_cells(["def ai_x(M: int, N: float = 1.0) -> float:\n    return M * N\n"],
                           {"ai_x"})
    assert ok.load()["ai_x"](2) == 2


def test_a_function_may_use_a_constant_defined_in_a_later_cell():
    b = bundle_from_cells(["def ai_x(M):\n    return TILE * M\n", "TILE = 16\n"], {"ai_x"})
    assert b.load()["ai_x"](2) == 32


# --------------------------------------------------------------------------- missing answers


def test_a_name_never_defined_is_a_name_error_pointing_to_the_answer_cell():
    with pytest.raises(NameError) as info:
        bundle_from_cells([SETUP, DEMO], {"gemm_naive"})
    msg = str(info.value)
    assert "`gemm_naive` is not defined" in msg
    assert "answer cell" in msg
    assert "syntax error" not in msg


def test_a_syntax_error_cell_is_named():
    broken = NAIVE.replace("def gemm_naive(A, B, C):", "def gemm_naive(A, B, C)")
    with pytest.raises(NameError) as info:
        bundle_from_cells([SETUP, broken], {"gemm_naive"})
    msg = str(info.value)
    assert "`gemm_naive` is not defined" in msg
    assert "syntax error" in msg
    assert "@cuda.jit" in msg  # the cell's first line, so the student can find it


def test_a_syntax_error_elsewhere_does_not_block_a_defined_answer():
    b = bundle_from_cells([SETUP, "def oops(:\n", NAIVE], {"gemm_naive"})
    assert "def gemm_naive" in b.source
    # ... and an old syntax error is not reported for a later, unrelated lookup.
    with pytest.raises(NameError) as info:
        bundle_from_cells([SETUP], {"gemm_naive"})
    assert "syntax error" not in str(info.value)


# --------------------------------------------------------------------------- SourceBundle


def test_json_round_trip():
    b = bundle_from_cells(NOTEBOOK, {"gemm_naive", "ai_gemm_naive"})
    again = SourceBundle.from_json(b.to_json())
    assert again == b
    assert again.load()["ai_gemm_naive"](2, 2, 2) == 0.25


@pytest.mark.parametrize(
    "tamper",
    [
        lambda s: "import os\n" + s,
        lambda s: s + "os = __import__('os')\n",
        lambda s: s + "print('side effect')\n",
        lambda s: s.replace("return flops", "open('/tmp/x', 'w')\n    return flops"),
    ],
    ids=["import", "dunder import", "statement", "open in body"],
)
def test_from_json_revalidates_tampered_source(tamper):
    data = bundle_from_cells(NOTEBOOK, {"ai_gemm_naive"}).to_json()
    data["source"] = tamper(data["source"])
    with pytest.raises(DisallowedCodeError):
        SourceBundle.from_json(data)


def test_validate_module_rejects_top_level_statements():
    with pytest.raises(DisallowedCodeError, match=r"line 1: `print\('hi'\)` is not a definition"):
        validate_module("print('hi')\n")
    with pytest.raises(DisallowedCodeError, match="is not a definition"):
        validate_module("for i in range(3):\n    pass\n")


# --------------------------------------------------------------------------- referenced_names


def test_referenced_names_of_a_test_cell():
    test_cell = cell("""
        from course.checks import check_naive_gemm
        report = check_naive_gemm(gemm_naive)
        assert ai_gemm_naive(4, 4, 4) == 0.25
        for size in (1, 2):
            print(size, report, TILE)
        %time check_naive_gemm(gemm_naive)
    """)
    assert referenced_names(test_cell) == {"gemm_naive", "ai_gemm_naive", "print", "TILE"}


def test_referenced_names_ignores_what_the_cell_defines_first():
    assert referenced_names("x = 1\ny = x + z\n") == {"z"}
    assert referenced_names("def f(a):\n    return a + g\nf(1)\n") == {"g"}


# --------------------------------------------------------------------------- from objects


def test_bundle_from_objects_round_trips_the_naive_kernel():
    b = bundle_from_objects({"gemm_naive": kft.gemm_naive})
    assert b.names == ("gemm_naive",)
    assert "gemm_naive = cuda.jit(gemm_naive)" in b.source
    assert "float32" in b.source
    k = SourceBundle.from_json(b.to_json()).load()["gemm_naive"]
    assert is_cuda_kernel(k)
    rng = np.random.default_rng(4)
    A = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    B = rng.uniform(-1, 1, (4, 5)).astype(np.float32)
    np.testing.assert_allclose(matmul(naive(k), A, B), A @ B, rtol=1e-5, atol=1e-6)


def test_bundle_from_objects_round_trips_a_tiled_factory():
    b = bundle_from_objects({"make_gemm_tiled": kft.make_gemm_tiled})
    assert "def make_gemm_tiled(tile):" in b.source
    factory = b.load()["make_gemm_tiled"]
    assert is_cuda_kernel(factory(4))
    rng = np.random.default_rng(5)
    A = rng.uniform(-1, 1, (5, 7)).astype(np.float32)
    B = rng.uniform(-1, 1, (7, 3)).astype(np.float32)
    np.testing.assert_allclose(matmul(tiled(factory, 4), A, B), A @ B, rtol=1e-5, atol=1e-6)


def test_bundle_from_objects_keeps_device_functions_device():
    b = bundle_from_objects({"gemm_naive": kft.gemm_naive_device})
    assert "cuda.jit(gemm_naive_device, device=True)" in b.source
    assert not is_cuda_kernel(b.load()["gemm_naive"])


def test_bundle_from_objects_collects_helpers_and_constants():
    ns: dict = {}
    exec(  # noqa: S102 - functions whose source cannot be read must be refused
        "def helper(x):\n    return x\n", ns)
    with pytest.raises(DisallowedCodeError, match="could not read the source of `ai_x`"):
        bundle_from_objects({"ai_x": ns["helper"]})
    b = bundle_from_objects({"TILE": 16, "SHAPE": (2, 3)})
    assert b.load()["TILE"] == 16 and b.load()["SHAPE"] == (2, 3)


def test_bundle_from_objects_refuses_what_is_not_a_function():
    with pytest.raises(DisallowedCodeError, match="not a function or a kernel"):
        bundle_from_objects({"gemm_naive": len})
    with pytest.raises(DisallowedCodeError, match="not a function or a kernel"):
        bundle_from_objects({"gemm_naive": [1, 2]})


def test_bundle_from_objects_validates_the_source_it_reads():
    # A live function that uses a refused construct is refused, as its cell would be.
    with pytest.raises(DisallowedCodeError, match="`open`"):
        bundle_from_objects({"ai_x": _reads_a_file})


def _reads_a_file(path):
    return open(path)  # noqa: SIM115 - deliberately refused by the whitelist
