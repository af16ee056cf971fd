"""Copied answers across a class: a similarity report for the instructor to read, never a grade.

``python -m autograder similarity`` (``make similarity``) reads every student's answer cells in
``submitted/`` (:mod:`.answers`), normalises their code by its syntax — Python with ``ast``
(:mod:`.python_code`), CUDA C with tree-sitter (:mod:`.cuda_code`) — and their written answers
by words (:mod:`.prose`), fingerprints each answer by winnowing (copydetect's, :mod:`.index`),
weighs what is rare in the class above what many wrote and compares every pair of students and
each student with the instructor's solution (:mod:`.scoring`), and writes ``similarity.csv`` and
``similarity.html`` beside ``grades.csv`` (:mod:`.report_csv`, :mod:`.report_html`; the grade
table's line about them, :mod:`.summary`; :mod:`.command` runs it all).
docs/similarity.md says how the threshold was measured.
"""
