"""One notebook's grading: nbgrader's configuration and the preprocessors it runs
(restore, normalise, languages, execute, the trusted re-check)."""
