"""Cas did the CUDA C track and solved it, then deleted the first test cell of notebooks 2c
and 3c (right after a markdown cell) and rewrote another. The tests are put back from the
release and the gradebook: the marks of a correct CUDA C submission, and the grade table says
which cells were added back."""

NOTEBOOKS = ["02c_naive_gemm_cuda", "03c_tiled_gemm_cuda"]
BASE = "solutions"
DELETE = {
    "02c_naive_gemm_cuda": ["naive_gemm_cuda_visible"],
    "03c_tiled_gemm_cuda": ["tiled_gemm_cuda_correct_visible"],
}
EDIT_TESTS = {
    "02c_naive_gemm_cuda": {"naive_gemm_cuda_hidden": 'print("looks fine")\n'},
    "03c_tiled_gemm_cuda": {"tiled_gemm_cuda_traffic": "pass\n"},
}
EXPECTED = {"02c_naive_gemm_cuda": 6, "03c_tiled_gemm_cuda": 11}
EXPECTED_GPU = {"03c_tiled_gemm_cuda": 14}
