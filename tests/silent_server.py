"""A server that takes connections and never answers: a database or a Redis that hangs."""

import contextlib
import socket
import threading


class SilentServer:
    """A TCP server on 127.0.0.1 that accepts every connection and never answers."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.accepted: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _address = self.listener.accept()
            except OSError:
                return  # closed
            self.accepted.append(conn)

    def close(self) -> None:
        # The client's read ends (the connection is closed), and with it the probe's read.
        for sock in [self.listener, *self.accepted]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
