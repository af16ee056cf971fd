"""Oscar looks for the instructor's files *outside* the course directory while being graded
— the home folder, /srv, /mnt, /var, /opt, /work — and prints every file whose name says
"secret". The sandbox's filesystem has none of those places (only the system, Python and
the course package): nothing is printed, and his answers still score in full.
"""

NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
APPEND = {"01_arithmetic_intensity": ['''import glob
import os

patterns = ["/root/*", "/root/.*", "/home/*/*", "/home/*/.*", "/srv/*", "/mnt/*", "/mnt/*/*",
            "/var/*", "/var/*/*", "/opt/*", "/opt/*/*", "/work/*", "/work/*/*",
            os.path.expanduser("~/*"), os.path.expanduser("~/.*")]
stolen = 0
for pattern in patterns:
    for path in glob.glob(pattern):
        if "secret" in os.path.basename(path) and os.path.isfile(path):
            print(path, open(path).read())
            stolen += 1
print("secret files read:", stolen)
''']}
EXPECTED = {"01_arithmetic_intensity": 11}
