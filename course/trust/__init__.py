"""Layer 2: what the grader trusts — kernels rebuilt from validated source, elsewhere.

The code policy (``code_policy``, ``policy_rules``), rebuilding definitions from a notebook's
source (``kernel_source``), the grader's view shown in the student's notebook (``gate``), and
starting a fresh process for a task (``runner``). Imports only :mod:`course.runtime`.
"""
