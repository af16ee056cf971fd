"""Jade copied the course's solution of the CUDA C kernels: names changed, reformatted, the
tiles' conditional expressions made ``if/else``, comments deleted, ``0.0f`` written ``0``,
``++k`` written ``k++``, a debug ``printf`` left in."""

NOTEBOOKS = ["02c_naive_gemm_cuda", "03c_tiled_gemm_cuda"]
BASE = "release"
COPIED = {nb: "solution" for nb in NOTEBOOKS}
_NAIVE = '''GEMM_NAIVE_CUDA = r"""
extern "C" __global__ void gemm_naive(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    int y = blockIdx.y*blockDim.y + threadIdx.y;
    int x = blockIdx.x*blockDim.x + threadIdx.x;
    if (y < M && x < N)
    {
        float sum = 0;
        for (int i = 0; i < K; i++)
        {
            sum += A[y*K + i] * B[i*N + x];
        }
        C[y*N + x] = sum;
    }
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
    __shared__ float sA[TILE][TILE];
    __shared__ float sB[TILE][TILE];
    int lx = threadIdx.x;
    int ly = threadIdx.y;
    int y = blockIdx.y*TILE + ly;
    int x = blockIdx.x*TILE + lx;
    float sum = 0;
    for (int p = 0; p < (K + TILE - 1)/TILE; p++)
    {
        int kb = p*TILE + ly;
        int ka = p*TILE + lx;
        if (y < M && ka < K)
            sA[ly][lx] = A[y*K + ka];
        else
            sA[ly][lx] = 0;
        if (kb < K && x < N)
            sB[ly][lx] = B[kb*N + x];
        else
            sB[ly][lx] = 0;
        __syncthreads();
        for (int i = 0; i < TILE; i++)
        {
            sum += sA[ly][i] * sB[i][lx];
        }
        __syncthreads();
        if (lx == 0 && ly == 0 && p == 0) printf("block %d ok\\n", blockIdx.x);
    }
    if (y < M && x < N)
    {
        C[y*N + x] = sum;
    }
}
"""
''',
    },
}
