"""The CUDA C track: kernels written as CUDA C strings, launched through CuPy's RawKernel.

Layers, imports pointing down: ``checks`` and ``speedup`` (what notebooks call) → ``launch``
(the contract's shapes and arguments) → ``gpu`` (CuPy) and ``cpu`` (the course's CPU runner)
→ ``source`` (what the course adds to a student's text, NVRTC's verdict) → ``nvrtc``.
docs/cuda-c-track.md explains the design and the measurements behind it.
"""
