"""``python -m autograder COMMAND …``: the instructor's commands.

* ``release``, ``demo``, ``grade``, ``table``, ``collect`` — build the release, grade the sample
  class or a real one, print the grade table, collect an LMS's zip
  (:mod:`autograder.cli.harness`; ``python -m autograder --help``);
* ``translation update|check|release`` — the translated editions' PO catalogs and folders
  (:mod:`autograder.release.translation`).

``make release``, ``make demo``, ``make grade``, ``make table`` and ``make collect`` run these.
"""

import sys

from autograder.cli import harness
from autograder.release import translation

if sys.argv[1:2] == ["translation"]:
    raise SystemExit(translation.main(sys.argv[2:]))
raise SystemExit(harness.main())
