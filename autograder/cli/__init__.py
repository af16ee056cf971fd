"""The instructor's commands: the top of the grader (``python -m autograder``)."""
