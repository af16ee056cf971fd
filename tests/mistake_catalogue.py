"""The catalogue of common week-4 mistakes: one mutant kernel per mistake, both tracks.

Each :class:`Mutant` is the source of a right kernel with one mistake put in (``old`` → ``new``,
checked to be present, so a change to the right kernel cannot quietly empty a mutant), the
check it meets, and the causes it has. :data:`CAUSES` says how a message names each cause (a
few English phrases per cause), so that any message, old or new, can be read for the causes it
names. ``tests/test_mistake_catalogue.py`` asserts, per mutant, that its message names its
cause, and over all of them that no message names a cause the kernel does not have (a message
that cannot tell two causes apart may name both, when the mutant lists the other in
``alike``; or it may name none and say only what it saw).

``python tests/mistake_catalogue.py`` prints the right / unsure / wrong counts (issue 37).
"""

from __future__ import annotations

import contextlib
import inspect
import io
import json
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cudac_kernels
import kernels_for_tests as kft

ROOT = Path(__file__).resolve().parents[1]

# --------------------------------------------------------------------------------------------
# Causes, and the phrases that name them in a message (English; the tests run in English).

CAUSES: dict[str, tuple[str, ...]] = {
    "xy_swap": (r"maps x to columns", r"takes? x as the row", r"x must be the column"),
    "thread_index": (r"row and col come from blockIdx", r"must include the block"),
    "grid_cover": (r"grid must cover",),
    "bounds_test": (r"bounds test",),
    "store": (r"store into C\[row, col\]", r"never stores?\b", r"does the kernel store",
              r"no thread stored into C"),
    "transposed_store": (r"you computed C\[col, row\]", r"C came out transposed",
                         r"stored it at C\[col, row\]", r"went to C\[col \* M \+ row\]"),
    "a_index": (r"index(es|ing)? (into |of )?A\b", r"A is M×K", r"how the kernel reads A"),
    "b_index": (r"index(es|ing)? (into |of )?B\b", r"B is K×N", r"how the kernel reads B"),
    "k_range": (r"loop over k (must )?(stop|run)", r"stops? one short", r"k ran to K"),
    "int_trunc": (r"whole numbers?", r"truncat", r"\bint\b"),
    "accumulate_c": (r"added to C", r"only added to", r"C\[row, col\] \+=", r"C \+="),
    "k_tail": (r"partial step along K",),
    "zero_pad": (r"loaded as 0", r"zero-pad", r"Pad out-of-range tile", r"padd?ed with 0"),
    "barrier_load": (r"barrier after loading", r"after loading the tiles"),
    "barrier_compute": (r"after the multiply loop",),
    "smem_index": (r"shared[- ]memory (index|indices)",),
    "tile_load": (r"tile load",),
    "hard_coded_tile": (r"hard-coded", r"a fixed number", r"follow `?tile"),
    "acc_reset": (r"reset inside the loop", r"last product only"),
    "local_unset": (r"per-thread array",),
    "early_return": (r"`return` early",),
    "va_no_loop": (r"handled one element", r"go on to i \+ cuda\.gridsize", r"has no loop"),
    "va_stride": (r"step by cuda\.gridsize\(1\)", r"not blockDim\.x", r"steps further"),
    "va_start": (r"start at i = cuda\.grid\(1\)",),
    "va_bound": (r"stop before c\.size", r"run up to c\.size", r"while i < c\.size"),
    "va_arith": (r"Your kernel stores", r"should store a\[i\] \+ b\[i\]"),
}


def named_causes(message: str) -> set[str]:
    """The causes a message names, by the phrases of :data:`CAUSES`."""
    return {cause for cause, phrases in CAUSES.items()
            if any(re.search(p, message) for p in phrases)}


# --------------------------------------------------------------------------------------------
# Right kernels, as source text (the checks rebuild kernels from source, as the grader does).

HEADER = "import numpy as np\nfrom numba import cuda, float32\n"


def _source(fn: Any) -> str:
    return textwrap.dedent(inspect.getsource(fn))


# The right kernels are the ones the other tests pass (tests/test_checks.py, test_cudac.py,
# test_bonus.py); vector_add is notebook 5's solution.
NAIVE = _source(kft.gemm_naive)
TILED = _source(kft.make_gemm_tiled)
CUDA_NAIVE = cudac_kernels.NAIVE
CUDA_TILED = cudac_kernels.TILED


def _answer(notebook: str, grade_id: str) -> str:
    nb = json.loads((ROOT / "source" / "week4" / notebook).read_text())
    markers = re.compile(r"^[ \t]*### (BEGIN|END) (SOLUTION|HIDDEN TESTS)[ \t]*\n?", re.M)
    return next(markers.sub("", "".join(c["source"])) for c in nb["cells"]
                if c["metadata"].get("nbgrader", {}).get("grade_id") == grade_id)


VECTOR_ADD = _answer("05_roofline.ipynb", "vector_add")


def bonus_source() -> str:
    """Notebook 7's solution, the answer cell without its nbgrader markers."""
    return _answer("07_bonus_register_tiling.ipynb", "make_gemm_register_tiled")


# --------------------------------------------------------------------------------------------
# The mutants.

#: which right kernel each check's mutants start from, and the name the check is given
BASES = {"naive": (NAIVE, "gemm_naive"), "tiled": (TILED, "make_gemm_tiled"),
         "vector_add": (VECTOR_ADD, "vector_add"), "bonus": (None, "make_gemm_register_tiled"),
         "try_naive": (NAIVE, "gemm_naive"), "try_tiled": (TILED, "make_gemm_tiled"),
         "cuda_naive": (CUDA_NAIVE, "GEMM_NAIVE_CUDA"),
         "cuda_tiled": (CUDA_TILED, "GEMM_TILED_CUDA")}


@dataclass(frozen=True)
class Mutant:
    """One mistake: ``edits`` (old → new) applied to the right kernel of ``check``."""

    name: str
    check: str
    edits: tuple[tuple[str, str], ...]
    causes: frozenset[str]
    alike: frozenset[str] = field(default_factory=frozenset)
    #: the evidence names no cause: the message says only what it saw
    seen_only: bool = False

    @property
    def track(self) -> str:
        return "CUDA C" if self.check.startswith("cuda") else "Numba"

    def source(self) -> str:
        base = BASES[self.check][0] or bonus_source()
        for old, new in self.edits:
            assert old in base, f"{self.name}: {old!r} is not in the right kernel"
            base = base.replace(old, new)
        return base


def m(name: str, check: str, edits: list[tuple[str, str]] | tuple[str, str], causes: str,
      alike: str = "", seen_only: bool = False) -> Mutant:
    pairs = tuple(edits) if isinstance(edits, list) else (edits,)
    return Mutant(name, check, pairs, frozenset(causes.split()), frozenset(alike.split()),
                  seen_only)


_TILE_LOADS = ("            if row < M and ka < K:\n                As[ty, tx] = A[row, ka]\n"
               "            else:\n                As[ty, tx] = 0.0\n")

MUTANTS: tuple[Mutant, ...] = (
    # ---- Numba, naive
    m("naive_xy_swapped", "naive", ("col, row = cuda.grid(2)", "row, col = cuda.grid(2)"),
      "xy_swap"),
    m("naive_a_transposed", "naive", ("A[row, k]", "A[k, row]"), "a_index"),
    m("naive_b_transposed", "naive", ("B[k, col]", "B[col, k]"), "b_index"),
    m("naive_k_one_short", "naive", ("range(K)", "range(K - 1)"), "k_range"),
    m("naive_k_one_long", "naive", ("range(K)", "range(K + 1)"), "k_range"),
    m("naive_bounds_le", "naive", ("row < M and col < N", "row <= M and col <= N"),
      "bounds_test"),
    m("naive_bounds_wrong_dimension", "naive", ("row < M and col < N", "row < N and col < M"),
      "bounds_test"),
    m("naive_no_bounds", "naive", [("    if row < M and col < N:\n", "    if True:\n")],
      "bounds_test"),
    m("naive_int_products", "naive", ("acc += A[row, k] * B[k, col]",
                                      "acc += int(A[row, k] * B[k, col])"), "int_trunc"),
    m("naive_accumulates_into_c", "naive", [
        ("            acc += A[row, k] * B[k, col]\n        C[row, col] = acc",
         "            C[row, col] += A[row, k] * B[k, col]")], "accumulate_c"),
    m("naive_never_stores", "naive", ("        C[row, col] = acc\n", "        acc += 0.0\n"),
      "store"),
    m("naive_transposed_store", "naive", ("C[row, col] = acc", "C[col, row] = acc"),
      "transposed_store"),
    m("naive_thread_index_only", "naive", ("col, row = cuda.grid(2)",
                                           "col, row = cuda.threadIdx.x, cuda.threadIdx.y"),
      "thread_index"),
    # ---- Numba, tiled
    m("tiled_no_first_barrier", "tiled", [(
        "            cuda.syncthreads()\n            for i", "            for i")], "barrier_load"),
    m("tiled_no_second_barrier", "tiled", [(
        "                acc += As[ty, i] * Bs[i, tx]\n            cuda.syncthreads()\n",
        "                acc += As[ty, i] * Bs[i, tx]\n")], "barrier_compute"),
    m("tiled_swapped_shared_index", "tiled", [
        ("As[ty, tx] = A[row, ka]", "As[tx, ty] = A[row, ka]"),
        ("As[ty, tx] = 0.0", "As[tx, ty] = 0.0")], "smem_index"),
    m("tiled_wrong_tile_load_index", "tiled", [("ka = t * tile + tx", "ka = t * tile + ty")],
      "tile_load"),
    m("tiled_no_zero_padding", "tiled", [
        ("            else:\n                As[ty, tx] = 0.0\n", ""),
        ("            else:\n                Bs[ty, tx] = 0.0\n", "")], "zero_pad"),
    m("tiled_floor_k_steps", "tiled", ("range((K + tile - 1) // tile)", "range(K // tile)"),
      "k_tail"),
    m("tiled_hard_coded_tile", "tiled", [("row = cuda.blockIdx.y * tile + ty",
                                          "row = cuda.blockIdx.y * 16 + ty"),
                                         ("col = cuda.blockIdx.x * tile + tx",
                                          "col = cuda.blockIdx.x * 16 + tx")], "hard_coded_tile"),
    m("tiled_acc_reset_each_step", "tiled", [
        ("        acc = float32(0.0)\n        for t in range((K + tile - 1) // tile):\n",
         "        for t in range((K + tile - 1) // tile):\n            acc = float32(0.0)\n")],
      "acc_reset"),
    m("tiled_bounds_le_on_store", "tiled", ("        if row < M and col < N:\n            C",
                                            "        if row <= M and col <= N:\n            C"),
      "bounds_test"),
    m("tiled_unguarded_loads", "tiled", [(_TILE_LOADS, "            As[ty, tx] = A[row, ka]\n")],
      "zero_pad"),
    # ---- Numba, the try-it cells (notebook 2 and 3's shapes)
    m("try_naive_xy_swapped", "try_naive", ("col, row = cuda.grid(2)", "row, col = cuda.grid(2)"),
      "xy_swap"),
    m("try_tiled_xy_swapped", "try_tiled", [("row = cuda.blockIdx.y * tile + ty",
                                             "row = cuda.blockIdx.x * tile + tx"),
                                            ("col = cuda.blockIdx.x * tile + tx",
                                             "col = cuda.blockIdx.y * tile + ty")], "xy_swap"),
    # ---- Numba, the bonus
    m("bonus_floor_k_steps", "bonus", ("for k0 in range(0, K, BK):",
                                       "for k0 in range(0, K - BK + 1, BK):"), "k_tail"),
    m("bonus_no_zero_padding", "bonus", [
        ("                else:\n                    As[k, m] = float32(0.0)\n", ""),
        ("                else:\n                    Bs[k, n] = float32(0.0)\n", "")],
      "zero_pad"),
    m("bonus_no_first_barrier", "bonus", ("            cuda.syncthreads()\n            for k in "
                                          "range(BK):", "            for k in range(BK):"),
      "barrier_load"),
    m("bonus_no_second_barrier", "bonus", (
        "a_frag[i] * b_frag[j]\n            cuda.syncthreads()\n", "a_frag[i] * b_frag[j]\n"),
      "barrier_compute"),
    m("bonus_accumulator_never_zeroed", "bonus", (
        "        for i in range(TM):\n            for j in range(TN):\n"
        "                acc[i, j] = float32(0.0)\n", ""), "local_unset"),
    m("bonus_store_past_m", "bonus", ("if row < M and col < N:", "if row < M + 2 and col < N:"),
      "bounds_test"),
    # ---- Numba, vector add
    m("vector_add_no_loop", "vector_add", [(
        "    for i in range(cuda.grid(1), c.size, cuda.gridsize(1)):\n",
        "    i = cuda.grid(1)\n    if i < c.size:\n")], "va_no_loop", alike="va_stride"),
    m("vector_add_block_stride", "vector_add", ("cuda.gridsize(1))", "cuda.blockDim.x)"),
      "va_stride"),
    m("vector_add_skipping_stride", "vector_add", ("cuda.gridsize(1))", "2 * cuda.gridsize(1))"),
      "va_stride", alike="va_no_loop"),
    m("vector_add_thread_start", "vector_add", ("range(cuda.grid(1),", "range(cuda.threadIdx.x,"),
      "va_start"),
    m("vector_add_past_the_end", "vector_add", ("c.size, cuda", "c.size + 1, cuda"), "va_bound"),
    m("vector_add_subtracts", "vector_add", ("a[i] + b[i]", "a[i] - b[i]"), "va_arith"),
    # ---- CUDA C, naive
    m("cuda_naive_xy_swapped", "cuda_naive", [
        ("int row = blockIdx.y * blockDim.y + threadIdx.y;",
         "int row = blockIdx.x * blockDim.x + threadIdx.x;"),
        ("int col = blockIdx.x * blockDim.x + threadIdx.x;",
         "int col = blockIdx.y * blockDim.y + threadIdx.y;")], "xy_swap"),
    m("cuda_naive_a_leading_dimension", "cuda_naive", ("A[row * K + k]", "A[row * N + k]"),
      "a_index"),
    m("cuda_naive_b_leading_dimension", "cuda_naive", ("B[k * N + col]", "B[k * K + col]"),
      "b_index"),
    m("cuda_naive_b_transposed", "cuda_naive", ("B[k * N + col]", "B[col * K + k]"), "b_index"),
    m("cuda_naive_int_accumulator", "cuda_naive", ("float acc = 0.0f;", "int acc = 0;"),
      "int_trunc"),
    m("cuda_naive_bounds_le", "cuda_naive", ("row < M && col < N", "row <= M && col <= N"),
      "bounds_test"),
    m("cuda_naive_bounds_wrong_dimension", "cuda_naive", ("row < M && col < N",
                                                          "row < N && col < M"), "bounds_test"),
    m("cuda_naive_k_one_short", "cuda_naive", ("k < K;", "k < K - 1;"), "k_range"),
    m("cuda_naive_accumulates_into_c", "cuda_naive", [
        ("            acc += A[row * K + k] * B[k * N + col];\n        C[row * N + col] = acc;",
         "            C[row * N + col] += A[row * K + k] * B[k * N + col];")], "accumulate_c"),
    m("cuda_naive_never_stores", "cuda_naive", ("        C[row * N + col] = acc;\n",
                                                 "        (void)acc;\n"), "store"),
    m("cuda_naive_transposed_store", "cuda_naive", ("C[row * N + col] = acc;",
                                                    "C[col * M + row] = acc;"),
      "transposed_store"),
    # ---- CUDA C, tiled
    m("cuda_tiled_no_first_barrier", "cuda_tiled", [(
        "__syncthreads();\n        for (int k", "\n        for (int k")], "barrier_load"),
    m("cuda_tiled_no_second_barrier", "cuda_tiled", [(
        "acc += As[ty][k] * Bs[k][tx];\n        __syncthreads();",
        "acc += As[ty][k] * Bs[k][tx];\n")], "barrier_compute"),
    m("cuda_tiled_swapped_shared_index", "cuda_tiled", ("As[ty][tx] = ", "As[tx][ty] = "),
      "smem_index"),
    m("cuda_tiled_wrong_tile_load_index", "cuda_tiled", ("int ka = t * TILE + tx;",
                                                         "int ka = t * TILE + ty;"), "tile_load"),
    m("cuda_tiled_floor_k_steps", "cuda_tiled", ("(K + TILE - 1) / TILE", "K / TILE"), "k_tail"),
    m("cuda_tiled_no_zero_padding", "cuda_tiled", [
        ("As[ty][tx] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;",
         "if (row < M && ka < K) As[ty][tx] = A[row * K + ka];"),
        ("Bs[ty][tx] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;",
         "if (kb < K && col < N) Bs[ty][tx] = B[kb * N + col];")], "zero_pad"),
    m("cuda_tiled_early_return", "cuda_tiled", ("float acc = 0.0f;",
                                                "if (row >= M || col >= N) return;\n"
                                                "    float acc = 0.0f;"), "early_return"),
    m("cuda_tiled_hard_coded_tile", "cuda_tiled", [
        ("int row = blockIdx.y * TILE + ty;", "int row = blockIdx.y * 16 + ty;"),
        ("int col = blockIdx.x * TILE + tx;", "int col = blockIdx.x * 16 + tx;")],
      "hard_coded_tile"),
    m("cuda_tiled_int_accumulator", "cuda_tiled", ("float acc = 0.0f;", "int acc = 0;"),
      "int_trunc"),
)


# --------------------------------------------------------------------------------------------
# Running a mutant through its check.


def try_it_operands(notebook: str) -> tuple[Any, Any]:
    """A and B of a notebook's first try-it cell, as the cell makes them."""
    import numpy as np

    nb = json.loads((ROOT / "source" / "week4" / notebook).read_text())
    cell = next("".join(c["source"]) for c in nb["cells"] if "try_gemm(" in "".join(c["source"]))
    sizes = [tuple(map(int, s.split(","))) for s in re.findall(r"size=\((\d+, *\d+)\)", cell)]
    rng = np.random.default_rng(0)
    return (rng.uniform(-1, 1, size=sizes[0]).astype(np.float32),
            rng.uniform(-1, 1, size=sizes[1]).astype(np.float32))


def _build(mutant: Mutant) -> Any:
    from course.trust.kernel_source import bundle_from_cells

    name = BASES[mutant.check][1]
    return bundle_from_cells([HEADER, mutant.source()], {name}).load()[name]


def _checks() -> dict[str, Callable[[Mutant], None]]:
    from course.checks.bonus import check_register_tiled
    from course.checks.cuda_gemm import check_naive_gemm_cuda, check_tiled_gemm_cuda
    from course.checks.gemm import check_naive_gemm, check_tiled_gemm, try_gemm
    from course.checks.vector_add import check_vector_add
    from course.gemm.launch import naive, tiled

    def try_naive(mu: Mutant) -> None:
        try_gemm(naive(_build(mu)), *try_it_operands("02_naive_gemm.ipynb"))

    def try_tiled(mu: Mutant) -> None:
        try_gemm(tiled(_build(mu), 4), *try_it_operands("03_tiled_gemm.ipynb"))

    return {
        "naive": lambda mu: check_naive_gemm(_build(mu), seed=0, quiet=True),
        "tiled": lambda mu: check_tiled_gemm(_build(mu), seed=0, quiet=True),
        "bonus": lambda mu: check_register_tiled(_build(mu), seed=0, quiet=True),
        "vector_add": lambda mu: check_vector_add(_build(mu), seed=0, quiet=True),
        "cuda_naive": lambda mu: check_naive_gemm_cuda(mu.source(), seed=0, quiet=True),
        "cuda_tiled": lambda mu: check_tiled_gemm_cuda(mu.source(), seed=0, quiet=True),
        "try_naive": try_naive,
        "try_tiled": try_tiled,
    }


def message_of(mutant: Mutant) -> str | None:
    """What the student reads for ``mutant``: the check's error, or the try-it cell's ✗ line;
    None when the check passed (or the try-it cell printed ✓)."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            _checks()[mutant.check](mutant)
    except AssertionError as exc:  # GemmCheckError, VectorAddCheckError
        return str(exc)
    printed = out.getvalue().strip()
    return printed if printed.startswith("✗") else None


def verdict(mutant: Mutant, message: str | None) -> str:
    """right: names the mutant's cause and nothing else; unsure: names no cause (says only
    what it saw), or names the cause together with one the evidence cannot tell from it;
    wrong: names a cause the kernel does not have; missed: the check passed."""
    if message is None:
        return "missed"
    named = named_causes(message)
    if named - mutant.causes - mutant.alike:
        return "wrong"
    if named & mutant.alike and not named & mutant.causes:
        return "wrong"
    if not named:
        return "unsure"
    return "right" if named <= mutant.causes else "unsure"


def main() -> None:
    import collections
    import time

    import course  # noqa: F401  (chooses GPU or simulator first)

    counts: collections.Counter[str] = collections.Counter()
    start = time.perf_counter()
    for mu in MUTANTS:
        t0 = time.perf_counter()
        msg = message_of(mu)
        v = verdict(mu, msg)
        counts[v] += 1
        named = sorted(named_causes(msg or ""))
        print(f"{v:7s} {mu.name} ({time.perf_counter() - t0:.1f} s) has {sorted(mu.causes)}, "
              f"named {named}\n        {msg}")
    print(dict(counts), f"{len(MUTANTS)} mutants, {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
