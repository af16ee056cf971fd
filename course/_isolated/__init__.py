"""The fresh process's side of :mod:`course.trust.runner`: ``python -m course._isolated``.

Private: nothing in ``course`` imports this package; the runner starts it by name.
"""
