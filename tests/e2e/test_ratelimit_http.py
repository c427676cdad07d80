"""Rate limits over real HTTP on 127.0.0.1: a real `mcp-asrama serve --transport http` with a small limit.

Loopback without auth: every request is the local operator's (subject `local`), so all of them share one bucket.
"""

import re
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp_types import TextContent

from tests.e2e.conftest import EXECUTABLE, free_port, start, stop, wait_until_up

pytestmark = pytest.mark.e2e

REFUSAL = re.compile(r"^Terlalu banyak permintaan; coba lagi dalam (\d+) detik\.$")
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def limited_url(server_env: dict[str, str], tmp_path: Path) -> Iterator[str]:
    """The MCP server over HTTP allowing a burst of 3, then 1 request an hour."""
    port = free_port()
    log = tmp_path / "mcp.log"
    env = {**server_env, "ASRAMA_RATE_LIMIT": "1/h", "ASRAMA_RATE_BURST": "3"}
    process = start([EXECUTABLE, "serve", "--transport", "http", "--port", str(port)], env, log)
    try:
        wait_until_up(port, process, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def refusal_seconds(result: object) -> int:
    assert getattr(result, "is_error", False)
    [block] = getattr(result, "content", [])
    assert isinstance(block, TextContent)
    match = REFUSAL.match(block.text)
    assert match, block.text
    return int(match.group(1))


@pytest.mark.anyio
async def test_http_tool_calls_then_other_requests_over_the_limit(limited_url: str) -> None:
    mcp_url = f"{limited_url}/mcp"
    async with Client(mcp_url, mode="legacy", cache=None) as client:
        for _ in range(3):  # the handshake and the client's own tools/list cost nothing
            result = await client.call_tool("absensi_harian", {"tanggal": "2026-10-06"})
            assert not result.is_error
            assert result.structured_content["per_status"]["izin"] == 1
        assert 3500 < refusal_seconds(await client.call_tool("daftar_kamar", {})) <= 3600

    async with httpx2.AsyncClient(timeout=10) as http:
        read = {"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {"uri": "asrama://kamar"}}
        refused = await http.post(mcp_url, json=read, headers=HEADERS)
        assert refused.status_code == 429
        assert 3500 < int(refused.headers["retry-after"]) <= 3600
        body = refused.json()
        assert body["id"] == 9
        assert body["error"]["code"] == -32029
        assert body["error"]["data"] == {"retryAfter": int(refused.headers["retry-after"])}
        assert "Al-Fatih" not in refused.text
        for _ in range(5):
            health = await http.get(f"{limited_url}/healthz")
            assert health.status_code == 200

    async with Client(mcp_url, mode="2026-07-28", cache=None) as modern:
        assert 3500 < refusal_seconds(await modern.call_tool("daftar_kamar", {})) <= 3600
        assert len((await modern.list_tools()).tools) == 5  # still free over the limit
