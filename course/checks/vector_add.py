"""Notebook 05's graded check of the streaming kernel ``vector_add(a, b, c)``.

The kernel must be a grid-stride loop: it is launched over several grids (one block, three
blocks, one thread per element), on ragged sizes, inside guard regions on a GPU (a loop that
runs one step too far reads and writes only the guards), and once with c the same array as
a, so that an element handled by two threads shows. Runs on the simulator or a GPU.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numba import cuda

from course.checks.success_lines import PrintedReport
from course.gemm.launch import quiet_numba, require_kernel
from course.gemm.operands import C_GUARD, C_POISON_BITS, INPUT_GUARD_BITS
from course.perf.ceilings import (
    VECTOR_ADD_BLOCK,
    VectorAddCheckError,
    grid_words,
    positive_int,
)
from course.runtime import backend
from course.runtime.errors import not_written_message, not_written_yet
from course.runtime.i18n import _, ngettext
from course.runtime.seeds import generator
from course.trust import gate, replay

#: sizes for the check: 1 element, around one block, and ragged multi-block sizes.
GPU_SIZES = (1, 255, 256, 257, 1000, 100_003, 2**20 + 7)
SIM_SIZES = (1, 257, 700)
#: guard elements on each side of every array: one whole block, so that a loop that runs one
#: step too far reads and writes only inside the guards on a GPU.
VECTOR_GUARD = VECTOR_ADD_BLOCK
#: blocks of the grid that calls the kernel with c = a: a stride that divides no size here.
ALIAS_BLOCKS = 3
LOOP_HINT = "for i in range(cuda.grid(1), c.size, cuda.gridsize(1))"


@dataclass(frozen=True)
class VectorAddReport(PrintedReport):
    """What a passed check covered."""

    sizes: tuple[int, ...]
    backend: str

    def __str__(self) -> str:
        return _("✓ vector_add is correct for n = {sizes}, on grids of 1 block, {blocks} blocks "
                 "and one thread per element (blocks of {threads} threads), and with c the same "
                 "array as a [{backend}]").format(
            sizes=", ".join(f"{n:,}" for n in self.sizes), blocks=ALIAS_BLOCKS,
            threads=VECTOR_ADD_BLOCK, backend=self.backend)


def check_grids(n: int) -> list[int]:
    """The grids (numbers of 256-thread blocks) the check launches over ``n`` elements.

    One block (every thread loops over many elements), three blocks (a stride that divides
    none of the sizes), and one thread per element (the loop runs at most once): a correct
    grid-stride kernel is right on all of them, whatever grid the course picks.
    """
    full = math.ceil(positive_int("n", n) / VECTOR_ADD_BLOCK)
    return list(dict.fromkeys([1, ALIAS_BLOCKS, full]))


def _guarded_device(data: np.ndarray, fill: np.ndarray) -> tuple[Any, Any]:
    """A device buffer [guard | data | guard] and the view of its middle."""
    dev = cuda.to_device(np.concatenate([fill, data, fill]))
    return dev, dev[VECTOR_GUARD:VECTOR_GUARD + data.size]


def _diagnose(n: int, blocks: int, a: np.ndarray, b: np.ndarray, c: np.ndarray,
              wrote_outside: bool, changed_inputs: str) -> str | None:
    """What is wrong with c = a + b as computed on ``blocks`` blocks, or None if it is right."""

    where = _("for n = {n} on {grid}").format(n=f"{n:,}", grid=grid_words(blocks))
    if wrote_outside:
        return _("{where} your kernel wrote past the end of c: the loop must stop before c.size, "
                 "as `{loop}:` does").format(where=where, loop=LOOP_HINT)
    if changed_inputs:
        return _("{where} your kernel changed {inputs}: only c is the output; read a and b, "
                 "write c").format(where=where, inputs=changed_inputs)
    unwritten = c.view(np.uint32) == C_POISON_BITS
    grid = blocks * VECTOR_ADD_BLOCK
    if unwritten.all():
        if n == 1:
            return _("{where} c[0] was never written: the loop must include i = 0 and run up to "
                     "c.size, as `{loop}:` does, and store c[i] = a[i] + b[i] (the arguments "
                     "come in the order a, b, c)").format(where=where, loop=LOOP_HINT)
        return _("{where} c was never written: does the kernel store c[i] = a[i] + b[i] for "
                 "every i of `{loop}:`? The arguments come in the order (a, b, c).").format(
                     where=where, loop=LOOP_HINT)
    if unwritten.any():
        first = int(np.argmax(unwritten))
        count = int(unwritten.sum())
        if first == grid and count == n - grid:
            # n ≤ 2·grid here is what a kernel without a loop and one whose loop steps too far
            # both leave: the evidence names both
            hint = _("each of the grid's {grid} threads handled one element, and the other {rest} "
                     "of the {n} were never reached: either the kernel has no loop, or its loop "
                     "steps further than cuda.gridsize(1). A grid-stride loop goes on to "
                     "i + cuda.gridsize(1), i + 2·cuda.gridsize(1), …: `{loop}:`").format(
                         grid=f"{grid:,}", rest=f"{n - grid:,}", n=f"{n:,}", loop=LOOP_HINT)
        elif first == VECTOR_ADD_BLOCK and count == n - first:
            hint = _("only the first block's elements were written: start at i = cuda.grid(1) "
                     "(= blockIdx.x·blockDim.x + threadIdx.x, which includes the block), not "
                     "at threadIdx.x")
        elif count == n - first:
            hint = _("the last elements are missing: the loop must run up to c.size, as "
                     "`{loop}:` does").format(loop=LOOP_HINT)
        else:
            hint = _("every element needs a thread: start at i = cuda.grid(1) and step by "
                     "cuda.gridsize(1), `{loop}:`").format(loop=LOOP_HINT)
        return ngettext(
            "{where}, {count} element of c (the first is c[{first}]) was never written (still "
            "NaN): {hint}",
            "{where}, {count} elements of c (the first is c[{first}]) were never written (still "
            "NaN): {hint}", count).format(where=where, count=f"{count:,}", first=first, hint=hint)
    if not np.isfinite(c).all():
        i = int(np.argmax(~np.isfinite(c)))
        return _("{where} c[{i}] = {value} although a and b are finite: the kernel read outside "
                 "a or b (the memory around them holds NaN)").format(where=where, i=i, value=c[i])
    a64, b64, c64 = a.astype(np.float64), b.astype(np.float64), c.astype(np.float64)
    ref = a64 + b64
    tol = 2 * np.finfo(np.float32).eps * (np.abs(a64) + np.abs(b64)) + 1e-30
    bad = np.abs(c64 - ref) > tol
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    detail = _("c[{i}] = {got}, expected a[{i}] + b[{i}] = {want}; {bad} of {n} wrong").format(
        i=i, got=f"{c[i]:.6g}", want=f"{ref[i]:.6g}", bad=f"{int(bad.sum()):,}", n=f"{n:,}")
    guesses = {"a[i] − b[i]": a64 - b64, "a[i] · b[i]": a64 * b64, "a[i]": a64, "b[i]": b64,
               "2·a[i]": 2 * a64, "2·b[i]": 2 * b64}
    for what, values in guesses.items():
        if np.all(np.abs(c64 - values) <= 2 * np.finfo(np.float32).eps * np.abs(values) + 1e-30):
            return _("{where}: {detail}. Your kernel stores {what}; it should store a[i] + b[i]"
                     ).format(where=where, detail=detail, what=what)
    return _("{where}: {detail}. Each loop step should add the elements at its own index i: "
             "c[i] = a[i] + b[i]").format(where=where, detail=detail)


def _diagnose_aliased(n: int, a: np.ndarray, b: np.ndarray, got: np.ndarray) -> str | None:
    """With c the same array as a, every element must come out as a + b: added exactly once."""
    times = np.rint((got.astype(np.float64) - a) / b)  # b ≥ 0.25: how often b was added
    if np.all(times == 1) and np.array_equal(got, a + b):
        return None
    i = int(np.argmax(times != 1)) if np.any(times != 1) else int(np.argmax(got != a + b))
    where = _("for n = {n} on {grid}, called with c the same array as a").format(
        n=f"{n:,}", grid=grid_words(ALIAS_BLOCKS))
    if times[i] >= 2:
        return _("{where}: c[{i}] got b[{i}] added {times} times, so more than one thread "
                 "handled that element. Each element needs exactly one thread: start at "
                 "cuda.grid(1) and step by cuda.gridsize(1), the number of threads in the whole "
                 "grid (not blockDim.x, not 1): `{loop}:`").format(
                     where=where, i=i, times=int(times[i]), loop=LOOP_HINT)
    return _("{where}: c[{i}] = {got}, expected a[{i}] + b[{i}] = {want}. Each thread should "
             "read a[i] and b[i] and store c[i] at the same index i, once").format(
                 where=where, i=i, got=f"{got[i]:.6g}", want=f"{a[i] + b[i]:.6g}")


def _launch_checked(kernel: Any, blocks: int, n: int, *arrays: Any) -> None:
    """Launch the student's kernel; turn whatever it raises into a message with a hint."""

    try:
        with quiet_numba():
            kernel[blocks, VECTOR_ADD_BLOCK](*arrays)
        cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - the student's kernel may raise anything
        if not_written_yet(exc):
            raise VectorAddCheckError(not_written_message("vector_add")) from None
        raise VectorAddCheckError(_(
            "vector_add failed for n = {n} on {grid}: {kind}: {error}. An index out of range "
            "means that a thread went past the end of the arrays: loop only while i < c.size, "
            "as `{loop}:` does.").format(n=f"{n:,}", grid=grid_words(blocks),
                                         kind=type(exc).__name__, error=exc, loop=LOOP_HINT)
        ) from None


@replay.replayable
def check_vector_add(kernel: Any, sizes: Sequence[int] | backend.ByKind | None = None,
                     seed: int | None = None, quiet: bool = False) -> VectorAddReport:
    """Check a grid-stride ``vector_add(a, b, c)`` kernel on ragged sizes; raise if it is wrong.

    Each size runs on the grids of :func:`check_grids` with fresh random float32 inputs; c
    starts as a marked NaN (an element never written is recognised as such), and every array
    sits between guard regions, so a store past the end of c (on a GPU, where nothing raises)
    or a change to a or b is caught. Then the kernel runs with c the same array as a: an
    element that two threads handle comes out as a + 2·b, which catches a wrong stride
    (blockDim.x, 1) even though its values would otherwise look right. Small sizes go first,
    so such a kernel fails before a large size could keep it busy for long.
    """
    gate.begin_check("check_vector_add")
    kind = backend.require_runnable()
    sizes = cast("Sequence[int] | None", backend.resolve(sizes))

    require_kernel(kernel, "vector_add")
    sizes = tuple(sorted(positive_int("size", n) for n in (sizes or (
        GPU_SIZES if kind == "gpu" else SIM_SIZES))))
    rng = generator(seed)
    in_guard = np.full(VECTOR_GUARD, INPUT_GUARD_BITS, dtype=np.uint32).view(np.float32)
    c_guard = np.full(VECTOR_GUARD, C_GUARD, dtype=np.float32)
    poison_bits = np.uint32(C_POISON_BITS)
    for n in sizes:
        a = rng.uniform(-1, 1, n).astype(np.float32)
        b = rng.uniform(-1, 1, n).astype(np.float32)
        a_dev, da = _guarded_device(a, in_guard)
        b_dev, db = _guarded_device(b, in_guard)
        for blocks in check_grids(n):
            c_dev, dc = _guarded_device(np.full(n, poison_bits).view(np.float32), c_guard)
            _launch_checked(kernel, blocks, n, da, db, dc)
            flat_c = c_dev.copy_to_host()
            outside = np.concatenate([flat_c[:VECTOR_GUARD], flat_c[VECTOR_GUARD + n:]])
            changed = [name for name, dev, host in (("a", a_dev, a), ("b", b_dev, b))
                       if not np.array_equal(dev.copy_to_host()[VECTOR_GUARD:VECTOR_GUARD + n]
                                             .view(np.uint32), host.view(np.uint32))]
            problem = _diagnose(n, blocks, a, b, flat_c[VECTOR_GUARD:VECTOR_GUARD + n],
                                bool(np.any(outside != C_GUARD)), " and ".join(changed))
            if problem:
                raise VectorAddCheckError(f"vector_add: {problem}")
        if n > VECTOR_ADD_BLOCK:  # below one block no two threads can share an element
            x = rng.uniform(-1, 1, n).astype(np.float32)
            y = rng.uniform(0.25, 1, n).astype(np.float32)
            x_dev, dx = _guarded_device(x, in_guard)
            _whole_y, dy = _guarded_device(y, in_guard)
            _launch_checked(kernel, ALIAS_BLOCKS, n, dx, dy, dx)
            problem = _diagnose_aliased(n, x, y, x_dev.copy_to_host()[VECTOR_GUARD:
                                                                      VECTOR_GUARD + n])
            if problem:
                raise VectorAddCheckError(f"vector_add: {problem}")
    report = VectorAddReport(sizes, kind)
    if not quiet:
        print(report)
    return report


