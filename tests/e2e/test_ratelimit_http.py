"""The local operator over real HTTP (loopback, no auth, as `make run` starts it) is never throttled, whatever the
limit is set to: limits protect a shared, authenticated server (tests/auth/test_ratelimit_shared.py)."""

from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

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


def test_the_local_operator_on_loopback_without_auth_is_never_throttled(local_url: str) -> None:
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "daftar_kamar", "arguments": {}}}
    read = {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "asrama://kamar"}}
    with httpx2.Client(timeout=10) as http:
        for _ in range(15):
            assert http.post(local_url, json=call, headers=HEADERS).json()["result"]["isError"] is False
            assert http.post(local_url, json=read, headers=HEADERS).status_code == 200
            assert http.get(local_url).status_code == 405  # no stream to hold open (and never a 429)
