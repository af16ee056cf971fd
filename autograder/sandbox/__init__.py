"""Containing untrusted code: what a sandboxed process sees (``bwrap``), how much it may use
(``limits``), and where the GPU lock lives (``gpulock``)."""
