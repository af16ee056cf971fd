"""Sam's notebook asks for 100 GB at once (a MemoryError, at once: RLIMIT_DATA), then fills
shared memory, which RLIMIT_DATA does not count, up to 6 GiB: past COURSE_MEMORY_LIMIT the
sandbox's memory cgroup stops his kernel and his row says why. His answers still score.
(Without a memory cgroup the second part really takes 6 GiB, then is freed.)
"""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
APPEND = {"01_arithmetic_intensity": ['''try:
    hoard = bytearray(100 * 10**9)
except MemoryError:
    print("100 GB at once: MemoryError")
''', '''import mmap

step = 256 * 2**20
chunks = []
for _ in range(24):  # at most 6 GiB
    chunk = mmap.mmap(-1, step)  # shared: not counted by RLIMIT_DATA
    for offset in range(0, step, 4096):
        chunk[offset] = 1
    chunks.append(chunk)
print("filled", len(chunks) * step // 2**20, "MiB")
''']}
EXPECTED = {"01_arithmetic_intensity": 11}
