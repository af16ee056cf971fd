"""How submissions reach the grader: an LMS zip, renamed files, the folder nbgrader grades.

* :mod:`.recognise` — which release notebook a file is (its name, a copy's name, its cells);
* :mod:`.tidy` — ``submitted/`` under the names nbgrader grades, before every ``make grade``;
* :mod:`.lms` — ``nbgrader zip_collect`` plugins for Canvas and Moodle downloads;
* :mod:`.collect` — ``make collect ZIP=…``;
* :mod:`.report` — ``collection.csv``, the summary and the grade table's notes;
* :mod:`.failure` — a failed grading run said in words.
"""
