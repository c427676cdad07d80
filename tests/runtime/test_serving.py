"""The sockets our servers listen on: connections they accept send small writes at once (TCP_NODELAY), so a
response's body never waits for the delayed ACK of its head."""

import asyncio
import socket

import pytest
import uvicorn

from mcp_asrama.runtime.serving import listen
from tests.e2e.conftest import free_port

pytestmark = pytest.mark.anyio


async def test_accepted_connections_have_nagle_off() -> None:
    server = uvicorn.Server(uvicorn.Config(app=None, host="127.0.0.1", port=free_port()))
    sock = listen(server)
    seen: list[int] = []

    async def accepted(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    listener = await asyncio.start_server(accepted, sock=sock)
    async with listener:
        _, writer = await asyncio.open_connection("127.0.0.1", server.config.port)
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.01)
        writer.close()
    assert seen and seen[0] != 0
