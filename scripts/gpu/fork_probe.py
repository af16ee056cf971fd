"""What a GPU check's fork server may do before it forks (course/trust/forking.py), on a GPU.

The server must not have the CUDA driver library mapped when it forks. This imports what the
trusted re-check imports (told, as it is, that the GPUs are counted), then the checks' entry
point, then warms Numba's compiler (its typing context, then a kernel compiled to PTX, which
needs NVVM) and prints, after each step, its CPU seconds and whether libcuda is mapped.

    COURSE_NO_SIMULATOR=1 python3 scripts/gpu/fork_probe.py
"""

from __future__ import annotations

import os
import resource
import threading
import time


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    os.environ.setdefault("COURSE_NO_SIMULATOR", "1")
    last, start = _cpu(), time.monotonic()

    def step(name: str) -> None:
        nonlocal last
        from course.trust import forking

        now = _cpu()
        print(f"{name:<40} {now - last:5.2f} CPU-s  libcuda mapped: "
              f"{forking.cuda_library_loaded()}  threads: {threading.active_count()}",
              flush=True)
        last = now

    import course.checks.speedup  # noqa: F401
    import course.trust.kernel_source  # noqa: F401

    step("the trusted re-check's imports")
    import course._isolated.__main__  # noqa: F401

    step("the checks' entry point")
    from numba.cuda.descriptor import cuda_target

    cuda_target.typing_context.refresh()  # imports numba.cuda.debuginfo: asks libcudart
    step("Numba's CUDA typing context")
    from numba import cuda, float32

    def scale(x, a):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = x[i] * a

    cuda.compile_ptx(scale, (float32[:], float32), cc=(8, 0))
    step("a kernel compiled to PTX (NVVM)")
    cuda.compile_ptx(scale, (float32[:], float32), cc=(8, 0))
    step("the same, a second time")
    print(f"wall {time.monotonic() - start:.1f} s")


if __name__ == "__main__":
    main()
