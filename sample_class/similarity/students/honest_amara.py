"""Amara (Numba track) wrote every answer herself: helper functions, explicit names."""

NOTEBOOKS = ["01_arithmetic_intensity", "02_naive_gemm", "03_tiled_gemm", "05_roofline",
             "06_tile_sweep"]
BASE = "release"
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_vector_add": '''def ai_vector_add(n, bytes_per_element=4):
    _check_positive_int("n", n)
    if not bytes_per_element > 0:
        raise ValueError("bytes_per_element has to be > 0")
    total_bytes = (2 + 1) * n * bytes_per_element
    return n / total_bytes


def _check_positive_int(label, x):
    if x != int(x) or x <= 0:
        raise ValueError(label + " should be a positive whole number, not " + str(x))
''',
        "ai_matmul": '''def ai_matmul(M, N, K, bytes_per_element=4):
    for label, x in zip("MNK", (M, N, K)):
        _check_positive_int(label, x)
    if not bytes_per_element > 0:
        raise ValueError("bytes_per_element has to be > 0")
    work = 2.0 * M * N * K
    traffic = bytes_per_element * (M * K + K * N + M * N)
    return work / traffic
''',
        "ai_gemm_naive": '''def ai_gemm_naive(M, N, K, bytes_per_element=4):
    for label, x in zip("MNK", (M, N, K)):
        _check_positive_int(label, x)
    if not bytes_per_element > 0:
        raise ValueError("bytes_per_element has to be > 0")
    per_thread_loads = 2 * K
    per_thread_bytes = (per_thread_loads + 1) * bytes_per_element
    return (2.0 * K) / per_thread_bytes
''',
        "ai_gemm_tiled": '''def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):
    for label, x in zip(("M", "N", "K", "tile"), (M, N, K, tile)):
        _check_positive_int(label, x)
    if not bytes_per_element > 0:
        raise ValueError("bytes_per_element has to be > 0")
    import math
    grid = math.ceil(M / tile) * math.ceil(N / tile)
    phases = math.ceil(K / tile)
    loaded = grid * phases * (tile * tile) * 2
    stored = M * N
    return (2.0 * M * N * K) / ((loaded + stored) * bytes_per_element)
''',
    },
    "02_naive_gemm": {
        "gemm_naive": '''@cuda.jit
def gemm_naive(A, B, C):
    j, i = cuda.grid(2)
    if i >= C.shape[0] or j >= C.shape[1]:
        return
    total = 0.0
    for p in range(A.shape[1]):
        total = total + A[i, p] * B[p, j]
    C[i, j] = total
''',
        "swapped_kernel": '''@cuda.jit
def gemm_naive_swapped(A, B, C):
    i, j = cuda.grid(2)
    if i >= C.shape[0] or j >= C.shape[1]:
        return
    total = 0.0
    for p in range(A.shape[1]):
        total = total + A[i, p] * B[p, j]
    C[i, j] = total
''',
    },
    "03_tiled_gemm": {
        "gemm_naive_again": '''@cuda.jit
def gemm_naive(A, B, C):
    j, i = cuda.grid(2)
    if i >= C.shape[0] or j >= C.shape[1]:
        return
    total = 0.0
    for p in range(A.shape[1]):
        total = total + A[i, p] * B[p, j]
    C[i, j] = total
''',
        "make_gemm_tiled": '''def make_gemm_tiled(tile):
    T = tile

    @cuda.jit
    def kernel(A, B, C):
        sa = cuda.shared.array(shape=(T, T), dtype=float32)
        sb = cuda.shared.array(shape=(T, T), dtype=float32)
        lx = cuda.threadIdx.x
        ly = cuda.threadIdx.y
        i = ly + cuda.blockIdx.y * cuda.blockDim.y
        j = lx + cuda.blockIdx.x * cuda.blockDim.x
        nrows = C.shape[0]
        ncols = C.shape[1]
        depth = A.shape[1]
        total = 0.0
        nphases = (depth + T - 1) // T
        for phase in range(nphases):
            base = phase * T
            sa[ly, lx] = A[i, base + lx] if (i < nrows and base + lx < depth) else 0.0
            sb[ly, lx] = B[base + ly, j] if (j < ncols and base + ly < depth) else 0.0
            cuda.syncthreads()
            for p in range(T):
                total = total + sa[ly, p] * sb[p, lx]
            cuda.syncthreads()
        if i < nrows and j < ncols:
            C[i, j] = total

    return kernel
''',
    },
    "05_roofline": {
        "critical_ai": '''def critical_ai(peak_gflops, bandwidth_gbs):
    ridge = peak_gflops / bandwidth_gbs
    return ridge
''',
        "attainable_gflops": '''def attainable_gflops(ai, peak_gflops, bandwidth_gbs):
    return np.minimum(peak_gflops, np.multiply(bandwidth_gbs, ai))
''',
        "bound": '''def bound(ai, peak_gflops, bandwidth_gbs):
    ridge = critical_ai(peak_gflops, bandwidth_gbs)
    return "compute" if ai >= ridge else "memory"
''',
        "vector_add": '''@cuda.jit
def vector_add(a, b, c):
    start = cuda.grid(1)
    step = cuda.gridsize(1)
    for idx in range(start, c.shape[0], step):
        c[idx] = a[idx] + b[idx]
''',
        "measured_intensities": '''def measured_intensities(flops, level_bytes):
    out = {}
    for name in level_bytes:
        out[name] = flops / level_bytes[name]
    return out
''',
        "bounding_level": '''def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    best_name = "compute"
    best_time = flops / peak_gflops
    for name in level_bytes:
        t = level_bytes[name] / bandwidths_gbs[name]
        if t > best_time:
            best_name, best_time = name, t
    return best_name
''',
    },
    "06_tile_sweep": {
        "predict_blocks_per_sm": '''def predict_blocks_per_sm(cc, threads_per_block, regs_per_thread, smem_per_block):
    lim = sm_limits(cc)
    warp_slots, block_cap, reg_file, reg_gran, smem_total, smem_reserved, smem_gran = lim
    nwarps = -(-threads_per_block // 32)
    limits = [block_cap, warp_slots // nwarps]
    if regs_per_thread:
        per_warp = -(-(regs_per_thread * 32) // reg_gran) * reg_gran
        limits.append(((reg_file // 4) // per_warp) * 4 // nwarps)
    if smem_per_block:
        need = -(-(smem_per_block + smem_reserved) // smem_gran) * smem_gran
        limits.append(smem_total // need)
    return min(limits)
''',
        "predict_occupancy": '''def predict_occupancy(cc, threads_per_block, regs_per_thread, smem_per_block):
    nwarps = -(-threads_per_block // 32)
    resident = predict_blocks_per_sm(cc, threads_per_block, regs_per_thread, smem_per_block)
    return resident * nwarps / sm_limits(cc)[0]
''',
        "why_not_tile_32": '''Tile 32 halves the global loads per FLOP compared with tile 16 (my sweep: intensity
went from about 4 to about 8 FLOP/B), but a 32x32 block is 1024 threads. On my T4 that block
alone fills all 32 warp slots so only one block lives on the SM, and at every barrier the SM
idles because there is no second block to switch to. My sweep had tile 16 slightly faster than
32 at 1024 and clearly faster at 512, so the extra reuse did not pay for the lost overlap.
''',
    },
}
