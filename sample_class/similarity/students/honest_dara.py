"""Dara (CUDA C track) wrote every answer herself: padded shared tiles, row-then-column."""

NOTEBOOKS = ["01_arithmetic_intensity", "02c_naive_gemm_cuda", "03c_tiled_gemm_cuda",
             "05_roofline", "06_tile_sweep"]
BASE = "release"
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_vector_add": '''def ai_vector_add(n, bytes_per_element=4):
    validate(n=n, bytes_per_element=bytes_per_element)
    return n / (3.0 * n * bytes_per_element)


def validate(bytes_per_element, **dims):
    for name, value in dims.items():
        if isinstance(value, bool) or value < 1 or value % 1:
            raise ValueError(name + " must be a positive integer; it is " + repr(value))
    if bytes_per_element <= 0:
        raise ValueError("bytes_per_element must be positive; it is " + repr(bytes_per_element))
''',
        "ai_matmul": '''def ai_matmul(M, N, K, bytes_per_element=4):
    validate(M=M, N=N, K=K, bytes_per_element=bytes_per_element)
    flops = 2.0 * M * N * K
    return flops / (bytes_per_element * (M * K + K * N + M * N))
''',
        "ai_gemm_naive": '''def ai_gemm_naive(M, N, K, bytes_per_element=4):
    validate(M=M, N=N, K=K, bytes_per_element=bytes_per_element)
    flops = 2.0 * M * N * K
    return flops / (bytes_per_element * M * N * (2 * K + 1))
''',
        "ai_gemm_tiled": '''def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):
    validate(M=M, N=N, K=K, tile=tile, bytes_per_element=bytes_per_element)
    up = lambda a, b: (a + b - 1) // b
    tiles_loaded = 2 * up(M, tile) * up(N, tile) * up(K, tile)
    flops = 2.0 * M * N * K
    return flops / (bytes_per_element * (tiles_loaded * tile * tile + M * N))
''',
    },
    "02c_naive_gemm_cuda": {
        "gemm_naive_cuda": '''GEMM_NAIVE_CUDA = r"""
extern "C" __global__ void gemm_naive(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    int i = threadIdx.y + blockDim.y * blockIdx.y;   /* row of C */
    int j = threadIdx.x + blockDim.x * blockIdx.x;   /* column of C */
    if (i < M) {
        if (j < N) {
            float sum = 0;
            int p = 0;
            while (p < K) {
                sum = sum + A[i * K + p] * B[p * N + j];
                p = p + 1;
            }
            C[i * N + j] = sum;
        }
    }
}
"""
''',
    },
    "03c_tiled_gemm_cuda": {
        "gemm_naive_cuda_again": '''GEMM_NAIVE_CUDA = r"""
extern "C" __global__ void gemm_naive(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    int i = threadIdx.y + blockDim.y * blockIdx.y;   /* row of C */
    int j = threadIdx.x + blockDim.x * blockIdx.x;   /* column of C */
    if (i < M) {
        if (j < N) {
            float sum = 0;
            int p = 0;
            while (p < K) {
                sum = sum + A[i * K + p] * B[p * N + j];
                p = p + 1;
            }
            C[i * N + j] = sum;
        }
    }
}
"""
''',
        "gemm_tiled_cuda": '''GEMM_TILED_CUDA = r"""
extern "C" __global__ void gemm_tiled(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    __shared__ float tA[TILE][TILE + 1];   /* +1: no bank conflicts */
    __shared__ float tB[TILE][TILE + 1];
    int i = threadIdx.y + TILE * blockIdx.y;
    int j = threadIdx.x + TILE * blockIdx.x;
    int numTiles = K / TILE + (K % TILE != 0);
    float sum = 0;
    for (int q = 0; q < numTiles; q++) {
        int aCol = q * TILE + threadIdx.x;
        int bRow = q * TILE + threadIdx.y;
        if (i < M && aCol < K)
            tA[threadIdx.y][threadIdx.x] = A[i * K + aCol];
        else
            tA[threadIdx.y][threadIdx.x] = 0;
        if (bRow < K && j < N)
            tB[threadIdx.y][threadIdx.x] = B[bRow * N + j];
        else
            tB[threadIdx.y][threadIdx.x] = 0;
        __syncthreads();
        for (int p = 0; p < TILE; p++)
            sum = sum + tA[threadIdx.y][p] * tB[p][threadIdx.x];
        __syncthreads();
    }
    if (i < M && j < N)
        C[i * N + j] = sum;
}
"""
''',
    },
    "05_roofline": {
        "critical_ai": '''def critical_ai(peak_gflops, bandwidth_gbs):
    return peak_gflops / bandwidth_gbs
''',
        "attainable_gflops": '''def attainable_gflops(ai, peak_gflops, bandwidth_gbs):
    return np.clip(np.asarray(ai) * bandwidth_gbs, None, peak_gflops)
''',
        "bound": '''def bound(ai, peak_gflops, bandwidth_gbs):
    is_memory = ai < peak_gflops / bandwidth_gbs
    return "memory" if is_memory else "compute"
''',
        "vector_add": '''@cuda.jit
def vector_add(a, b, c):
    stride = cuda.gridsize(1)
    i = cuda.grid(1)
    while i < c.size:
        c[i] = a[i] + b[i]
        i += stride
''',
        "measured_intensities": '''def measured_intensities(flops, level_bytes):
    return {k: flops / level_bytes[k] for k in level_bytes}
''',
        "bounding_level": '''def bounding_level(flops, level_bytes, bandwidths_gbs, peak_gflops):
    candidates = {"compute": flops / peak_gflops}
    candidates.update({k: level_bytes[k] / bandwidths_gbs[k] for k in level_bytes})
    return sorted(candidates, key=candidates.get)[-1]
''',
    },
    "06_tile_sweep": {
        "why_not_tile_32": '''Because reuse is not the only thing that matters. With TILE = 32 each block has 32*32
= 1024 threads, the maximum a block may have, and an SM of the T4 holds at most 1024 threads, so
one block per SM. Every __syncthreads() then stalls the whole SM. With TILE = 16 four blocks fit
and while one waits at the barrier another computes. In my sweep TILE 16 was the fastest;
TILE 32 was about 10 % slower even though its arithmetic intensity is twice as high.
''',
    },
}
