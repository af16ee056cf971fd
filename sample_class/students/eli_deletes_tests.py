"""Eli rounded the tile counts down (partial tiles missing) and deleted the test cell.

The deleted test cell is put back from the gradebook and scores 0.
"""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
ANSWERS = {
    "01_arithmetic_intensity": {
        "ai_gemm_tiled": '''def ai_gemm_tiled(M, N, K, tile, bytes_per_element=4):
    """Tiled GEMM, request model."""
    for name, value in (("M", M), ("N", N), ("K", K), ("tile", tile)):
        if int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer")
    blocks = (M // tile) * (N // tile)
    steps = K // tile
    elements = max(blocks * steps, 1) * 2 * tile * tile + M * N
    return 2 * M * N * K / (elements * bytes_per_element)
''',
    },
}
DELETE = {"01_arithmetic_intensity": ["ai_gemm_tiled_model"]}
EXPECTED = {"01_arithmetic_intensity": 8}
