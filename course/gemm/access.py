"""An index out of range in a student's GEMM kernel, in words: who, which element, and the
cause the thread and the element pin down (the bounds test, the loop over k, the index into A
or B, a transposed store, an unguarded tile load), as :mod:`course.gemm.diagnosis` does for a
wrong C. Both tracks: the simulator's checked arrays and the CUDA C CPU runner report the first
access past an array's end (:class:`course.gemm.operands.Access`).
"""

from __future__ import annotations

from course.gemm.operands import Access
from course.runtime.i18n import _


def explain_access(access: Access, shape: tuple[int, int, int], block_dim: tuple[int, int],
                   out_tile: int, naive: bool, cuda_c: bool = False) -> str:
    """What an access past an array's end tells about its cause, as a sentence."""
    M, N, K = shape
    sx, sy = max(1, out_tile // block_dim[0]), max(1, out_tile // block_dim[1])
    row = access.block[1] * out_tile + access.thread[1] * sy
    col = access.block[0] * out_tile + access.thread[0] * sx
    inside = row < M and col < N
    place = _("that thread is past the edge of C (row {row}, col {col}; C is {M}×{N})").format(
        row=row, col=col, M=M, N=N)
    test = "row < M && col < N" if cuda_c else "row < M and col < N"
    if access.array == "C":
        idx = access.index
        i, j = idx[:2] if isinstance(idx, tuple) else divmod(idx, N)
        if row <= i < row + sy and col <= j < col + sx:
            return _("that thread stored its element C[{i}, {j}], past the edge of C ({M}×{N}): "
                     "the bounds test before the store must stop it, `{test}`").format(
                         i=i, j=j, M=M, N=N, test=test)
        if idx == (col, row) or idx == col * M + row:
            return _("that thread computes C[{row}, {col}] and stored it at C[col, row], the "
                     "transposed place").format(row=row, col=col)
        return _("that thread computes C[{row}, {col}], inside C, but stored elsewhere: check "
                 "the index of the store").format(row=row, col=col)
    if not naive:
        return _("tile elements past M, N or K must be loaded as 0, not read: guard each load "
                 "of a tile element (and store 0 when it falls outside A or B)")
    if not inside:
        return _("{place}: such a thread must do nothing; put the whole computation under the "
                 "bounds test `{test}`").format(place=place, test=test)
    idx = access.index
    if access.array == "A":
        k = idx[1] if isinstance(idx, tuple) and idx[0] == row else (
            idx - row * K if isinstance(idx, int) else None)
    else:
        k = idx[0] if isinstance(idx, tuple) and idx[1] == col else (
            (idx - col) // N if isinstance(idx, int) and (idx - col) % N == 0 else None)
    if k == K:
        return _("that thread computes C[{row}, {col}] and asked for k = {K}: the loop over k "
                 "must stop at K − 1").format(row=row, col=col, K=K)
    if access.array == "A":
        return _("that thread computes C[{row}, {col}], inside C, so the index into A is wrong: "
                 "A is M×K ({M}×{K}), and the thread reads {what} for k < K").format(
                     row=row, col=col, M=M, K=K,
                     what="A[row * K + k]" if cuda_c else "A[row, k]")
    return _("that thread computes C[{row}, {col}], inside C, so the index into B is wrong: B "
             "is K×N ({K}×{N}), and the thread reads {what} for k < K").format(
                 row=row, col=col, K=K, N=N, what="B[k * N + col]" if cuda_c else "B[k, col]")


def describe_access(access: Access, shape: tuple[int, int, int], block_dim: tuple[int, int],
                    out_tile: int, naive: bool, cuda_c: bool = False) -> str:
    """An access past an array's end in words: who, which element, and what it tells."""
    M, N, K = shape
    rows, cols = {"A": (M, K), "B": (K, N), "C": (M, N)}.get(access.array, (0, 0))
    index = (", ".join(map(str, access.index)) if isinstance(access.index, tuple)
             else str(access.index))
    text = (_("index out of range for M={M}, N={N}, K={K}: thread {thread} of block {block} "
              "wrote {array}[{index}], outside {array} ({rows}×{cols})") if access.write else
            _("index out of range for M={M}, N={N}, K={K}: thread {thread} of block {block} "
              "read {array}[{index}], outside {array} ({rows}×{cols})"))
    hint = explain_access(access, shape, block_dim, out_tile, naive, cuda_c)
    return text.format(M=M, N=N, K=K, thread=access.thread, block=access.block,
                       array=access.array, index=index, rows=rows, cols=cols) + ". " + \
        hint[:1].upper() + hint[1:]
