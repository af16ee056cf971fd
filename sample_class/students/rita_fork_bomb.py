"""Rita's notebook starts thousands of processes (a shell loop of `sleep 300 &`: a shell
forks in about a millisecond, and sleeping processes do not spin the machine). The sandbox's
process limit refuses the forks past COURSE_MAX_PROCESSES and the grader stops her kernel;
her row says why, and her answers (re-checked outside the kernel) still score.
Where no pids cgroup can be made, RLIMIT_NPROC refuses the forks instead (not for root).
"""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
APPEND = {"01_arithmetic_intensity": ['''import os
import subprocess

subprocess.run(["sh", "-c", "i=0; while [ $i -lt 5000 ]; do sleep 300 & i=$((i+1)); done"],
               timeout=120)
print("processes now:", len([p for p in os.listdir("/proc") if p.isdigit()]))
''']}
EXPECTED = {"01_arithmetic_intensity": 11}
