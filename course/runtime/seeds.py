"""Fresh random seeds for the checks: one spelling for "a seed nobody can predict".

Every check draws new inputs each run (a kernel cannot be fitted to fixed data); a test passes
``seed=`` to make a run repeatable.
"""

from __future__ import annotations

import os

import numpy as np


def fresh_seed() -> int:
    """A 32-bit seed from the operating system's randomness."""
    return int.from_bytes(os.urandom(4))


def generator(seed: int | None = None) -> np.random.Generator:
    """NumPy's generator seeded with ``seed``, or with a fresh seed when it is None."""
    return np.random.default_rng(fresh_seed() if seed is None else seed)
