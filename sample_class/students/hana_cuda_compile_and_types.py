"""Hana's naive kernel in notebook 2c misses a semicolon: NVRTC's log, with the line of her
string, is the verdict of both tests. In notebook 3c she pasted a version that compiles but
declares the sizes as `long`: the course passes np.int32, so at launch it would read garbage.
NVRTC checks the parameter types at compile time; the tiled kernel is right, so only the
speedup (measured on a GPU, against this naive kernel) is lost."""

NOTEBOOKS = ["02c_naive_gemm_cuda", "03c_tiled_gemm_cuda"]
BASE = "solutions"
ANSWERS = {
    "02c_naive_gemm_cuda": {"gemm_naive_cuda": 'GEMM_NAIVE_CUDA = r"""\nextern "C" __global__ void gemm_naive(int M, int N, int K,\n                                      const float* A, const float* B, float* C)\n{\n    int row = blockIdx.y * blockDim.y + threadIdx.y;\n    int col = blockIdx.x * blockDim.x + threadIdx.x;\n    if (row < M && col < N) {\n        float acc = 0.0f;\n        for (int k = 0; k < K; ++k) {\n            acc += A[row * K + k] * B[k * N + col];\n        }\n        C[row * N + col] = acc\n    }\n}\n"""'},
    "03c_tiled_gemm_cuda": {"gemm_naive_cuda_again": 'GEMM_NAIVE_CUDA = r"""\nextern "C" __global__ void gemm_naive(long M, long N, long K,\n                                      const float* A, const float* B, float* C)\n{\n    int row = blockIdx.y * blockDim.y + threadIdx.y;\n    int col = blockIdx.x * blockDim.x + threadIdx.x;\n    if (row < M && col < N) {\n        float acc = 0.0f;\n        for (int k = 0; k < K; ++k) {\n            acc += A[row * K + k] * B[k * N + col];\n        }\n        C[row * N + col] = acc;\n    }\n}\n"""'},
}
EXPECTED = {"02c_naive_gemm_cuda": 0, "03c_tiled_gemm_cuda": 11}
EXPECTED_GPU = {"03c_tiled_gemm_cuda": 11}
