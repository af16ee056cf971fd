"""Layer 1 (the lowest): where kernels run and the facts about it.

GPU or simulator (``backend``, ``simulator``), the machine and its versions (``environment``),
datasheets and classes of GPU (``devices``, ``gpu_classes``), the grader's GPU lock
(``gpulock``), the course's settings and setup cell (``config``, ``setup_cell``), plain error
messages (``errors``), fresh seeds (``seeds``) and the lazy names of the notebooks' faces
(``exports``). Imports nothing else from ``course``.
"""
