"""Rita's notebook starts thousands of processes (each sleeps, so the machine is not spun).
The sandbox's process limit refuses the forks past COURSE_MAX_PROCESSES and the grader stops
her kernel; her row says why, and her answers (re-checked outside the kernel) still score.
Where no pids cgroup can be made, RLIMIT_NPROC refuses the forks instead (not for root).
"""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
APPEND = {"01_arithmetic_intensity": ['''import os
import time

children = 0
try:
    for _ in range(5000):
        if os.fork() == 0:
            time.sleep(20)
            os._exit(0)
        children += 1
except OSError as exc:
    print("fork refused after", children, "children:", exc)
time.sleep(2)
print("children started:", children)
''']}
EXPECTED = {"01_arithmetic_intensity": 11}
