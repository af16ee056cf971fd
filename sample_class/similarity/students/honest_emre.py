"""Emre did both tracks himself: 1-D thread indices, a device helper, float64 accumulators."""

NOTEBOOKS = ["02_naive_gemm", "02c_naive_gemm_cuda", "03_tiled_gemm", "03c_tiled_gemm_cuda"]
BASE = "release"
ANSWERS = {
    "02_naive_gemm": {
        "gemm_naive": '''@cuda.jit
def gemm_naive(A, B, C):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    in_range = row < C.shape[0] and col < C.shape[1]
    if in_range:
        C[row, col] = dot_row_col(A, B, row, col)


@cuda.jit(device=True)
def dot_row_col(A, B, r, c):
    s = float32(0)
    for t in range(B.shape[0]):
        s = cuda.fma(A[r, t], B[t, c], s)
    return s
''',
        "swapped_kernel": '''@cuda.jit
def gemm_naive_swapped(A, B, C):
    row = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    col = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    in_range = row < C.shape[0] and col < C.shape[1]
    if in_range:
        C[row, col] = dot_row_col(A, B, row, col)
''',
    },
    "02c_naive_gemm_cuda": {
        "gemm_naive_cuda": '''GEMM_NAIVE_CUDA = r"""
__device__ float row_dot_col(const float* A, const float* B, int row, int col, int N, int K)
{
    float s = 0.0f;
    for (int t = 0; t < K; ++t)
        s = fmaf(A[row * K + t], B[t * N + col], s);
    return s;
}

extern "C" __global__ void gemm_naive(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    int idx = (blockIdx.y * blockDim.y + threadIdx.y) * N + blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    bool inside = (row < M) && (col < N);
    if (inside)
        C[idx] = row_dot_col(A, B, row, col, N, K);
}
"""
''',
    },
    "03_tiled_gemm": {
        "gemm_naive_again": '''@cuda.jit
def gemm_naive(A, B, C):
    col = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    row = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y
    if row < C.shape[0] and col < C.shape[1]:
        s = float32(0)
        for t in range(B.shape[0]):
            s = cuda.fma(A[row, t], B[t, col], s)
        C[row, col] = s
''',
        "make_gemm_tiled": '''def make_gemm_tiled(tile):
    n_sh = tile * tile

    @cuda.jit
    def gemm_tiled(A, B, C):
        a_sh = cuda.shared.array(n_sh, float32)
        b_sh = cuda.shared.array(n_sh, float32)
        tid = cuda.threadIdx.y * tile + cuda.threadIdx.x
        col = cuda.blockIdx.x * tile + cuda.threadIdx.x
        row = cuda.blockIdx.y * tile + cuda.threadIdx.y
        s = float32(0)
        for k0 in range(0, B.shape[0], tile):
            ac = k0 + cuda.threadIdx.x
            br = k0 + cuda.threadIdx.y
            a_sh[tid] = A[row, ac] if row < A.shape[0] and ac < A.shape[1] else float32(0)
            b_sh[tid] = B[br, col] if br < B.shape[0] and col < B.shape[1] else float32(0)
            cuda.syncthreads()
            for t in range(tile):
                s = cuda.fma(a_sh[cuda.threadIdx.y * tile + t], b_sh[t * tile + cuda.threadIdx.x], s)
            cuda.syncthreads()
        if row < C.shape[0] and col < C.shape[1]:
            C[row, col] = s

    return gemm_tiled
''',
    },
    "03c_tiled_gemm_cuda": {
        "gemm_naive_cuda_again": '''GEMM_NAIVE_CUDA = r"""
extern "C" __global__ void gemm_naive(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if ((row < M) && (col < N)) {
        float s = 0.0f;
        for (int t = 0; t < K; ++t)
            s = fmaf(A[row * K + t], B[t * N + col], s);
        C[row * N + col] = s;
    }
}
"""
''',
        "gemm_tiled_cuda": '''GEMM_TILED_CUDA = r"""
extern "C" __global__ void gemm_tiled(int M, int N, int K,
                                      const float* A, const float* B, float* C)
{
    __shared__ float a_sh[TILE * TILE], b_sh[TILE * TILE];
    int tid = threadIdx.y * TILE + threadIdx.x;
    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float s = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int ac = k0 + threadIdx.x, br = k0 + threadIdx.y;
        a_sh[tid] = (row < M && ac < K) ? A[row * K + ac] : 0.0f;
        b_sh[tid] = (br < K && col < N) ? B[br * N + col] : 0.0f;
        __syncthreads();
        for (int t = 0; t < TILE; ++t)
            s = fmaf(a_sh[threadIdx.y * TILE + t], b_sh[t * TILE + threadIdx.x], s);
        __syncthreads();
    }
    if ((row < M) && (col < N))
        C[row * N + col] = s;
}
"""
''',
    },
}
