"""Correct and deliberately buggy week-4 GEMM kernels, for the tests of ``course``.

A plain module (not exec'd code) because the checks read kernel source with
``inspect.getsource`` and rebuild it through :mod:`course.trust.kernel_source`; everything here
therefore also passes that whitelist. Each ``cuda.shared.array`` call sits on its own line:
the simulator identifies a shared array by the line that allocates it.

Contract (course.gemm.launch): x ↔ column of C, y ↔ row; naive blocks are 16×16, tiled blocks
tile×tile, grid (ceil(N/b), ceil(M/b)).
"""

import course  # noqa: F401  (first: it chooses GPU or simulator before numba is imported)

# isort: split
from numba import cuda, float32

# --------------------------------------------------------------------------- naive kernels


@cuda.jit
def gemm_naive(A, B, C):
    """Correct: one thread per element of C, bounds test before the store."""
    col, row = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def gemm_naive_no_bounds(A, B, C):
    """Bug: no `row < M and col < N` test; threads of the last partial block index past A/B."""
    col, row = cuda.grid(2)
    K = A.shape[1]
    acc = float32(0.0)
    for k in range(K):
        acc += A[row, k] * B[k, col]
    C[row, col] = acc


@cuda.jit
def gemm_naive_xy_swapped(A, B, C):
    """x ↔ row instead of x ↔ column. Gives the right C on square shapes (where the grid is
    square too, only slower: uncoalesced), but the contract's grid does not cover C when
    M != N, so part of C is never written."""
    row, col = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def gemm_naive_transposed(A, B, C):
    """Bug: stores into C[col, row]. Only meaningful on square shapes (else out of range)."""
    col, row = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]
        C[col, row] = acc


@cuda.jit
def gemm_naive_never_writes(A, B, C):
    """Bug: computes the sum but never stores it."""
    col, row = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]


@cuda.jit
def gemm_naive_off_by_one(A, B, C):
    """Bug: the K loop stops one short (wrong values everywhere)."""
    col, row = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K - 1):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def gemm_naive_not_implemented(A, B, C):
    """The notebook's unfilled answer cell."""
    raise NotImplementedError()


@cuda.jit
def gemm_naive_prints(A, B, C):
    """Correct, with a debugging line in every thread (issue 32): device printing makes every
    launch at the timed size crawl."""
    col, row = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]
        print("row", row, "col", col, "acc", acc)
        C[row, col] = acc


@cuda.jit(device=True)
def _show(row, col, acc):
    """A device helper that prints: a kernel calling it prints too."""
    print("row", row, "col", col, "acc", acc)


@cuda.jit
def gemm_naive_prints_in_a_helper(A, B, C):
    """Correct; prints in every thread through a device function."""
    col, row = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]
        _show(row, col, acc)
        C[row, col] = acc


@cuda.jit(device=True)
def gemm_naive_device(A, B, C):
    """Bug: a device function (device=True) where a kernel is expected."""
    col, row = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


# --------------------------------------------------------------------------- tiled factories


def make_gemm_tiled(tile):
    """Correct: zero-padded tiles, ceil(K / tile) steps, a barrier after the loads and one
    after the multiply loop."""

    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            ka = t * tile + tx
            if row < M and ka < K:
                As[ty, tx] = A[row, ka]
            else:
                As[ty, tx] = 0.0
            kb = t * tile + ty
            if kb < K and col < N:
                Bs[ty, tx] = B[kb, col]
            else:
                Bs[ty, tx] = 0.0
            cuda.syncthreads()
            for i in range(tile):
                acc += As[ty, i] * Bs[i, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled


def make_gemm_tiled_prints(tile):
    """Correct, and prints a line from one thread of every block."""

    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            ka = t * tile + tx
            if row < M and ka < K:
                As[ty, tx] = A[row, ka]
            else:
                As[ty, tx] = 0.0
            kb = t * tile + ty
            if kb < K and col < N:
                Bs[ty, tx] = B[kb, col]
            else:
                Bs[ty, tx] = 0.0
            cuda.syncthreads()
            for i in range(tile):
                acc += As[ty, i] * Bs[i, tx]
            cuda.syncthreads()
        if tx == 0 and ty == 0:
            print("block", cuda.blockIdx.x, cuda.blockIdx.y)
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled


def make_gemm_tiled_multiples_only(tile):
    """Bug: only right when M, N, K are multiples of the tile: K // tile steps and no bounds
    tests on the loads (no zero padding)."""

    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range(K // tile):
            As[ty, tx] = A[row, t * tile + tx]
            Bs[ty, tx] = B[t * tile + ty, col]
            cuda.syncthreads()
            for i in range(tile):
                acc += As[ty, i] * Bs[i, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled


def make_gemm_tiled_no_first_barrier(tile):
    """Bug: no cuda.syncthreads() between loading the tiles and reading them."""

    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            ka = t * tile + tx
            if row < M and ka < K:
                As[ty, tx] = A[row, ka]
            else:
                As[ty, tx] = 0.0
            kb = t * tile + ty
            if kb < K and col < N:
                Bs[ty, tx] = B[kb, col]
            else:
                Bs[ty, tx] = 0.0
            for i in range(tile):
                acc += As[ty, i] * Bs[i, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled


def make_gemm_tiled_no_second_barrier(tile):
    """Bug: no cuda.syncthreads() after the multiply loop, so the next step's loads may
    overwrite tile elements another thread is still reading."""

    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            ka = t * tile + tx
            if row < M and ka < K:
                As[ty, tx] = A[row, ka]
            else:
                As[ty, tx] = 0.0
            kb = t * tile + ty
            if kb < K and col < N:
                Bs[ty, tx] = B[kb, col]
            else:
                Bs[ty, tx] = 0.0
            cuda.syncthreads()
            for i in range(tile):
                acc += As[ty, i] * Bs[i, tx]
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled


def make_gemm_tiled_global_inner(tile):
    """Bug (performance only): loads the tiles but multiplies from global memory, so the
    results are right and the traffic is the naive kernel's."""

    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            ka = t * tile + tx
            if row < M and ka < K:
                As[ty, tx] = A[row, ka]
            else:
                As[ty, tx] = 0.0
            kb = t * tile + ty
            if kb < K and col < N:
                Bs[ty, tx] = B[kb, col]
            else:
                Bs[ty, tx] = 0.0
            cuda.syncthreads()
            for i in range(tile):
                k = t * tile + i
                if row < M and col < N and k < K:
                    acc += A[row, k] * B[k, col]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled


def make_gemm_tiled_swapped_tile_index(tile):
    """Bug: stores the A tile as As[tx, ty] but reads it as As[ty, i]."""

    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            ka = t * tile + tx
            if row < M and ka < K:
                As[tx, ty] = A[row, ka]
            else:
                As[tx, ty] = 0.0
            kb = t * tile + ty
            if kb < K and col < N:
                Bs[ty, tx] = B[kb, col]
            else:
                Bs[ty, tx] = 0.0
            cuda.syncthreads()
            for i in range(tile):
                acc += As[ty, i] * Bs[i, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled


def make_gemm_tiled_no_padding(tile):
    """Bug: out-of-range tile elements are skipped instead of set to 0, so threads read
    shared elements nobody of their block stored."""

    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            ka = t * tile + tx
            if row < M and ka < K:
                As[ty, tx] = A[row, ka]
            kb = t * tile + ty
            if kb < K and col < N:
                Bs[ty, tx] = B[kb, col]
            cuda.syncthreads()
            for i in range(tile):
                acc += As[ty, i] * Bs[i, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled


def make_gemm_tiled_reads_nothing(tile):
    """Bug: never reads A or B (writes zeros)."""

    @cuda.jit
    def gemm_tiled(A, B, C):
        col, row = cuda.grid(2)
        if row < C.shape[0] and col < C.shape[1]:
            C[row, col] = 0.0

    return gemm_tiled


def make_gemm_tiled_returns_device(tile):
    """Bug: the factory returns a device function, not a kernel."""

    @cuda.jit(device=True)
    def gemm_tiled(A, B, C):
        col, row = cuda.grid(2)
        if row < C.shape[0] and col < C.shape[1]:
            C[row, col] = 0.0

    return gemm_tiled


# Every buggy variant, by the check it should fail (used to prove the checks can fail).
BUGGY_NAIVE = {
    "no_bounds": gemm_naive_no_bounds,
    "xy_swapped": gemm_naive_xy_swapped,
    "transposed": gemm_naive_transposed,
    "never_writes": gemm_naive_never_writes,
    "off_by_one": gemm_naive_off_by_one,
}
BUGGY_TILED = {
    "multiples_only": make_gemm_tiled_multiples_only,
    "no_first_barrier": make_gemm_tiled_no_first_barrier,
    "no_second_barrier": make_gemm_tiled_no_second_barrier,
    "swapped_tile_index": make_gemm_tiled_swapped_tile_index,
    "no_padding": make_gemm_tiled_no_padding,
}


def make_gemm_tiled_floor(tile):
    """The SYCL write-up's mistake: K // tile steps, so the last partial step is dropped."""

    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        acc = float32(0.0)
        for t in range(K // tile):
            ka, kb = t * tile + tx, t * tile + ty
            As[ty, tx] = A[row, ka] if row < M else float32(0.0)
            Bs[ty, tx] = B[kb, col] if col < N else float32(0.0)
            cuda.syncthreads()
            for k in range(tile):
                acc += As[ty, k] * Bs[k, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled


@cuda.jit
def does_nothing(A, B, C):
    """What an unwritten kernel amounts to on a GPU: it compiles and stores nothing."""
    pass


@cuda.jit
def gemm_naive_lazy_at_large_k(A, B, C):
    """Right for K < 32 (the small shapes checks use), returns at once when K ≥ 32: fast
    where only the timing looks."""
    col, row = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    if K >= 32:
        return
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def gemm_naive_spins_at_large_k(A, B, C):
    """Right on every shape the checks use (K < 1000); at the timed size every thread first
    spins on a value of A that never changes: a naive kernel that never ends."""
    col, row = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    while K >= 1000 and A[0, 0] == A[0, 0]:  # an atomic: the compiler keeps the loop
        cuda.atomic.add(C, (0, 0), float32(0.0))
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc


@cuda.jit
def gemm_naive_writes_into_a(A, B, C):
    """Right, but nudges A[0, 0] after reading it (a kernel leaving itself a note): too little
    to change C beyond tolerance, so only the check of the inputs sees it."""
    col, row = cuda.grid(2)
    M, K = A.shape
    N = B.shape[1]
    if row < M and col < N:
        acc = float32(0.0)
        for k in range(K):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
    if row == 0 and col == 0:
        A[0, 0] = A[0, 0] * float32(1.0000001)


def make_gemm_tiled_spins_at_large_k(tile):
    """Right on every shape the correctness checks use (K < 1000); at the timed size every
    thread first spins on a value of A that never changes: a kernel that never ends."""

    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        while K >= 1000 and A[0, 0] == A[0, 0]:  # an atomic: the compiler keeps the loop
            cuda.atomic.add(C, (0, 0), float32(0.0))
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            ka = t * tile + tx
            if row < M and ka < K:
                As[ty, tx] = A[row, ka]
            else:
                As[ty, tx] = 0.0
            kb = t * tile + ty
            if kb < K and col < N:
                Bs[ty, tx] = B[kb, col]
            else:
                Bs[ty, tx] = 0.0
            cuda.syncthreads()
            for i in range(tile):
                acc += As[ty, i] * Bs[i, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled
