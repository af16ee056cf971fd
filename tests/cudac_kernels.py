"""CUDA C kernels for the tests of the CUDA C track: right ones, and one per named mistake."""

NAIVE = r"""
extern "C" __global__ void gemm_naive(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
"""

#: correct, with a debugging printf in every thread (issue 32): every launch at 2048³ crawls
NAIVE_PRINTF = NAIVE.replace("C[row * N + col] = acc;",
                             'printf("row %d col %d acc %f\\n", row, col, acc);\n'
                             "        C[row * N + col] = acc;")
#: printf only in a comment and a string: it prints nothing
NAIVE_PRINTF_IN_COMMENT = NAIVE.replace("C[row * N + col] = acc;",
                                        '// printf("acc %f", acc);\n'
                                        '        const char* s = "printf(acc)"; (void)s;\n'
                                        "        C[row * N + col] = acc;")
#: no bounds test: threads of the last partial block read and write outside the arrays
NAIVE_NO_BOUNDS = NAIVE.replace("if (row < M && col < N) {", "{")
#: stores C[col, row]: the transpose of the product (for square shapes)
NAIVE_TRANSPOSED = NAIVE.replace("C[row * N + col] = acc;", "C[col * M + row] = acc;")
NAIVE_LONG_SIZES = NAIVE.replace("int M, int N, int K", "long M, long N, long K")
NAIVE_NO_EXTERN_C = NAIVE.replace('extern "C" ', "")
NAIVE_SYNTAX_ERROR = NAIVE.replace("C[row * N + col] = acc;", "C[row * N + col] = acc")

TILED = r"""
extern "C" __global__ void gemm_tiled(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        int ka = t * TILE + tx;
        int kb = t * TILE + ty;
        As[ty][tx] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
        Bs[ty][tx] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = acc;
}
"""

TILED_NO_FIRST_BARRIER = TILED.replace(
    "__syncthreads();\n        for (int k", "\n        for (int k", 1)
TILED_NO_SECOND_BARRIER = TILED.replace(
    "acc += As[ty][k] * Bs[k][tx];\n        __syncthreads();",
    "acc += As[ty][k] * Bs[k][tx];\n")
#: "tiled", but the multiply loop reads A and B from global memory: right values, naive traffic
TILED_GLOBAL_INNER_LOOP = TILED.replace(
    "acc += As[ty][k] * Bs[k][tx];",
    "if (row < M && col < N && t * TILE + k < K)\n"
    "                acc += A[row * K + t * TILE + k] * B[(t * TILE + k) * N + col];")
#: K // TILE steps and no zero padding (the SYCL write-up's assumption)
TILED_MULTIPLES_ONLY = TILED.replace("(K + TILE - 1) / TILE", "K / TILE").replace(
    "(row < M && ka < K) ? A[row * K + ka] : 0.0f", "A[row * K + ka]").replace(
    "(kb < K && col < N) ? B[kb * N + col] : 0.0f", "B[kb * N + col]").replace(
    "if (row < M && col < N)\n        C", "C")
#: returns early: the threads past the edge never reach the barriers
TILED_EARLY_RETURN = TILED.replace("float acc = 0.0f;",
                                   "if (row >= M || col >= N) return;\n    float acc = 0.0f;")
#: right on every small shape the correctness checks use, and does nothing at the timed size
TILED_LAZY_AT_LARGE_K = TILED.replace("float acc = 0.0f;",
                                      "if (K >= 1000) return;\n    float acc = 0.0f;")
