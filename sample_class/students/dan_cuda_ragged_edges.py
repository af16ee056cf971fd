"""Dan's CUDA C kernels are right only for sizes that are multiples of the block or tile: no
bounds test in the naive kernel, K / TILE steps and no zero padding in the tiled one (the SYCL
write-up's assumption). The CPU runner reports the first index out of range."""

NOTEBOOKS = ['02c_naive_gemm_cuda', '03c_tiled_gemm_cuda']
BASE = "solutions"
ANSWERS = {
    '02c_naive_gemm_cuda': {
        'gemm_naive_cuda': 'GEMM_NAIVE_CUDA = r"""\nextern "C" __global__ void gemm_naive(int M, int N, int K,\n                                      const float* A, const float* B, float* C)\n{\n    int row = blockIdx.y * blockDim.y + threadIdx.y;\n    int col = blockIdx.x * blockDim.x + threadIdx.x;\n    {\n        float acc = 0.0f;\n        for (int k = 0; k < K; ++k) {\n            acc += A[row * K + k] * B[k * N + col];\n        }\n        C[row * N + col] = acc;\n    }\n}\n"""',
    },
    '03c_tiled_gemm_cuda': {
        'gemm_naive_cuda_again': 'GEMM_NAIVE_CUDA = r"""\nextern "C" __global__ void gemm_naive(int M, int N, int K,\n                                      const float* A, const float* B, float* C)\n{\n    int row = blockIdx.y * blockDim.y + threadIdx.y;\n    int col = blockIdx.x * blockDim.x + threadIdx.x;\n    {\n        float acc = 0.0f;\n        for (int k = 0; k < K; ++k) {\n            acc += A[row * K + k] * B[k * N + col];\n        }\n        C[row * N + col] = acc;\n    }\n}\n"""',
        'gemm_tiled_cuda': 'GEMM_TILED_CUDA = r"""\nextern "C" __global__ void gemm_tiled(int M, int N, int K,\n                                      const float* A, const float* B, float* C)\n{\n    __shared__ float As[TILE][TILE];\n    __shared__ float Bs[TILE][TILE];\n    int tx = threadIdx.x;\n    int ty = threadIdx.y;\n    int row = blockIdx.y * TILE + ty;\n    int col = blockIdx.x * TILE + tx;\n    float acc = 0.0f;\n    for (int t = 0; t < K / TILE; ++t) {\n        int ka = t * TILE + tx;  // column of A this thread loads\n        int kb = t * TILE + ty;  // row of B this thread loads\n        As[ty][tx] = A[row * K + ka];\n        Bs[ty][tx] = B[kb * N + col];\n        __syncthreads();  // the tiles are complete\n        for (int k = 0; k < TILE; ++k) {\n            acc += As[ty][k] * Bs[k][tx];\n        }\n        __syncthreads();  // everyone is done with these tiles\n    }\n    C[row * N + col] = acc;\n}\n"""',
    },
}
EXPECTED = {'02c_naive_gemm_cuda': 0, '03c_tiled_gemm_cuda': 0}
