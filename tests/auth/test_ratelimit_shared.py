"""Rate limits of a shared server over real HTTP: a real `mcp-asrama serve --transport http --auth jwt` process with
a small limit, each subject its own bucket."""

import re
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp_types import TextContent

from tests.auth.conftest import Mcp, mcp_process
from tests.auth.idp import Idp
from tests.auth.support import bearer_client
from tests.conftest import TOKEN
from tests.e2e.conftest import free_port
from tests.server.support import TOOLS

pytestmark = pytest.mark.e2e

REFUSAL = re.compile(r"^Terlalu banyak permintaan; coba lagi dalam (\d+) detik\.$")
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SMALL_LIMIT = {"ASRAMA_RATE_LIMIT": "1/h", "ASRAMA_RATE_BURST": "3"}


@pytest.fixture
def shared_mcp(idp: Idp, service_url: str, tmp_path: Path) -> Iterator[Mcp]:
    """A server requiring the IdP's tokens, allowing each subject a burst of 3, then 1 request an hour."""
    port = free_port()
    public = f"http://127.0.0.1:{port}/mcp"
    flags = ["--auth", "jwt", "--public-url", public, "--auth-issuer", idp.issuer, "--auth-jwks-url", idp.jwks_url]
    env = {"ASRAMA_API_URL": service_url, "ASRAMA_API_TOKEN": TOKEN, **SMALL_LIMIT}
    with mcp_process(flags, env, tmp_path, port) as mcp:
        yield mcp


def refusal_seconds(result: object) -> int:
    assert getattr(result, "is_error", False)
    [block] = getattr(result, "content", [])
    assert isinstance(block, TextContent)
    match = REFUSAL.match(block.text)
    assert match, block.text
    return int(match.group(1))


@pytest.mark.anyio
async def test_a_shared_server_limits_tool_calls_then_other_requests(shared_mcp: Mcp, idp: Idp) -> None:
    token = idp.mint(shared_mcp.public_url, sub="ustadz-ridwan")
    async with bearer_client(shared_mcp.url, token, "legacy") as client:
        for _ in range(3):  # the handshake and the client's own tools/list cost nothing
            result = await client.call_tool("absensi_harian", {"tanggal": "2026-10-06"})
            assert not result.is_error
        assert 3500 < refusal_seconds(await client.call_tool("daftar_kamar", {})) <= 3600

    async with httpx2.AsyncClient(timeout=10, headers={"Authorization": f"Bearer {token}"}) as http:
        read = {"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {"uri": "asrama://kamar"}}
        refused = await http.post(shared_mcp.url, json=read, headers=HEADERS)
        assert refused.status_code == 429
        assert 3500 < int(refused.headers["retry-after"]) <= 3600
        body = refused.json()
        assert (body["id"], body["error"]["code"]) == (9, -32029)
        assert body["error"]["data"] == {"retryAfter": int(refused.headers["retry-after"])}
        assert "Al-Fatih" not in refused.text
        for _ in range(5):
            assert (await http.get(f"{shared_mcp.base}/healthz")).status_code == 200

    async with bearer_client(shared_mcp.url, token, "2026-07-28") as modern:
        assert 3500 < refusal_seconds(await modern.call_tool("daftar_kamar", {})) <= 3600
        assert len((await modern.list_tools()).tools) == len(TOOLS)  # still free over the limit
    other = idp.mint(shared_mcp.public_url, sub="ustadzah-halimah")
    async with bearer_client(shared_mcp.url, other, "2026-07-28") as client:
        assert not (await client.call_tool("daftar_kamar", {})).is_error
