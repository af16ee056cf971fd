"""The CUDA C register-tiling ladder: the instructor's reference kernels for the bonus, in C.

Every rung computes C = A·B (FP32, row-major) with the contract's signature
``(int M, int N, int K, const float* A, const float* B, float* C)``, one change at a time:

=========  =====================================================================================
rung       what changes
=========  =====================================================================================
rt64       64×64 of C per block of 16×16 threads, BK 8, each thread 4×4 from registers
rt128      128×128 per block of 256 threads, 8×8 per thread; float4 global loads; the A tile
           stored transposed in shared memory so that a thread's 8 values of A are two float4
rt128wdb   + warp tiling (each warp owns 64×32 of C; a lane's 8×8 is four 4×4 pieces 32 rows and
           16 columns apart, so shared-memory reads are conflict-free float4), BK 16, and
           double buffering (the next tiles are loaded into registers while this one is used,
           then stored into the other half of shared memory: one barrier per step)
=========  =====================================================================================

They assume M and N are multiples of the block tile (64 or 128) and K of BK: this is a
performance ladder, not an answer to the ragged-shape tests. Each one runs on the course's CPU
runner in CI (tests/test_cudac_ladder.py: right results, no race) and on a GPU in
scripts/gpu/cudac.py, against cuBLAS at 4096³.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rung:
    """One kernel of the ladder and how it is launched."""

    name: str
    source: str
    block_m: int  # rows of C per block
    block_n: int  # columns of C per block
    block_k: int  # step along K
    threads: tuple[int, int]

    def grid(self, M: int, N: int) -> tuple[int, int]:
        return (N // self.block_n, M // self.block_m)

    def fits(self, M: int, N: int, K: int) -> bool:
        return M % self.block_m == 0 and N % self.block_n == 0 and K % self.block_k == 0


RT64 = r"""
#define BM 64
#define BN 64
#define BK 8
extern "C" __global__ void __launch_bounds__(256)
gemm_rt64(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
          float* __restrict__ C)
{
    __shared__ float As[BK][BM];   // A tile, transposed: As[k][m]
    __shared__ float Bs[BK][BN];
    int tx = threadIdx.x, ty = threadIdx.y;       // 16 × 16
    int t = ty * 16 + tx;
    int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    float acc[4][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = t; i < BM * BK; i += 256) {  // 2 elements of A and 2 of B per thread
            int m = i / BK, k = i % BK;
            As[k][m] = A[(bm + m) * K + k0 + k];
            int kb = i / BN, n = i % BN;
            Bs[kb][n] = B[(k0 + kb) * N + bn + n];
        }
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[4], b[4];
            #pragma unroll
            for (int i = 0; i < 4; ++i) {
                a[i] = As[k][ty + 16 * i];
                b[i] = Bs[k][tx + 16 * i];
            }
            #pragma unroll
            for (int i = 0; i < 4; ++i)
                #pragma unroll
                for (int j = 0; j < 4; ++j)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < 4; ++i)
        #pragma unroll
        for (int j = 0; j < 4; ++j)
            C[(bm + ty + 16 * i) * N + bn + tx + 16 * j] = acc[i][j];
}
"""

RT128 = r"""
#define BM 128
#define BN 128
#define BK 8
#define PAD 4
extern "C" __global__ void __launch_bounds__(256, 2)
gemm_rt128(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
           float* __restrict__ C)
{
    __shared__ __align__(16) float As[BK][BM + PAD];   // transposed: As[k][m]
    __shared__ __align__(16) float Bs[BK][BN];
    int t = threadIdx.x;                                // 256 threads
    int tr = t / 16, tc = t % 16;                       // rows tr*8.., columns tc*8..
    int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    int a_row = t / 2, a_k = (t % 2) * 4;               // one float4 of A per thread
    int b_k = t / 32, b_n = (t % 32) * 4;               // one float4 of B per thread
    float acc[8][8] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        float4 va = *reinterpret_cast<const float4*>(&A[(bm + a_row) * K + k0 + a_k]);
        As[a_k + 0][a_row] = va.x;
        As[a_k + 1][a_row] = va.y;
        As[a_k + 2][a_row] = va.z;
        As[a_k + 3][a_row] = va.w;
        *reinterpret_cast<float4*>(&Bs[b_k][b_n]) =
            *reinterpret_cast<const float4*>(&B[(k0 + b_k) * N + bn + b_n]);
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < BK; ++k) {
            float4 a0 = *reinterpret_cast<const float4*>(&As[k][tr * 8]);
            float4 a1 = *reinterpret_cast<const float4*>(&As[k][tr * 8 + 4]);
            float4 b0 = *reinterpret_cast<const float4*>(&Bs[k][tc * 8]);
            float4 b1 = *reinterpret_cast<const float4*>(&Bs[k][tc * 8 + 4]);
            float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
            #pragma unroll
            for (int i = 0; i < 8; ++i)
                #pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        float* row = &C[(bm + tr * 8 + i) * N + bn + tc * 8];
        *reinterpret_cast<float4*>(row) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        *reinterpret_cast<float4*>(row + 4) =
            make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
}
"""

RT128WDB = r"""
#define BM 128
#define BN 128
#define BK 16
#define PAD 4
#define WM 64   // rows of C per warp
#define WN 32   // columns of C per warp
extern "C" __global__ void __launch_bounds__(256, 2)
gemm_rt128wdb(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
              float* __restrict__ C)
{
    __shared__ __align__(16) float As[2][BK][BM + PAD];  // two stages, A transposed
    __shared__ __align__(16) float Bs[2][BK][BN];
    int t = threadIdx.x;
    int warp = t / 32, lane = t % 32;
    int wm = (warp / 4) * WM, wn = (warp % 4) * WN;      // 2 × 4 warps
    int lr = (lane / 4) * 4, lc = (lane % 4) * 4;        // a lane's 4×4 pieces inside the warp
    // loads: the A tile (128×16) and the B tile (16×128) are 512 float4 each; this thread
    // loads rows a_row and a_row + 64 of A's tile, rows b_k and b_k + 8 of B's
    int a_row = t / 4, a_k = (t % 4) * 4;
    int b_k = t / 32, b_n = (t % 32) * 4;
    const float* pa = A + (blockIdx.y * BM + a_row) * K + a_k;
    const float* pb = B + b_k * N + blockIdx.x * BN + b_n;
    float4 ra0 = *reinterpret_cast<const float4*>(pa);
    float4 ra1 = *reinterpret_cast<const float4*>(pa + 64 * K);
    float4 rb0 = *reinterpret_cast<const float4*>(pb);
    float4 rb1 = *reinterpret_cast<const float4*>(pb + 8 * N);
    As[0][a_k + 0][a_row] = ra0.x; As[0][a_k + 1][a_row] = ra0.y;
    As[0][a_k + 2][a_row] = ra0.z; As[0][a_k + 3][a_row] = ra0.w;
    As[0][a_k + 0][a_row + 64] = ra1.x; As[0][a_k + 1][a_row + 64] = ra1.y;
    As[0][a_k + 2][a_row + 64] = ra1.z; As[0][a_k + 3][a_row + 64] = ra1.w;
    *reinterpret_cast<float4*>(&Bs[0][b_k][b_n]) = rb0;
    *reinterpret_cast<float4*>(&Bs[0][b_k + 8][b_n]) = rb1;
    __syncthreads();
    float acc[8][8] = {};
    int steps = K / BK;
    for (int s = 0; s < steps; ++s) {
        int cur = s & 1;
        bool more = s + 1 < steps;
        if (more) {                                       // fetch the next tiles early
            pa += BK;
            pb += BK * N;
            ra0 = *reinterpret_cast<const float4*>(pa);
            ra1 = *reinterpret_cast<const float4*>(pa + 64 * K);
            rb0 = *reinterpret_cast<const float4*>(pb);
            rb1 = *reinterpret_cast<const float4*>(pb + 8 * N);
        }
        #pragma unroll
        for (int k = 0; k < BK; ++k) {
            float4 a0 = *reinterpret_cast<const float4*>(&As[cur][k][wm + lr]);
            float4 a1 = *reinterpret_cast<const float4*>(&As[cur][k][wm + 32 + lr]);
            float4 b0 = *reinterpret_cast<const float4*>(&Bs[cur][k][wn + lc]);
            float4 b1 = *reinterpret_cast<const float4*>(&Bs[cur][k][wn + 16 + lc]);
            float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
            #pragma unroll
            for (int i = 0; i < 8; ++i)
                #pragma unroll
                for (int j = 0; j < 8; ++j)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (more) {                                       // the other stage: nobody reads it now
            int nxt = cur ^ 1;
            As[nxt][a_k + 0][a_row] = ra0.x; As[nxt][a_k + 1][a_row] = ra0.y;
            As[nxt][a_k + 2][a_row] = ra0.z; As[nxt][a_k + 3][a_row] = ra0.w;
            As[nxt][a_k + 0][a_row + 64] = ra1.x; As[nxt][a_k + 1][a_row + 64] = ra1.y;
            As[nxt][a_k + 2][a_row + 64] = ra1.z; As[nxt][a_k + 3][a_row + 64] = ra1.w;
            *reinterpret_cast<float4*>(&Bs[nxt][b_k][b_n]) = rb0;
            *reinterpret_cast<float4*>(&Bs[nxt][b_k + 8][b_n]) = rb1;
        }
        __syncthreads();
    }
    float* out = C + (blockIdx.y * BM + wm) * N + blockIdx.x * BN + wn;
    #pragma unroll
    for (int i = 0; i < 8; ++i) {
        float* row = out + (i < 4 ? lr + i : 32 + lr + i - 4) * N;
        *reinterpret_cast<float4*>(row + lc) =
            make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        *reinterpret_cast<float4*>(row + 16 + lc) =
            make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
}
"""

RUNGS = (
    Rung("gemm_rt64", RT64, 64, 64, 8, (16, 16)),
    Rung("gemm_rt128", RT128, 128, 128, 8, (256, 1)),
    Rung("gemm_rt128wdb", RT128WDB, 128, 128, 16, (256, 1)),
)
