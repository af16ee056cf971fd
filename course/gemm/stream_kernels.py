"""The course's own streaming kernel: a copy, the reference for the student's vector add.

Kept in a module of its own so that numba is imported only when a measurement needs it, and
so that the kernel sees ``cuda`` as a module global (the simulator swaps in its fake ``cuda``
module through the kernel's globals, not through closures).
"""

from numba import cuda

import course  # noqa: F401  (chooses GPU or simulator before the kernel is compiled)


@cuda.jit
def copy_kernel(src, dst):  # noqa: ANN001, ANN201 - a CUDA kernel
    """dst[i] = src[i] in a grid-stride loop: vector add's code and launch, one read fewer."""
    for i in range(cuda.grid(1), dst.size, cuda.gridsize(1)):
        dst[i] = src[i]
