"""The arrays a kernel allocates on Numba's CUDA simulator: shared arrays made atomically and
starting as zeros, per-thread arrays starting as a marked NaN.

The simulator creates a block's ``cuda.shared.array`` when the first thread reaches it,
with a check-then-create that holds no lock. If the simulated threads switch in between, two
threads of one block get *different* arrays, and a correct tiled kernel computes garbage —
rarely, and more often the faster threads switch. A grader cannot let a correct submission
fail by luck, so :func:`make_shared_arrays_atomic` wraps the creation in a lock. It also
creates the array filled with zeros where Numba leaves it as whatever the heap held
(``np.empty``): a kernel that reads an element before any thread stored it (a missing barrier)
then reads 0 in every run. With leftover bytes it sometimes read a freed copy of the checks'
NaN guard around A and B, and the diagnosis blamed a tile load past the end of A or B for a
missing barrier (one run in three, 2026-12-08). :func:`mark_local_arrays` does the same for a
thread's ``cuda.local.array``, with a marked NaN instead of zeros: a kernel that adds to an
accumulator it never set then gets NaN in every run, which the diagnosis tells from other NaN by
its bits (:data:`LOCAL_ARRAY_BITS`). With leftover bytes it got garbage most runs and the
checks' NaN guard in some, and was told a shared-memory element had been read before it was
stored (two runs in ten, 2026-12-08).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

_LOCK = threading.Lock()


def make_shared_arrays_atomic() -> None:
    """Patch the simulator once so all threads of a block always share one array per line."""
    from numba.cuda.simulator import kernelapi

    cls = kernelapi.FakeCUDAShared
    if getattr(cls.array, "_course_atomic", False):
        return
    original = cls.array

    def array(self: Any, shape: Any, dtype: Any, alignment: Any = None) -> Any:
        if shape == 0 or alignment is not None:
            return original(self, shape, dtype, alignment)
        # Keyed by the caller's file and line, as Numba does (one frame up, not a walk of
        # the whole stack with its source lines: that cost ~2 ms a thread).
        frame = sys._getframe(1)
        caller = (frame.f_code.co_filename, frame.f_lineno)
        with _LOCK:
            res = self._allocations.get(caller)
            if res is None:
                import numpy as np
                from numba.core import types
                from numba.np import numpy_support

                if isinstance(dtype, types.Type):
                    dtype = numpy_support.as_dtype(dtype)
                res = np.zeros(shape, dtype)
                self._allocations[caller] = res
            return res

    array._course_atomic = True  # type: ignore[attr-defined]
    cls.array = array


#: The bits of the NaN a float32 ``cuda.local.array`` starts as on the simulator (a float64 one
#: holds the same NaN widened, which narrows back to these bits). Arithmetic on a NaN keeps its
#: bits, so an element of C computed from an element never set holds them.
LOCAL_ARRAY_BITS = 0x7FC0CAFE


def mark_local_arrays() -> None:
    """Patch the simulator once so every float ``cuda.local.array`` starts as the marked NaN of
    :data:`LOCAL_ARRAY_BITS` (other types as zeros) instead of whatever the heap held: what a
    kernel computes from an element it never set is then the same in every run, and says so."""
    import numpy as np
    from numba.cuda.simulator import kernelapi

    cls = kernelapi.FakeCUDALocal
    if getattr(cls.array, "_course_marked", False):
        return
    original = cls.array
    marked = np.array([LOCAL_ARRAY_BITS], np.uint32).view(np.float32)[0]

    def array(self: Any, shape: Any, dtype: Any, alignment: Any = None) -> Any:
        # Numba's checks and dtype rules; Numba's own simulator (Colab's) takes no alignment
        made = original(self, shape, dtype) if alignment is None else \
            original(self, shape, dtype, alignment)
        if made.dtype.kind == "f":
            made.fill(marked)  # float32 → float64 widens a NaN's bits, float16 keeps NaN
        else:
            made.fill(0)
        return made

    array._course_marked = True  # type: ignore[attr-defined]
    cls.array = array
