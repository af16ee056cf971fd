"""Fin left out the __syncthreads() between loading the tiles and using them. The CPU runner
finds the race every time (its verdict does not depend on the order threads run in); the
memory traffic is still that of a tiled kernel, so the traffic points stay."""

NOTEBOOKS = ['03c_tiled_gemm_cuda']
BASE = "solutions"
ANSWERS = {
    '03c_tiled_gemm_cuda': {
        'gemm_tiled_cuda': 'GEMM_TILED_CUDA = r"""\nextern "C" __global__ void gemm_tiled(int M, int N, int K,\n                                      const float* A, const float* B, float* C)\n{\n    __shared__ float As[TILE][TILE];\n    __shared__ float Bs[TILE][TILE];\n    int tx = threadIdx.x;\n    int ty = threadIdx.y;\n    int row = blockIdx.y * TILE + ty;\n    int col = blockIdx.x * TILE + tx;\n    float acc = 0.0f;\n    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {\n        int ka = t * TILE + tx;  // column of A this thread loads\n        int kb = t * TILE + ty;  // row of B this thread loads\n        As[ty][tx] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;\n        Bs[ty][tx] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;\n        for (int k = 0; k < TILE; ++k) {\n            acc += As[ty][k] * Bs[k][tx];\n        }\n        __syncthreads();  // everyone is done with these tiles\n    }\n    if (row < M && col < N) {\n        C[row * N + col] = acc;\n    }\n}\n"""',
    },
}
EXPECTED = {'03c_tiled_gemm_cuda': 3}
EXPECTED_GPU = {'03c_tiled_gemm_cuda': 3}
