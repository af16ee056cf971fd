"""Layer 3: the GEMM machinery — launching kernels, their operands, and what they read.

Launch shapes (``launch``), inputs, guards and the diagnosis of a wrong C (``operands``),
counting reads on the simulator (``instrument``, ``inspection``), the read model (``reads``),
the occupancy model (``occupancy``), the streaming kernels of notebook 05 (``stream_kernels``)
and the CUDA C track's compiler and runners (``cudac``).
"""
