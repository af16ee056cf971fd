"""Helpers for week 4 of the GPU course: arithmetic intensity, the roofline, tiled GEMM.

Students write kernels and small formulas; ``course`` launches, checks, counts and times them.
Import ``course`` before ``numba``: with no GPU it switches Numba to its CUDA simulator so
that kernels still run (see :mod:`course.runtime.backend`).

Notebooks import this package (the setup cell), :mod:`course.checks` (test cells) and
:mod:`course.tools` (every other cell), nothing else; docs/architecture.md has the layers behind.
"""

import os as _os

from course.runtime import backend as _backend
from course.runtime import tracebacks as _tracebacks

# Numba warns on stderr when a test launches a small grid. The warning teaches nothing here,
# and under nbgrader any stderr output zeroes a test cell, so it is off unless asked for.
_os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")
_backend.choose_numba_target()
if _backend.simulator_requested():
    # Numba's simulator can give two threads of a block different shared arrays, and knows the
    # kernel API only as `cuda.x` after `from numba import cuda`: grading cannot let a correct
    # kernel fail by luck or by spelling, nor a wrong one read leftover memory and be told a
    # different cause each run (see course/runtime/simulator.py and sim_arrays.py).
    from course.runtime.sim_arrays import make_shared_arrays_atomic as _atomic
    from course.runtime.sim_arrays import mark_local_arrays as _mark_locals
    from course.runtime.simulator import expose_kernel_api as _expose
    from course.runtime.simulator import quick_thread_switches as _quick
    from course.runtime.simulator import run_blocks_as_greenlets as _greenlets

    _atomic()
    _mark_locals()
    _expose()
    if not _greenlets():  # greenlet missing: Numba's threads, handing over sooner
        _quick()

# In a notebook: a failing cell shows the student's message, not the course's frames.
_tracebacks.install()

__version__ = "0.1.0"
