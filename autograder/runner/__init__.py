"""The bottom of the grader: the course's names in nbgrader, and running nbgrader — one command
(``nbgrader_cli``) or a long-lived autograde (``worker``)."""
