"""Milvus Lite started as a server, for the tests of the Milvus search backend.

`milvus-lite server` (from the milvus-lite package) serves the Milvus gRPC protocol on a
TCP port from a data directory, so the backend talks to it exactly as to a Milvus
cluster: same client, same URI form, same calls.

Started through this module (`python -m tests.milvus_server server ...`, the same
arguments): its gRPC server takes gRPC's default keepalive policy, which refuses a ping
more often than every five minutes, while pymilvus pings every ten seconds; after a few
idle minutes the server answered the client with GOAWAY "too_many_pings" and the next call
failed. A Milvus server accepts pings every five seconds; this module gives Milvus Lite
that policy before it starts.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.processes import ROOT, free_port, stop_group, wait_for

# A Milvus server's keepalive policy (a ping every 5 s allowed, also between calls).
MILVUS_KEEPALIVE_POLICY = [
    ("grpc.http2.min_ping_interval_without_data_ms", 5000),
    ("grpc.keepalive_permit_without_calls", 1),
]


def _answering(uri: str) -> bool:
    """The server answers a call (its port opens a while before its gRPC service does;
    a client that connects in between fails, and on a loaded machine that while is long)."""
    from pymilvus import MilvusClient

    try:
        client = MilvusClient(uri=uri, timeout=5, dedicated=True)
    except Exception:
        return False
    try:
        client.list_collections(timeout=5)
        return True
    except Exception:
        return False
    finally:
        client.close()


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@contextmanager
def milvus_lite_server(data_dir: Path, *, port: int | None = None) -> Iterator[str]:
    """A running Milvus Lite server on `data_dir`; yields its URI, stops it on exit."""
    port = port or free_port()
    log = (data_dir.parent / f"milvus-lite-{port}.log").open("ab")
    command = [sys.executable, "-m", "tests.milvus_server", "server", "--data-dir", str(data_dir)]
    process = subprocess.Popen(
        [*command, "--host", "127.0.0.1", "--port", str(port)],
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for(
            lambda: process.poll() is not None or _listening(port),
            timeout=60,
            what="milvus-lite server to listen",
        )
        uri = f"http://127.0.0.1:{port}"
        wait_for(
            lambda: process.poll() is not None or _answering(uri),
            timeout=60,
            what="milvus-lite server to answer",
        )
        if process.poll() is not None:
            raise RuntimeError(f"milvus-lite server exited with {process.returncode}")
        yield uri
    finally:
        stop_group(process)
        log.close()


def _serve() -> int:
    import grpc
    from milvus_lite.cmdline import main

    build = grpc.server

    def server(*args, options=(), **kwargs):  # type: ignore[no-untyped-def]
        return build(*args, options=[*options, *MILVUS_KEEPALIVE_POLICY], **kwargs)

    grpc.server = server
    return main()


if __name__ == "__main__":
    raise SystemExit(_serve())
