"""The local operator over real HTTP (loopback, no auth, as `make run` starts it) is never throttled, whatever the
limit is set to: limits protect a shared, authenticated server (tests/auth/test_ratelimit_shared.py)."""

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.e2e.conftest import EXECUTABLE, free_port, start, stop, wait_until_up

pytestmark = pytest.mark.e2e

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SMALL_LIMIT = {"ASRAMA_RATE_LIMIT": "1/h", "ASRAMA_RATE_BURST": "3"}


@pytest.fixture
def local_url(server_env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """The MCP server over loopback HTTP without auth (as `make run` starts it), with the same small limit set."""
    port = free_port()
    log = tmp_path / "mcp.log"
    process = start(
        [EXECUTABLE, "serve", "--transport", "http", "--port", str(port)], {**server_env, **SMALL_LIMIT}, log
    )
    try:
        wait_until_up(port, process, log)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop(process)


@pytest.mark.anyio
async def test_the_local_operator_on_loopback_without_auth_is_never_throttled(local_url: str) -> None:
    async with (
        Client(streamable_http_client(local_url), mode="legacy", cache=None) as client,
        httpx2.AsyncClient(timeout=10) as http,
    ):
        for _ in range(15):
            assert not (await client.call_tool("daftar_kamar", {})).is_error
            assert (await client.read_resource("asrama://kamar")).contents
            assert (await http.get(local_url, headers=HEADERS)).status_code == 405  # no stream (and never a 429)
