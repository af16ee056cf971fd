"""Hugo copied all of Amara's notebooks: every name changed, code reformatted, statements
reordered, comments added, a ternary made ``if/else`` and back, a debug print, and her written
answer reworded a little."""

NOTEBOOKS = ["01_arithmetic_intensity", "02_naive_gemm", "03_tiled_gemm", "05_roofline",
             "06_tile_sweep"]
BASE = "release"
COPIED = {nb: "honest_amara" for nb in NOTEBOOKS}
_NAIVE = '''@cuda.jit
def gemm_naive(A, B, C):
    # thread -> element of C
    col, row = cuda.grid(2)
    if row >= C.shape[0] or col >= C.shape[1]:
        return
    s = 0
    for kk in range(0, A.shape[1]):
        s = s + A[row, kk] * B[kk, col]
    C[row, col] = s
'''
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_vector_add": '''def ai_vector_add(n, bytes_per_element=4):
    validate_int("n", n)
    if not bytes_per_element > 0:
        raise ValueError("bytes_per_element must be above 0")
    nbytes = (2 + 1) * n * bytes_per_element
    return n / nbytes


def validate_int(what, v):
    # positive integers only
    if v != int(v) or v <= 0:
        raise ValueError(what + " must be a positive integer, got " + str(v))
''',
        "ai_matmul": '''def ai_matmul(M, N, K, bytes_per_element=4):
    for what, v in zip("MNK", (M, N, K)):
        validate_int(what, v)
    if not bytes_per_element > 0:
        raise ValueError("bytes_per_element must be above 0")
    moved = bytes_per_element * (M * K + K * N + M * N)
    flop = 2.0 * M * N * K
    return flop / moved
''',
        "ai_gemm_naive": '''def ai_gemm_naive(M, N, K, bytes_per_element=4):
    for what, v in zip("MNK", (M, N, K)):
        validate_int(what, v)
    if not bytes_per_element > 0:
        raise ValueError("bytes_per_element must be above 0")
    loads = 2 * K
    b = (loads + 1) * bytes_per_element
    return (2.0 * K) / b
''',
        "ai_gemm_tiled": '''def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):
    for what, v in zip(("M", "N", "K", "tile"), (M, N, K, tile)):
        validate_int(what, v)
    if not bytes_per_element > 0:
        raise ValueError("bytes_per_element must be above 0")
    import math
    nsteps = math.ceil(K / tile)
    nblocks = math.ceil(M / tile) * math.ceil(N / tile)
    writes = M * N
    reads = nblocks * nsteps * (tile * tile) * 2
    return (2.0 * M * N * K) / ((reads + writes) * bytes_per_element)
''',
    },
    "02_naive_gemm": {
        "gemm_naive": _NAIVE,
        "swapped_kernel": '''@cuda.jit
def gemm_naive_swapped(A, B, C):
    row, col = cuda.grid(2)
    if row >= C.shape[0] or col >= C.shape[1]:
        return
    s = 0
    for kk in range(0, A.shape[1]):
        s = s + A[row, kk] * B[kk, col]
    C[row, col] = s
''',
    },
    "03_tiled_gemm": {
        "gemm_naive_again": _NAIVE,
        "make_gemm_tiled": '''def make_gemm_tiled(tile):
    TS = tile

    @cuda.jit
    def tiled(A, B, C):
        # the two shared tiles
        shared_a = cuda.shared.array(shape=(TS, TS), dtype=float32)
        shared_b = cuda.shared.array(shape=(TS, TS), dtype=float32)
        ty = cuda.threadIdx.y
        tx = cuda.threadIdx.x
        col = tx + cuda.blockIdx.x * cuda.blockDim.x
        row = ty + cuda.blockIdx.y * cuda.blockDim.y
        K = A.shape[1]
        n_cols = C.shape[1]
        n_rows = C.shape[0]
        s = 0
        steps = (K + TS - 1) // TS
        for st in range(steps):
            off = st * TS
            if row < n_rows and off + tx < K:
                shared_a[ty, tx] = A[row, off + tx]
            else:
                shared_a[ty, tx] = 0
            shared_b[ty, tx] = B[off + ty, col] if (col < n_cols and off + ty < K) else 0
            cuda.syncthreads()
            for q in range(TS):
                s = s + shared_a[ty, q] * shared_b[q, tx]
            cuda.syncthreads()
        if row < n_rows and col < n_cols:
            C[row, col] = s

    return tiled
''',
    },
    "05_roofline": {
        "critical_ai": '''def critical_ai(peak_gflops, bandwidth_gbs):
    r = peak_gflops / bandwidth_gbs
    return r
''',
        "attainable_gflops": '''def attainable_gflops(ai, peak_gflops, bandwidth_gbs):
    return np.minimum(peak_gflops, np.multiply(bandwidth_gbs, ai))
''',
        "bound": '''def bound(ai, peak_gflops, bandwidth_gbs):
    r = critical_ai(peak_gflops, bandwidth_gbs)
    if ai >= r:
        result = "compute"
    else:
        result = "memory"
    return result
''',
        "vector_add": '''@cuda.jit
def vector_add(a, b, c):
    stride = cuda.gridsize(1)
    first = cuda.grid(1)
    for j in range(first, c.shape[0], stride):
        c[j] = a[j] + b[j]
''',
        "measured_intensities": '''def measured_intensities(flops, level_bytes):
    res = {}
    for lvl in level_bytes:
        res[lvl] = flops / level_bytes[lvl]
    return res
''',
        "bounding_level": '''def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    worst = "compute"
    worst_t = flops / peak_gflops
    for lvl in level_bytes:
        tt = level_bytes[lvl] / bandwidths_gbs[lvl]
        if tt > worst_t:
            worst, worst_t = lvl, tt
    return worst
''',
    },
    "06_tile_sweep": {
        "predict_blocks_per_sm": '''def predict_blocks_per_sm(cc, threads_per_block, regs_per_thread, smem_per_block):
    lims = sm_limits(cc)
    slots, cap, regfile, reggran, smemtot, smemres, smemgran = lims
    w = -(-threads_per_block // 32)
    out = [cap, slots // w]
    if smem_per_block:
        needed = -(-(smem_per_block + smemres) // smemgran) * smemgran
        out.append(smemtot // needed)
    if regs_per_thread:
        pw = -(-(regs_per_thread * 32) // reggran) * reggran
        out.append(((regfile // 4) // pw) * 4 // w)
    return min(out)
''',
        "predict_occupancy": '''def predict_occupancy(cc, threads_per_block, regs_per_thread, smem_per_block):
    w = -(-threads_per_block // 32)
    blocks = predict_blocks_per_sm(cc, threads_per_block, regs_per_thread, smem_per_block)
    return blocks * w / sm_limits(cc)[0]
''',
        "why_not_tile_32": '''Tile 32 halves the global loads per FLOP compared with tile 16 (in my sweep the
intensity went from about 4 to about 8 FLOP/B), but a 32x32 block has 1024 threads. On a T4 that
block alone fills all 32 warp slots so only one block lives on the SM, and at every barrier the
SM idles because there is no second block to switch to. In my sweep tile 16 was slightly faster
than 32 at 1024 and clearly faster at 512, so the extra reuse did not pay for the lost overlap.
''',
    },
}
