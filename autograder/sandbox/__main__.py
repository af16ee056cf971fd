"""``python -m autograder.sandbox``: start a sandboxed process (:mod:`autograder.sandbox.launcher`).

``-f CONNECTION_FILE`` is the grading kernel's launcher (the kernelspec in
:mod:`autograder.grading.config`); ``exec BOX_JSON -- BWRAP_ARGV…`` applies the limits and
becomes bwrap.
"""

import sys

from autograder.sandbox.launcher import main

raise SystemExit(main(sys.argv[1:]))
