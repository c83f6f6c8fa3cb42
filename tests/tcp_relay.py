"""A TCP relay for tests: `python tests/tcp_relay.py LISTEN_HOST:PORT=TARGET_HOST:PORT ...`.

Lets processes in a test's network namespace reach servers that listen on the host's
loopback only (the shared MariaDB and Redis), through the host's side of a veth pair.
Prints "ready" once every listener is bound; runs until killed.
"""

import asyncio
import sys


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


def _handler(target_host: str, target_port: int):  # type: ignore[no-untyped-def]
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(
                target_host, target_port
            )
        except OSError:
            writer.close()
            return
        await asyncio.gather(
            _pipe(reader, upstream_writer), _pipe(upstream_reader, writer), return_exceptions=True
        )

    return handle


async def main(pairs: list[str]) -> None:
    servers = []
    for pair in pairs:
        listen, target = pair.split("=")
        host, port = listen.rsplit(":", 1)
        target_host, target_port = target.rsplit(":", 1)
        servers.append(
            await asyncio.start_server(_handler(target_host, int(target_port)), host, int(port))
        )
    print("ready", flush=True)
    await asyncio.gather(*(server.serve_forever() for server in servers))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
