"""The CUDA C track's notebook paths (``course.cudac.checks``, ``.speedup``, ``.source``,
``.launch``), kept as re-exports. The code lives in the layers: :mod:`course.gemm.cudac`
(NVRTC, source, CPU runner, CuPy, launches), :mod:`course.perf.cuda_experiment` and
:mod:`course.checks` (``cuda_gemm``, ``cuda_speedup``). docs/cuda-c-track.md explains the
design and the measurements behind it.
"""
