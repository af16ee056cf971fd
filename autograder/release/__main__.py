"""``python -m autograder.release [--check]``: bring the generated parts of source/ and the README
up to date, or only say what is out of date (:mod:`autograder.release.generated`)."""

from autograder.release.generated import main

raise SystemExit(main())
