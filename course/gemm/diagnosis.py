"""What is wrong with a C computed by a student's GEMM kernel, in words: right, or what was seen.

:func:`diagnose` compares C with A·B and, when it is wrong, names a cause only when the evidence
pins it down: C matches, element for element, what a known mistake computes (a loop over k one
short, the last partial step along K skipped, an int accumulator, B read with the wrong row
length, a shared-memory tile read transposed, …), or the part of C never written is exactly the
part one mistake leaves (x taken as the row, the block left out of row and col). When two
mistakes would compute the same C, the message says so and names both; when none matches, it
says what it saw (where C is wrong, an example) and names nothing. An index out of range
is told in :mod:`course.gemm.access`.

A naive kernel (``k_step=None``) is never told about tiles or steps along K.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from course.gemm.operands import (
    C_POISON_BITS,
    INPUT_GUARD_BITS,
    reference_and_tolerance,
)
from course.runtime.i18n import _
from course.runtime.sim_arrays import LOCAL_ARRAY_BITS

#: runs the kernel again with C starting as the array given: C, and whether the kernel read
#: anything of A or B (None where that cannot be seen, on a GPU)
Rerun = Callable[[np.ndarray], tuple[np.ndarray, bool | None]]


class Seen(str):
    """A diagnosis that does not pin one cause: what was seen, and at most the causes it cannot
    tell apart (the caller may look further)."""


def _box(mask: np.ndarray) -> str:
    rows, cols = np.nonzero(mask)
    return f"C[{rows.min()}:{rows.max() + 1}, {cols.min()}:{cols.max() + 1}]"


def _mapping_hint(cuda_c: bool, tiled: bool = False) -> str:
    if tiled:
        return ("col = blockIdx.x * TILE + threadIdx.x, row = blockIdx.y * TILE + threadIdx.y"
                if cuda_c else "col = cuda.blockIdx.x * tile + cuda.threadIdx.x, "
                "row = cuda.blockIdx.y * tile + cuda.threadIdx.y")
    return ("col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + "
            "threadIdx.y" if cuda_c else _("`col, row = cuda.grid(2)` (it gives x first)"))


def _at(name: str, first: str, second: str, cuda_c: bool) -> str:
    """An element of a 2-D array as the student's track writes it: As[ty][tx] or As[ty, tx]."""
    return f"{name}[{first}][{second}]" if cuda_c else f"{name}[{first}, {second}]"


def diagnose(C: np.ndarray, A: np.ndarray, B: np.ndarray, block: int,
             wrote_outside: bool = False, k_step: int | None = None, *,
             naive: bool = False, rerun: Rerun | None = None, cuda_c: bool = False
             ) -> str | None:
    """Explain what is wrong with C = A·B as computed by a kernel, or None if it is right.

    ``block`` is the kernel's output tile (edges of C); ``k_step`` its step along K (BK for
    the register-tiled kernel; the tile when None and ``naive`` is False). ``rerun(C0)`` runs
    the kernel again with C starting as ``C0``: it tells a kernel that adds to C from one that
    never stores, and one that computes and never stores from one whose threads do nothing.
    """
    M, K = A.shape
    N = B.shape[1]
    size = f"M={M}, N={N}, K={K}"
    step = None if naive else (k_step or block)
    ref, tol = reference_and_tolerance(A, B)

    if wrote_outside:
        return _("your kernel wrote outside C for {size}: a store's index left C. Either a "
                 "thread past the edge of C stored (the bounds test before the store must be "
                 "`row < M and col < N`), or the store's index is not C[row, col]").format(
                     size=size)
    unwritten = C.view(np.uint32) == C_POISON_BITS
    if unwritten.all():
        return _nothing_written(C, ref, tol, size, rerun)
    if unwritten.any():
        return _partly_written(unwritten, M, N, block, size, cuda_c, step == block)
    if not np.isfinite(C).all():
        bad = ~np.isfinite(C)
        bits = C.view(np.uint32)
        unset = bits == LOCAL_ARRAY_BITS  # only the simulator's per-thread arrays hold it
        if unset.any():
            return _("{where} holds NaN for {size}: the kernel used an element of a per-thread "
                     "array (cuda.local.array) before the thread had set it. Such an array "
                     "starts as whatever its memory held, not as 0: set every element before "
                     "you add to it (an accumulator to 0, before the loop over K)"
                     ).format(where=_box(unset), size=size)
        guard = bool(np.any(bits[bad] == INPUT_GUARD_BITS))
        if step is None:
            return _("{where} holds NaN/inf for {size}, although A and B are finite: the kernel "
                     "read past the end of A or B (the memory around them holds NaN here). "
                     "The thread for C[row, col] reads only A[row, k] and B[k, col], k < K"
                     ).format(where=_box(bad), size=size)
        if guard:
            return _("{where} holds NaN for {size}: a tile load read past the end of A or B (the "
                     "memory around them holds NaN here). Tile elements past M, N or K must be "
                     "loaded as 0, not read").format(where=_box(bad), size=size)
        return Seen(_("{where} holds NaN/inf for {size}, although A and B are finite: the "
                      "kernel used a value nothing had set. Either a shared-memory tile element "
                      "is never stored (those past M, N or K must be loaded as 0), or it is read "
                      "before the barrier after loading the tiles, or a per-thread array or "
                      "accumulator is used before it is set (it starts as whatever its memory "
                      "held, not as 0)").format(where=_box(bad), size=size))
    bad = np.abs(C - ref) > tol
    if not bad.any():
        return None
    i, j = np.unravel_index(np.argmax(np.abs(C - ref) - tol), C.shape)
    detail = _("e.g. C[{i}, {j}] = {got}, expected {want}; {bad} of {total} elements wrong, "
               "in {where}").format(i=i, j=j, got=f"{C[i, j]:.6g}", want=f"{ref[i, j]:.6g}",
                                    bad=bad.sum(), total=bad.size, where=_box(bad))
    found = [h for h in _hypotheses(A, B, step, block, cuda_c)
             if h.matches(C, tol)]
    if len(found) == 1:
        return _("wrong values for {size} ({detail}): {cause}").format(
            size=size, detail=detail, cause=found[0].text)
    if found:
        return _("wrong values for {size} ({detail}). This C is what each of these mistakes "
                 "computes, and these inputs cannot tell them apart: {causes}").format(
                     size=size, detail=detail, causes="; ".join(h.text for h in found))
    if step is not None:
        full_r, full_c = (M // block) * block, (N // block) * block
        if full_r and full_c and not bad[:full_r, :full_c].any() and (full_r < M or full_c < N):
            return Seen(_("wrong values for {size}, only in the last, partial tiles ({detail}): "
                          "the full tiles are right").format(size=size, detail=detail))
    return Seen(_("wrong values for {size} ({detail}). They match none of the usual mistakes; "
                  "print one thread's row, col and the elements it reads to see where they go "
                  "astray").format(size=size, detail=detail))


def _nothing_written(C: np.ndarray, ref: np.ndarray, tol: np.ndarray, size: str,
                     rerun: Rerun | None) -> str:
    """Every element still holds the NaN C starts as: nothing stored, or C read before it was."""
    if rerun is not None:
        again, read = rerun(np.zeros_like(C))
        if np.all(np.abs(again - ref) <= tol):
            return _("C was never stored for {size}, only added to: C starts as NaN here (on a "
                     "GPU, as whatever the memory held), and with C set to 0 first your kernel is "
                     "right. Sum into a local variable (acc = 0) and store it once, C[row, col] = "
                     "acc, instead of adding to C[row, col]").format(size=size)
        if np.all(again.view(np.uint32) == np.zeros_like(again).view(np.uint32)):
            if read:
                return _("no thread stored anything into C for {size}, although the threads "
                         "read A and B: the kernel never stores its sum; store it, C[row, col] "
                         "= acc").format(size=size)
            if read is False:
                return _("no thread read A or B or stored into C for {size}: the threads do "
                         "nothing. Is the kernel written? Does its bounds test let the threads "
                         "inside C (row < M, col < N) through?").format(size=size)
            return _("no thread stored anything into C for {size}: is the kernel written? Does "
                     "it store C[row, col] = acc, and does its bounds test let the threads "
                     "inside C (row < M, col < N) through?").format(size=size)
    return _("C holds only the NaN it starts as for {size}: either no thread stored into C (is "
             "there a store C[row, col] = acc, and does the bounds test let row < M, col < N "
             "through?), or every thread added to C (C[row, col] += …) before anything was "
             "stored").format(size=size)


def _partly_written(unwritten: np.ndarray, M: int, N: int, block: int, size: str,
                    cuda_c: bool, tiled: bool) -> str:
    """Some elements never written: the pattern of a swapped mapping, a mapping without the
    block, or else only where."""
    rows = np.arange(M)[:, None]
    cols = np.arange(N)[None, :]
    cover_x = -(-N // block) * block  # threads along x of the contract's grid
    cover_y = -(-M // block) * block
    swapped = (rows < min(M, cover_x)) & (cols < min(N, cover_y))
    where = _box(unwritten)
    if np.array_equal(~unwritten, swapped):
        return _("{where} was never written for {size}: exactly the part a kernel that takes x "
                 "as the row leaves out. The launch has {x} threads along x for the N={N} "
                 "columns and {y} along y for the M={M} rows, so x must be the column: {hint}"
                 ).format(where=where, size=size, x=cover_x, N=N, y=cover_y, M=M,
                          hint=_mapping_hint(cuda_c, tiled))
    first_block = (rows < min(M, block)) & (cols < min(N, block))
    if np.array_equal(~unwritten, first_block):
        return _("{where} was never written for {size}: only the first block's part of C, "
                 "C[0:{r}, 0:{c}], was. row and col must include the block, not only the "
                 "thread within it: {hint}").format(
                     where=where, size=size, r=min(M, block), c=min(N, block),
                     hint=_mapping_hint(cuda_c, tiled))
    return Seen(_("{where} was never written (still NaN) for {size}: no thread stored there. "
                  "The thread for C[row, col] is the one with x = col and y = row, {hint}. It "
                  "must pass the test before the store and store C[row, col]").format(
                      where=where, size=size, hint=_mapping_hint(cuda_c, tiled)))


# --------------------------------------------------------------------------------------------
# Known mistakes as the C they compute.


#: products (M·N·K) up to which the costlier hypotheses are computed: every check's shapes;
#: a timing verifier's 2048³ gets the ones a matrix product computes
_SMALL = 1 << 22


@dataclass(frozen=True)
class _Hypothesis:
    text: str
    C: np.ndarray

    def matches(self, C: np.ndarray, tol: np.ndarray) -> bool:
        return bool(np.all(np.abs(C - self.C) <= tol))


def _hypotheses(A: np.ndarray, B: np.ndarray, step: int | None, block: int,
                cuda_c: bool) -> list[_Hypothesis]:
    a, b = A.astype(np.float64), B.astype(np.float64)
    M, K = a.shape
    N = b.shape[1]
    ref = a @ b
    out = []
    if ref.size and np.any(np.trunc(ref) != ref):
        keep = ("float acc = 0.0f, and no (int)" if cuda_c else "acc = float32(0.0), and no int()")
        out.append(_Hypothesis(_("C holds whole numbers only, as if the sum or each product "
                                 "were truncated to an int: keep the accumulator and the "
                                 "products float ({keep})").format(keep=keep),
                               np.zeros_like(ref)))
        truncated = [np.trunc(ref)]
        if M * N * K <= _SMALL:  # each product truncated: an M×K×N array
            truncated.append(np.trunc(a[:, :, None] * b[None]).sum(axis=1))
        for trunc in truncated:
            if np.any(trunc != 0):
                out.append(_Hypothesis(out[0].text, trunc))
    if M == N:
        out.append(_Hypothesis(_("C came out transposed, C[i, j] = (A·B)[j, i]: row and col are "
                                 "swapped between the reads and the store. The thread for "
                                 "C[row, col] reads row `row` of A and column `col` of B and "
                                 "stores into C[row, col]"), ref.T.copy()))
    elif cuda_c:
        out.append(_Hypothesis(_("each element of C sits where Cᵀ keeps it: the sum for "
                                 "C[row, col] went to C[col * M + row]; store into "
                                 "C[row * N + col]"), ref.T.reshape(M, N)))
    if step is None:
        if K > 1:
            out.append(_Hypothesis(_("C is the sum over k < K − 1: the loop over k stops one "
                                     "short; it must run over every k from 0 to K − 1"),
                                   a[:, :K - 1] @ b[:K - 1]))
            out.append(_Hypothesis(_("C holds the last product only, A[row, K−1]·B[K−1, col]: "
                                     "the accumulator is reset inside the loop over k; set it "
                                     "to 0 once, before the loop"), a[:, K - 1:] @ b[K - 1:]))
        if cuda_c:
            out.extend(_flat_reads(a, b))
    else:
        kf = (K // step) * step
        if kf < K:
            out.append(_Hypothesis(_("C is the sum over the first {kf} values of k only: the "
                                     "last, partial step along K was skipped. Loop over "
                                     "ceil(K / {step}) steps and load the elements past K as 0"
                                     ).format(kf=kf, step=step), a[:, :kf] @ b[:kf]))
        last = ((K - 1) // step) * step
        if last > 0:
            out.append(_Hypothesis(_("C holds only the last step along K (k ≥ {last}): the "
                                     "accumulator is reset inside the loop over steps; set it "
                                     "to 0 once, before that loop").format(last=last),
                                   a[:, last:] @ b[last:]))
        if step == block and M * N * K <= _SMALL:
            out.extend(_tile_mistakes(a, b, block, cuda_c))
    return out


def _flat_reads(a: np.ndarray, b: np.ndarray) -> list[_Hypothesis]:
    """CUDA C: A or B read with the wrong row length, or transposed (every index in range)."""
    M, K = a.shape
    N = b.shape[1]
    fa, fb = a.ravel(), b.ravel()
    r, k, c = np.arange(M)[:, None], np.arange(K)[None, :], np.arange(N)[None, :]
    kk = np.arange(K)[:, None]
    a_reads = {_("A is M×K, so A[row * K + k]; your kernel read A[row * N + k]"): r * N + k,
               _("A is M×K, so A[row * K + k]; your kernel read A[k * M + row], A transposed"):
               k * M + r}
    b_reads = {_("B is K×N, so B[k * N + col]; your kernel read B[k * K + col]"): kk * K + c,
               _("B is K×N, so B[k * N + col]; your kernel read B[col * K + k], B transposed"):
               c * K + kk}
    out = []
    for text, idx in a_reads.items():
        if idx.max() < fa.size and not np.array_equal(idx, r * K + k):
            out.append(_Hypothesis(text, fa[idx] @ b))
    for text, idx in b_reads.items():
        if idx.max() < fb.size and not np.array_equal(idx, kk * N + c):
            out.append(_Hypothesis(text, a @ fb[idx]))
    return out


def _tile_mistakes(a: np.ndarray, b: np.ndarray, tile: int, cuda_c: bool) -> list[_Hypothesis]:
    """The tiled kernel's C with one tile mistake, computed tile by tile (zero-padded)."""
    M, K = a.shape
    N = b.shape[1]
    mb, kb, nb = -(-M // tile), -(-K // tile), -(-N // tile)
    ap = np.zeros((mb * tile, kb * tile))
    ap[:M, :K] = a
    bp = np.zeros((kb * tile, nb * tile))
    bp[:K, :N] = b
    a4 = ap.reshape(mb, tile, kb, tile).transpose(0, 2, 1, 3)  # [bm, t, ty, tx]
    b4 = bp.reshape(kb, tile, nb, tile).transpose(0, 2, 1, 3)  # [t, bn, ty, tx]
    eye = np.arange(tile)

    def product(as_: np.ndarray, bs: np.ndarray) -> np.ndarray:
        c4 = np.einsum("mtij,tnjk->mnik", as_, bs)
        return c4.transpose(0, 2, 1, 3).reshape(mb * tile, nb * tile)[:M, :N]

    # a thread loading A[row, t·tile + ty] (ty for tx): every element of its row of the tile
    # holds the same value; likewise B[t·tile + tx, col]
    a_ty = np.broadcast_to(a4[:, :, eye, eye][:, :, :, None], a4.shape)
    b_tx = np.broadcast_to(b4[:, :, eye, eye][:, :, None, :], b4.shape)
    t = "TILE" if cuda_c else "tile"
    a_load = _at("As", "ty", "tx", cuda_c) + f" = A[row, t·{t} + tx]"
    b_load = _at("Bs", "ty", "tx", cuda_c) + f" = B[t·{t} + ty, col]"
    return [
        _Hypothesis(_("the A tile is stored transposed in shared memory: stored as {stored} but "
                      "read as {read}. Store and read the tile with the same shared-memory "
                      "indices, {load}").format(stored=_at("As", "tx", "ty", cuda_c),
                                                read=_at("As", "ty", "k", cuda_c), load=a_load),
                    product(a4.swapaxes(2, 3), b4)),
        _Hypothesis(_("the B tile is stored transposed in shared memory: stored as {stored} but "
                      "read as {read}. Store and read the tile with the same shared-memory "
                      "indices, {load}").format(stored=_at("Bs", "tx", "ty", cuda_c),
                                                read=_at("Bs", "k", "tx", cuda_c), load=b_load),
                    product(a4, b4.swapaxes(2, 3))),
        _Hypothesis(_("the tile load of A takes its column from ty: x runs along k in the A "
                      "tile, {load}").format(load=a_load), product(a_ty, b4)),
        _Hypothesis(_("the tile load of B takes its row from tx: y runs along k in the B tile, "
                      "{load}").format(load=b_load), product(a4, b_tx)),
    ]
