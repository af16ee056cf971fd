"""Iris works on the Korean release and copied Dara's notebooks 1, 2c and 3c: names changed,
``while`` made ``for``, the tiles' ``if/else`` loads made conditional expressions, the TILE
macro renamed, comments in Korean instead, ``0`` written ``0.0f``."""

LANGUAGE = "ko"
NOTEBOOKS = ["01_arithmetic_intensity", "02c_naive_gemm_cuda", "03c_tiled_gemm_cuda"]
BASE = "release"
COPIED = {nb: "honest_dara" for nb in NOTEBOOKS}
_NAIVE = '''GEMM_NAIVE_CUDA = r"""
extern "C" __global__ void gemm_naive(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    int c = threadIdx.x + blockDim.x * blockIdx.x;   // 열
    int r = threadIdx.y + blockDim.y * blockIdx.y;   // 행
    if (r < M) {
        if (c < N) {
            float acc = 0.0f;
            for (int t = 0; t < K; t++) {
                acc = acc + A[r * K + t] * B[t * N + c];
            }
            C[r * N + c] = acc;
        }
    }
}
"""
'''
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_vector_add": '''def ai_vector_add(n, bytes_per_element=4):
    check(n=n, bytes_per_element=bytes_per_element)
    return n / (3.0 * n * bytes_per_element)


def check(bytes_per_element, **sizes):
    for key, v in sizes.items():
        if isinstance(v, bool) or v < 1 or v % 1:
            raise ValueError(key + " must be a positive integer; it is " + repr(v))
    if bytes_per_element <= 0:
        raise ValueError("bytes_per_element must be positive; it is " + repr(bytes_per_element))
''',
        "ai_matmul": '''def ai_matmul(M, N, K, bytes_per_element=4):
    check(M=M, N=N, K=K, bytes_per_element=bytes_per_element)
    f = 2.0 * M * N * K
    return f / (bytes_per_element * (M * K + K * N + M * N))
''',
        "ai_gemm_naive": '''def ai_gemm_naive(M, N, K, bytes_per_element=4):
    check(M=M, N=N, K=K, bytes_per_element=bytes_per_element)
    f = 2.0 * M * N * K
    return f / (bytes_per_element * M * N * (2 * K + 1))
''',
        "ai_gemm_tiled": '''def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):
    check(M=M, N=N, K=K, tile=tile, bytes_per_element=bytes_per_element)
    ceil_div = lambda x, y: (x + y - 1) // y
    loaded = 2 * ceil_div(M, tile) * ceil_div(N, tile) * ceil_div(K, tile)
    f = 2.0 * M * N * K
    return f / (bytes_per_element * (loaded * tile * tile + M * N))
''',
    },
    "02c_naive_gemm_cuda": {"gemm_naive_cuda": _NAIVE},
    "03c_tiled_gemm_cuda": {
        "gemm_naive_cuda_again": _NAIVE,
        "gemm_tiled_cuda": '''GEMM_TILED_CUDA = r"""
#define T TILE
extern "C" __global__ void gemm_tiled(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    __shared__ float sa[T][T + 1];   // 뱅크 충돌 방지
    __shared__ float sb[T][T + 1];
    int c = threadIdx.x + T * blockIdx.x;
    int r = threadIdx.y + T * blockIdx.y;
    int tiles = K / T + (K % T != 0);
    float acc = 0.0f;
    for (int q = 0; q < tiles; q++) {
        int bRow = q * T + threadIdx.y;
        int aCol = q * T + threadIdx.x;
        sa[threadIdx.y][threadIdx.x] = (r < M && aCol < K) ? A[r * K + aCol] : 0.0f;
        sb[threadIdx.y][threadIdx.x] = (bRow < K && c < N) ? B[bRow * N + c] : 0.0f;
        __syncthreads();
        for (int p = 0; p < T; p++) {
            acc = acc + sa[threadIdx.y][p] * sb[p][threadIdx.x];
        }
        __syncthreads();
    }
    if (r < M && c < N) {
        C[r * N + c] = acc;
    }
}
"""
''',
    },
}
