"""Farah (CUDA C track) wrote every answer herself: macros for indexing, a transposed B tile."""

NOTEBOOKS = ["02c_naive_gemm_cuda", "03c_tiled_gemm_cuda", "05_roofline"]
BASE = "release"
ANSWERS = {
    "02c_naive_gemm_cuda": {
        "gemm_naive_cuda": '''GEMM_NAIVE_CUDA = r"""
#define AT(X, r, c, ld) X[(r) * (ld) + (c)]
extern "C" __global__ void gemm_naive(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    unsigned gx = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned gy = blockIdx.y * blockDim.y + threadIdx.y;
    if (gx < (unsigned)N && gy < (unsigned)M) {
        double acc = 0.0;
        for (unsigned kk = 0; kk < (unsigned)K; kk++) {
            acc += (double)AT(A, gy, kk, K) * (double)AT(B, kk, gx, N);
        }
        AT(C, gy, gx, N) = (float)acc;
    }
}
"""
''',
    },
    "03c_tiled_gemm_cuda": {
        "gemm_naive_cuda_again": '''GEMM_NAIVE_CUDA = r"""
#define AT(X, r, c, ld) X[(r) * (ld) + (c)]
extern "C" __global__ void gemm_naive(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    unsigned gx = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned gy = blockIdx.y * blockDim.y + threadIdx.y;
    if (gx < (unsigned)N && gy < (unsigned)M) {
        double acc = 0.0;
        for (unsigned kk = 0; kk < (unsigned)K; kk++) {
            acc += (double)AT(A, gy, kk, K) * (double)AT(B, kk, gx, N);
        }
        AT(C, gy, gx, N) = (float)acc;
    }
}
"""
''',
        "gemm_tiled_cuda": '''GEMM_TILED_CUDA = r"""
#define AT(X, r, c, ld) X[(r) * (ld) + (c)]
extern "C" __global__ void gemm_tiled(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float BsT[TILE][TILE];   // B tile stored transposed
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned gx = blockIdx.x * TILE + tx;
    unsigned gy = blockIdx.y * TILE + ty;
    float acc = 0;
    unsigned steps = (K + TILE - 1) / TILE;
    for (unsigned s = 0; s < steps; s++) {
        unsigned k = s * TILE;
        As[ty][tx] = 0;
        BsT[tx][ty] = 0;
        if (gy < M && k + tx < K) As[ty][tx] = AT(A, gy, k + tx, K);
        if (gx < N && k + ty < K) BsT[tx][ty] = AT(B, k + ty, gx, N);
        __syncthreads();
        for (unsigned e = 0; e < TILE; e++) acc += As[ty][e] * BsT[tx][e];
        __syncthreads();
    }
    if (gy < M && gx < N) AT(C, gy, gx, N) = acc;
}
"""
''',
    },
    "05_roofline": {
        "critical_ai": '''def critical_ai(peak_gflops, bandwidth_gbs):
    flop_per_s = peak_gflops * 1e9
    byte_per_s = bandwidth_gbs * 1e9
    return flop_per_s / byte_per_s
''',
        "attainable_gflops": '''def attainable_gflops(ai, peak_gflops, bandwidth_gbs):
    roof = np.fmin(np.asarray(ai, dtype=np.float64) * bandwidth_gbs, peak_gflops)
    return roof.item() if roof.ndim == 0 else roof
''',
        "bound": '''def bound(ai, peak_gflops, bandwidth_gbs):
    kind = "memory"
    if ai >= critical_ai(peak_gflops, bandwidth_gbs):
        kind = "compute"
    return kind
''',
        "vector_add": '''@cuda.jit
def vector_add(a, b, c):
    total = cuda.gridDim.x * cuda.blockDim.x
    first = cuda.threadIdx.x + cuda.blockDim.x * cuda.blockIdx.x
    for i in range(first, a.shape[0], total):
        c[i] = b[i] + a[i]
''',
        "measured_intensities": '''def measured_intensities(flops, level_bytes):
    levels = list(level_bytes.keys())
    values = [flops / level_bytes[lv] for lv in levels]
    return dict(zip(levels, values))
''',
        "bounding_level": '''def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    worst, worst_t = None, -1.0
    for lv, nbytes in level_bytes.items():
        t = nbytes / bandwidths_gbs[lv]
        if t > worst_t:
            worst, worst_t = lv, t
    if flops / peak_gflops > worst_t:
        return "compute"
    return worst
''',
    },
}
