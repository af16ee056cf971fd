"""A listener on the host's loopback that records whatever reaches it: the proof that a sandboxed
student's connection attempt got nowhere (tests/test_isolation.py, and the hostile student
quinn_phones_home in the background sample-class grading, tests/sample_class_grading.py)."""

from __future__ import annotations

import socket
import threading


class Listener:
    """A TCP server on the host's loopback that records whatever reaches it."""

    def __init__(self, port: int = 0) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen()
        self.sock.settimeout(0.2)
        self.port, self.got, self.stop = self.sock.getsockname()[1], [], False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    self.got.append(conn.recv(1000) or b"(connected)")
                except OSError:
                    self.got.append(b"(connected)")

    def close(self) -> None:
        self.stop = True
        self.thread.join()
        self.sock.close()
