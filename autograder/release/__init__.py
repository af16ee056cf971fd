"""The student's release: its generated parts (``generated``) and its translated editions
(``translation``)."""
