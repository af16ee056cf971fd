"""The student distribution: what a student gets, built from this private repository.

``make publish`` (``python -m autograder.publish``) writes it with
:func:`~autograder.publish.student_tree.build` — the ``course`` package, ``release/week4``,
``release-ko/week4``, the figures the notebooks use, a student README in English and Korean, a
license and a ``pyproject.toml`` that packages ``course`` alone — then builds its wheel, and
publishes nothing unless :mod:`~autograder.publish.leaks` finds no answer in either.
"""
