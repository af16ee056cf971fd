"""Gita (CUDA C track) followed the lecture closely and wrote her kernels herself: the
lecture's names (As, Bs, tx, ty, row, col), the textbook shape — the case most like the
solution without being copied from it."""

NOTEBOOKS = ["02c_naive_gemm_cuda", "03c_tiled_gemm_cuda"]
BASE = "release"
_NAIVE = '''GEMM_NAIVE_CUDA = r"""
extern "C" __global__ void gemm_naive(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) {
        return;
    }
    float value = 0.0f;
    for (int e = 0; e < K; ++e) {
        value += A[row * K + e] * B[e * N + col];
    }
    C[row * N + col] = value;
}
"""
'''
ANSWERS = {
    "02c_naive_gemm_cuda": {"gemm_naive_cuda": _NAIVE},
    "03c_tiled_gemm_cuda": {
        "gemm_naive_cuda_again": _NAIVE,
        "gemm_tiled_cuda": '''GEMM_TILED_CUDA = r"""
extern "C" __global__ void gemm_tiled(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int bx = blockIdx.x, by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = by * TILE + ty;
    int col = bx * TILE + tx;
    float value = 0.0f;
    for (int p = 0; p * TILE < K; ++p) {
        int a_col = p * TILE + tx;
        int b_row = p * TILE + ty;
        As[ty][tx] = 0.0f;
        Bs[ty][tx] = 0.0f;
        if (row < M && a_col < K) {
            As[ty][tx] = A[row * K + a_col];
        }
        if (b_row < K && col < N) {
            Bs[ty][tx] = B[b_row * N + col];
        }
        __syncthreads();
        for (int e = 0; e < TILE; ++e) {
            value += As[ty][e] * Bs[e][tx];
        }
        __syncthreads();
    }
    if (row < M && col < N) {
        C[row * N + col] = value;
    }
}
"""
''',
    },
}
