"""A TCP forwarder: ``python tcp_forward.py LISTEN_HOST:PORT=TARGET_HOST:PORT ...``.

The scale-out test (test_scale_out.py) runs it in the root network namespace so hosts in
other namespaces reach PostgreSQL and Redis, which listen on this machine's 127.0.0.1
only, through the bridge address, as they would reach a database host over the network.
Standard library only; it prints ``ready`` once every listening socket is bound.
"""

from __future__ import annotations

import asyncio
import sys

CHUNK = 64 * 1024


def parse_route(text: str) -> tuple[str, int, str, int]:
    """Return (listen host, listen port, target host, target port) of 'host:port=host:port'."""
    listen, target = text.split("=", 1)
    listen_host, listen_port = listen.rsplit(":", 1)
    target_host, target_port = target.rsplit(":", 1)
    return listen_host, int(listen_port), target_host, int(target_port)


async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy bytes from reader to writer until either side closes."""
    try:
        while data := await reader.read(CHUNK):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.close()


def connection_handler(target_host: str, target_port: int):  # noqa: ANN201 (asyncio's callback type)
    """Return a handler that joins each accepted connection to a new connection to the target."""
    async def handle(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        """Connect to the target and copy both ways until both sides close."""
        try:
            server_reader, server_writer = await asyncio.open_connection(target_host, target_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(pipe(client_reader, server_writer), pipe(server_reader, client_writer))

    return handle


async def serve(routes: list[tuple[str, int, str, int]]) -> None:
    """Listen on every route's address and forward forever."""
    servers = [await asyncio.start_server(connection_handler(target_host, target_port), host, port)
               for host, port, target_host, target_port in routes]
    print("ready", flush=True)
    await asyncio.gather(*(server.serve_forever() for server in servers))


if __name__ == "__main__":
    asyncio.run(serve([parse_route(argument) for argument in sys.argv[1:]]))
