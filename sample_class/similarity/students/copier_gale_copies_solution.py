"""Gale copied the course's solution of the Numba kernels (last year's, found online): names
changed, ``float32(0.0)`` written ``0.0``, ``for`` loops made ``while`` loops, ``if/else`` loads
made conditional expressions, comments dropped, debug prints and dead code added."""

NOTEBOOKS = ["02_naive_gemm", "03_tiled_gemm"]
BASE = "release"
COPIED = {"02_naive_gemm": "solution", "03_tiled_gemm": "solution"}
ANSWERS = {
    "02_naive_gemm": {
        "gemm_naive": '''@cuda.jit
def gemm_naive(A, B, C):
    c, r = cuda.grid(2)
    rows, depth = A.shape
    cols = B.shape[1]
    if r < rows and c < cols:
        total = 0.0
        i = 0
        while i < depth:
            total += A[r, i] * B[i, c]
            i += 1
        C[r, c] = total
''',
        "swapped_kernel": '''@cuda.jit
def gemm_naive_swapped(A, B, C):
    r, c = cuda.grid(2)
    if r < C.shape[0] and c < C.shape[1]:
        total = 0.0
        i = 0
        while i < A.shape[1]:
            total += A[r, i] * B[i, c]
            i += 1
        C[r, c] = total
''',
    },
    "03_tiled_gemm": {
        "gemm_naive_again": '''@cuda.jit
def gemm_naive(A, B, C):
    c, r = cuda.grid(2)
    rows, depth = A.shape
    cols = B.shape[1]
    if r < rows and c < cols:
        total = 0.0
        i = 0
        while i < depth:
            total += A[r, i] * B[i, c]
            i += 1
        C[r, c] = total
''',
        "make_gemm_tiled": '''def make_gemm_tiled(tile):
    print("building tiled kernel", tile)

    @cuda.jit
    def tiled_kernel(A, B, C):
        sA = cuda.shared.array((tile, tile), float32)
        sB = cuda.shared.array((tile, tile), float32)
        ly = cuda.threadIdx.y
        lx = cuda.threadIdx.x
        c = cuda.blockIdx.x * tile + lx
        r = cuda.blockIdx.y * tile + ly
        rows, depth = A.shape
        cols = B.shape[1]
        total = 0.0
        step = 0
        while step < (depth + tile - 1) // tile:
            a_col = step * tile + lx
            b_row = step * tile + ly
            sA[ly, lx] = A[r, a_col] if r < rows and a_col < depth else 0.0
            sB[ly, lx] = B[b_row, c] if b_row < depth and c < cols else 0.0
            cuda.syncthreads()
            if False:
                print(sA[0, 0])
            for q in range(tile):
                total += sA[ly, q] * sB[q, lx]
            cuda.syncthreads()
            step += 1
        if r < rows and c < cols:
            C[r, c] = total

    return tiled_kernel
''',
    },
}
