"""Layer 4: measuring and modelling performance — never a grade.

Verified timing (``timing``, ``verify``), the roofline (``roofline``), measured ceilings
(``ceilings``, ``bandwidth``), the write-up's experiment (``experiment``,
``experiment_report``, ``cuda_experiment``), kernel models (``kernel_models``), the tile sweep
(``sweep``, ``sweep_table``) and its widget panel (``widgets``), the counter readings recorded
on a real GPU (``recorded``) and notebook 5's tables of them (``recorded_report``).
"""
