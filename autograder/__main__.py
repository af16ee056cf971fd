"""``python -m autograder COMMAND …``: the instructor's commands.

* ``release``, ``demo``, ``grade``, ``table``, ``collect`` — build the release, grade the sample
  class or a real one, print the grade table, collect an LMS's zip
  (:mod:`autograder.cli.harness`; ``python -m autograder --help``);
* ``export``, ``return`` — grades and feedback back to Canvas or Moodle
  (:mod:`autograder.cli.handback`);
* ``translation update|check|release`` — the translated editions' PO catalogs and folders
  (:mod:`autograder.release.translation`).

``make release``, ``make demo``, ``make grade``, ``make table``, ``make collect``, ``make export``
and ``make return`` run these.
"""

import sys

from autograder.cli import harness
from autograder.release import translation

if sys.argv[1:2] == ["translation"]:
    raise SystemExit(translation.main(sys.argv[2:]))
raise SystemExit(harness.main())
