"""Pam prints the grading process's environment — hers, and every other process's she can
find under /proc (PID 1 included) — hoping for the instructor's tokens. The sandbox starts
with an allow-listed environment, bwrap included: no token is there to print.
"""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
APPEND = {"01_arithmetic_intensity": ['''import glob
import os

print(dict(os.environ))
for path in glob.glob("/proc/*/environ"):
    try:
        print(path, open(path, "rb").read().replace(b"\\0", b" ").decode(errors="replace"))
    except OSError as exc:
        print(path, exc)
''']}
EXPECTED = {"01_arithmetic_intensity": 11}
