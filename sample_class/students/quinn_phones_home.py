"""Quinn's notebook sends her answers (and anything else) to a server on the grading
machine, over TCP and UDP on localhost. The sandbox has no network of its own: only an
empty loopback, so every attempt fails and the server receives nothing.
"""

#: The port the isolation test listens on (tests/test_isolation.py).
LISTEN_PORT = 47474
NOTEBOOKS = ["01_arithmetic_intensity"]
BASE = "solutions"
APPEND = {"01_arithmetic_intensity": [f'''import socket

for host in ("127.0.0.1", "localhost", "::1"):
    try:
        with socket.create_connection((host, {LISTEN_PORT}), timeout=3) as conn:
            conn.sendall(b"quinn was here")
            print("sent to", host)
    except OSError as exc:
        print("no connection to", host, ":", exc)
try:
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"quinn", ("127.0.0.1", {LISTEN_PORT}))
    print("udp datagram sent (to the sandbox's own loopback)")
except OSError as exc:
    print("udp:", exc)
''']}
EXPECTED = {"01_arithmetic_intensity": 11}
