"""Layer 5: the graded checks, and the face test cells import (``from course.checks import …``).

The checks live in this package's modules: numeric answers (``answers``) and notebooks 01's and
05's formulas against named mistakes (``intensity_answers``, ``roofline_answers``; notebook
05's intensities per memory level and bounding level: ``level_answers``), the GEMM
kernels (``gemm``; CUDA C: ``cuda_gemm``), memory traffic (``traffic``), the speedup
(``speedup``, ``cuda_speedup``), notebook 05's vector add (``vector_add``), notebook 06's
occupancy predictions (``occupancy``) and the bonus (``bonus``).

This package's own names are every name a test cell uses, listed in ``__init__.pyi`` and
imported on first use (:func:`course.runtime.exports.attach_stub`): a test cell of notebook 01
loads the intensity checks alone, not the GEMM machinery, CuPy or matplotlib.
"""

from course.runtime.exports import attach_stub

__getattr__, __dir__, __all__ = attach_stub(__name__, __file__)
