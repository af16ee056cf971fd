"""Fox wrote the naive kernels but copied ONE kernel, Bodhi's tiled CUDA C kernel: names
changed, statements reordered, comments added, the k loop a ``while``, a renamed TILE macro,
``0.f`` spelled ``0``, a debug ``printf`` and dead code added, ``#pragma`` dropped."""

NOTEBOOKS = ["02c_naive_gemm_cuda", "03c_tiled_gemm_cuda"]
BASE = "release"
COPIED = {"03c_tiled_gemm_cuda": "honest_bodhi"}
_NAIVE = '''GEMM_NAIVE_CUDA = r"""
extern "C" __global__ void gemm_naive(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    // one thread = one output element
    int x = threadIdx.x + blockIdx.x * blockDim.x, y = threadIdx.y + blockIdx.y * blockDim.y;
    if (x < N && y < M) {
        float r = 0.0f;
        for (int e = 0; e < K; e++) r += B[e * N + x] * A[y * K + e];
        C[x + y * N] = r;
    }
}
"""
'''
ANSWERS = {
    "02c_naive_gemm_cuda": {"gemm_naive_cuda": _NAIVE},
    "03c_tiled_gemm_cuda": {
        "gemm_naive_cuda_again": _NAIVE,
        "gemm_tiled_cuda": '''GEMM_TILED_CUDA = r"""
#define TS TILE
extern "C" __global__ void gemm_tiled(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    // shared tiles for A and B
    __shared__ float shA[TS * TS];
    __shared__ float shB[TS * TS];
    const int ty = threadIdx.y, tx = threadIdx.x;
    const int gc = blockIdx.x * TS + tx;   // my column
    const int gr = blockIdx.y * TS + ty;   // my row
    float total = 0;
    int base = 0;
    while (base < K) {
        float x = 0, y = 0;
        if (gr < M && base + tx < K) x = A[(size_t)gr * K + base + tx];
        if (gc < N && base + ty < K) y = B[(size_t)(base + ty) * N + gc];
        shA[ty * TS + tx] = x;
        shB[ty * TS + tx] = y;
        __syncthreads();
        for (int i = 0; i < TS; i++)
            total = fmaf(shA[ty * TS + i], shB[i * TS + tx], total);
        if (0) { printf("tile %d done\\n", base); }
        __syncthreads();
        base += TS;
    }
    if (gr < M && gc < N) C[(size_t)gr * N + gc] = total;
}
"""
''',
    },
}
