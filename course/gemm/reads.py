"""How many elements of A and B a GEMM kernel reads from global memory: the model.

The model (the same one ``ai_gemm_tiled`` turns into bytes): each of ceil(M/T)·ceil(N/T)
blocks loads, for each of ceil(K/T) steps along K, one T×T tile of A and one of B — whole
tiles, padding included. The graded comparison with a counted run is
:mod:`course.checks.traffic`.
"""

from __future__ import annotations

import math


def naive_reads(M: int, N: int, K: int) -> int:
    """Elements of A and B the naive kernel reads: K of each per output element."""
    return 2 * M * N * K


def tiled_reads(M: int, N: int, K: int, tile: int) -> int:
    """Elements of A and B the tiled kernel loads, whole tiles, padding included."""
    blocks = math.ceil(M / tile) * math.ceil(N / tile)
    return blocks * math.ceil(K / tile) * 2 * tile * tile
