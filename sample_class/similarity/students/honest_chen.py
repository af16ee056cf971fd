"""Chen (Numba track) wrote every answer himself: global indices by hand, early guards."""

NOTEBOOKS = ["01_arithmetic_intensity", "02_naive_gemm", "03_tiled_gemm", "05_roofline"]
BASE = "release"
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_vector_add": '''def ai_vector_add(n, bytes_per_element=4):
    assert_sizes(n=n)
    if bytes_per_element <= 0:
        raise ValueError("bytes_per_element must be > 0")
    flop = n
    reads = 2 * n
    writes = n
    return flop / ((reads + writes) * bytes_per_element)


def assert_sizes(**sizes):
    for key in sizes:
        v = sizes[key]
        try:
            ok = int(v) == v and v >= 1
        except (TypeError, ValueError):
            ok = False
        if not ok:
            raise ValueError("%s must be a positive integer (got %r)" % (key, v))
''',
        "ai_matmul": '''def ai_matmul(M, N, K, bytes_per_element=4):
    assert_sizes(M=M, N=N, K=K)
    if bytes_per_element <= 0:
        raise ValueError("bytes_per_element must be > 0")
    a_bytes = M * K * bytes_per_element
    b_bytes = K * N * bytes_per_element
    c_bytes = M * N * bytes_per_element
    return (2 * M * N * K) / (a_bytes + b_bytes + c_bytes)
''',
        "ai_gemm_naive": '''def ai_gemm_naive(M, N, K, bytes_per_element=4):
    assert_sizes(M=M, N=N, K=K)
    if bytes_per_element <= 0:
        raise ValueError("bytes_per_element must be > 0")
    threads = M * N
    reads = threads * 2 * K
    writes = threads
    return (2 * M * N * K) / ((reads + writes) * bytes_per_element)
''',
        "ai_gemm_tiled": '''def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):
    assert_sizes(M=M, N=N, K=K, tile=tile)
    if bytes_per_element <= 0:
        raise ValueError("bytes_per_element must be > 0")
    blocks_y = (M - 1) // tile + 1
    blocks_x = (N - 1) // tile + 1
    k_steps = (K - 1) // tile + 1
    reads = blocks_y * blocks_x * k_steps * (2 * tile * tile)
    writes = M * N
    return (2 * M * N * K) / ((reads + writes) * bytes_per_element)
''',
    },
    "02_naive_gemm": {
        "gemm_naive": '''@cuda.jit
def gemm_naive(A, B, C):
    x = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    y = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.y
    rows, inner = A.shape
    cols = B.shape[1]
    if y < rows:
        if x < cols:
            v = 0.0
            k = 0
            while k < inner:
                v += A[y, k] * B[k, x]
                k += 1
            C[y, x] = v
''',
        "swapped_kernel": '''@cuda.jit
def gemm_naive_swapped(A, B, C):
    y = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    x = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.y
    rows, inner = A.shape
    cols = B.shape[1]
    if y < rows:
        if x < cols:
            v = 0.0
            k = 0
            while k < inner:
                v += A[y, k] * B[k, x]
                k += 1
            C[y, x] = v
''',
    },
    "03_tiled_gemm": {
        "gemm_naive_again": '''@cuda.jit
def gemm_naive(A, B, C):
    x = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    y = cuda.threadIdx.y + cuda.blockIdx.y * cuda.blockDim.y
    rows, inner = A.shape
    cols = B.shape[1]
    if y < rows:
        if x < cols:
            v = 0.0
            k = 0
            while k < inner:
                v += A[y, k] * B[k, x]
                k += 1
            C[y, x] = v
''',
        "make_gemm_tiled": '''def make_gemm_tiled(tile):
    @cuda.jit
    def tiled(A, B, C):
        tileA = cuda.shared.array((tile, tile), dtype=float32)
        tileB = cuda.shared.array((tile, tile), dtype=float32)
        x = cuda.threadIdx.x + cuda.blockIdx.x * tile
        y = cuda.threadIdx.y + cuda.blockIdx.y * tile
        rows, inner = A.shape
        cols = B.shape[1]
        v = float32(0)
        start = 0
        while start < inner:
            # load one tile of each matrix, zero outside
            acol = start + cuda.threadIdx.x
            brow = start + cuda.threadIdx.y
            tileA[cuda.threadIdx.y, cuda.threadIdx.x] = 0
            tileB[cuda.threadIdx.y, cuda.threadIdx.x] = 0
            if y < rows and acol < inner:
                tileA[cuda.threadIdx.y, cuda.threadIdx.x] = A[y, acol]
            if x < cols and brow < inner:
                tileB[cuda.threadIdx.y, cuda.threadIdx.x] = B[brow, x]
            cuda.syncthreads()
            k = 0
            while k < tile:
                v += tileA[cuda.threadIdx.y, k] * tileB[k, cuda.threadIdx.x]
                k += 1
            cuda.syncthreads()
            start += tile
        if y < rows and x < cols:
            C[y, x] = v
    return tiled
''',
    },
    "05_roofline": {
        "critical_ai": '''def critical_ai(peak_gflops, bandwidth_gbs):
    # GFLOP/s divided by GB/s gives FLOP per byte
    return peak_gflops * 1.0 / bandwidth_gbs
''',
        "attainable_gflops": '''def attainable_gflops(ai, peak_gflops, bandwidth_gbs):
    if np.isscalar(ai):
        return min(peak_gflops, ai * bandwidth_gbs)
    return np.array([min(peak_gflops, x * bandwidth_gbs) for x in ai])
''',
        "bound": '''def bound(ai, peak_gflops, bandwidth_gbs):
    if ai * bandwidth_gbs < peak_gflops:
        return "memory"
    else:
        return "compute"
''',
        "vector_add": '''@cuda.jit
def vector_add(a, b, c):
    tid = cuda.threadIdx.x + cuda.blockIdx.x * cuda.blockDim.x
    nthreads = cuda.blockDim.x * cuda.gridDim.x
    for i in range(tid, len(c), nthreads):
        c[i] = a[i] + b[i]
''',
        "measured_intensities": '''def measured_intensities(flops, level_bytes):
    result = dict()
    for lvl, nbytes in level_bytes.items():
        result[lvl] = flops / nbytes if nbytes else float("inf")
    return result
''',
        "bounding_level": '''def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    compute_s = flops / (peak_gflops * 1e9)
    slowest = max(level_bytes, key=lambda lvl: level_bytes[lvl] / bandwidths_gbs[lvl])
    memory_s = level_bytes[slowest] / (bandwidths_gbs[slowest] * 1e9)
    return slowest if memory_s > compute_s else "compute"
''',
    },
}
