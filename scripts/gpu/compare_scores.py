"""Compare a graded sample class (``python -m sample_class --json FILE``) with what it expects."""

import argparse
import json
from pathlib import Path

import common  # noqa: F401  (first: the shared setup, scripts/gpu/common.py)

from sample_class import compare

parser = argparse.ArgumentParser()
parser.add_argument("table", type=Path)
parser.add_argument("--gpu", action="store_true", help="use the expected scores on a GPU")
parser.add_argument("--only-present", action="store_true",
                    help="compare only the students in the table (a part of the class)")
args = parser.parse_args()
problems = compare(json.loads(args.table.read_text()), gpu=args.gpu,
                   only_present=args.only_present)
print("\n".join(problems) or "all sample students scored as expected")
raise SystemExit(1 if problems else 0)
