"""Layer 6: reading the student's other notebooks — definitions (``reuse``) and the kernels of
whichever track the student did (``tracks``)."""
