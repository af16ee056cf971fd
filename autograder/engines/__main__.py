"""``python -m autograder.engines shard RUN_DIR INDEX``: one Slurm array task grades its shard
(:func:`autograder.engines.slurm.run_shard`; the launcher writes this command into ``task.sh``)."""

import os
import sys
from pathlib import Path

from autograder.engines.slurm import run_shard

if len(sys.argv) != 4 or sys.argv[1] != "shard":
    raise SystemExit("usage: python -m autograder.engines shard RUN_DIR INDEX")
os.chdir(sys.argv[2])
raise SystemExit(run_shard(Path(sys.argv[2]).resolve(), int(sys.argv[3])))
