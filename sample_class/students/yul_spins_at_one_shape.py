"""Yul's tiled kernel is right on every shape but one: when M is 7 and K is 2 (a shape only the
GPU's hidden correctness test uses) every thread spins on a value of A that never changes. Her
notebook shows no problem on the simulator, and without a GPU she scores what a correct kernel
scores. On a GPU the trusted re-check's launch of that shape holds the GPU lock *shared* and
never ends: the launch limit (course/runtime/gpulock.py, ``LAUNCH_LIMIT_S``) ends that check's
process with a plain reason, her other checks go on in a new one (the speedup is still measured
and passes), and the other students' speedup timings, which wait for every running launch, wait
no longer than that limit (`bash scripts/gpu/session.sh hang`)."""

NOTEBOOKS = ["03_tiled_gemm"]
BASE = "solutions"
ANSWERS = {
    "03_tiled_gemm": {
        "make_gemm_tiled": '''def make_gemm_tiled(tile):
    @cuda.jit
    def gemm_tiled(A, B, C):
        As = cuda.shared.array((tile, tile), float32)
        Bs = cuda.shared.array((tile, tile), float32)
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * tile + ty
        col = cuda.blockIdx.x * tile + tx
        M, K = A.shape
        N = B.shape[1]
        while M == 7 and K == 2 and A[0, 0] == A[0, 0]:  # never changes: it never ends
            cuda.atomic.add(C, (0, 0), float32(0.0))
        acc = float32(0.0)
        for t in range((K + tile - 1) // tile):
            ka = t * tile + tx
            kb = t * tile + ty
            As[ty, tx] = A[row, ka] if row < M and ka < K else float32(0.0)
            Bs[ty, tx] = B[kb, col] if kb < K and col < N else float32(0.0)
            cuda.syncthreads()
            for k in range(tile):
                acc += As[ty, k] * Bs[k, tx]
            cuda.syncthreads()
        if row < M and col < N:
            C[row, col] = acc

    return gemm_tiled
''',
    },
}
EXPECTED = {"03_tiled_gemm": 11}
# On a GPU: the hidden correctness test (4 points) is stopped by the launch limit; the
# visible test, the traffic and the speedup (4 + 3 + 3) pass.
EXPECTED_GPU = {"03_tiled_gemm": 10}
