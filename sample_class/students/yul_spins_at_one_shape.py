"""Yul's tiled kernel is right on every shape but one: when M is 7 and K is 2 (a shape only the
GPU's hidden correctness test uses) every thread spins on a value of A that never changes. Her
notebook shows no problem on the simulator, and without a GPU she scores what a correct kernel
scores. On a GPU the trusted re-check's launch of that shape holds the GPU lock *shared* and
never ends: the launch limit (course/runtime/gpulock.py, ``LAUNCH_LIMIT_S``) ends that check's
process with a plain reason, her other checks go on in a new one (the speedup is still measured
and passes), and the other students' speedup timings, which wait for every running launch, wait
no longer than that limit (`bash scripts/gpu/session.sh hang`)."""

from sample_class.students import yan_spins_at_large_k as _yan

NOTEBOOKS = ["03_tiled_gemm"]
BASE = "solutions"
# Yan's kernel, spinning at one small shape instead of at the timed size.
_YAN_SPINS = "while K >= 1000 and A[0, 0] == A[0, 0]:"
_KERNEL = _yan.ANSWERS["03_tiled_gemm"]["make_gemm_tiled"]
assert _KERNEL.count(_YAN_SPINS) == 1, "yan's kernel changed: update yul's"
ANSWERS = {
    "03_tiled_gemm": {
        "make_gemm_tiled": _KERNEL.replace(_YAN_SPINS,
                                           "while M == 7 and K == 2 and A[0, 0] == A[0, 0]:"),
    },
}
EXPECTED = {"03_tiled_gemm": 11}
# On a GPU: the hidden correctness test (4 points) is stopped by the launch limit; the
# visible test, the traffic and the speedup (4 + 3 + 3) pass.
EXPECTED_GPU = {"03_tiled_gemm": 10}
