"""Sol did the CUDA C track, and both kernels are right, but the naive one still prints a
debugging line in every thread — ``printf("row %d col %d acc %f\\n", row, col, acc);`` — in
notebook 2c and in the copy pasted into notebook 3c: issue 32's student, who lost the speedup to
"your naive kernel did not finish its 23 launches … Does it loop forever …?". Now NVRTC's PTX
shows the ``printf`` (a call of ``vprintf``), her naive kernel is not timed, and the speedup
check times her tiled kernel against the course's reference naive kernel with a note that says
so and why. She scores what the solution scores (bea_cuda_correct), on a GPU and without one."""

NOTEBOOKS = ["02c_naive_gemm_cuda", "03c_tiled_gemm_cuda"]
BASE = "solutions"
_NAIVE = '''GEMM_NAIVE_CUDA = r"""
extern "C" __global__ void gemm_naive(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) {
            acc += A[row * K + k] * B[k * N + col];
        }
        printf("row %d col %d acc %f\\n", row, col, acc);
        C[row * N + col] = acc;
    }
}
"""'''
ANSWERS = {"02c_naive_gemm_cuda": {"gemm_naive_cuda": _NAIVE},
           "03c_tiled_gemm_cuda": {"gemm_naive_cuda_again": _NAIVE}}
EXPECTED = {"02c_naive_gemm_cuda": 6, "03c_tiled_gemm_cuda": 11}
EXPECTED_GPU = {"03c_tiled_gemm_cuda": 14}
