"""The CUDA C track's machinery: NVRTC (``nvrtc``), the kernels' source (``source``), the CPU
runner (``cpu``), CuPy on a GPU (``gpu``) and GEMM launches (``launch``)."""
