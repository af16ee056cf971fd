"""The class at a glance (``python -m autograder report``): what the class got wrong, how its
kernels ran, and how grading went, in ``report/index.html``; docs/report.md."""
