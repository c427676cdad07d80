"""Rate limits of a shared server over real HTTP: real `mcp-asrama serve --transport http --auth jwt` processes with
a small limit, each subject its own window; replicas sharing a Redis (ASRAMA_RATE_LIMIT_STORAGE) share each
subject's window, replicas on memory:// each keep their own, and a Redis stopped mid-run lets requests through."""

import re
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx2
import pytest
from mcp_types import TextContent

from tests.auth.conftest import Mcp, mcp_process, needs_redis
from tests.auth.idp import Idp
from tests.auth.support import bearer_client, post
from tests.conftest import TOKEN
from tests.e2e.conftest import free_port
from tests.server.support import TOOLS, assert_listed

pytestmark = pytest.mark.e2e

REFUSAL = re.compile(r"^Terlalu banyak permintaan; coba lagi dalam (\d+) detik\.$")
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SMALL_LIMIT = {"ASRAMA_RATE_LIMIT": "1/h", "ASRAMA_RATE_BURST": "3"}  # 3 in any 3 hours
WINDOW = 3 * 3600


@pytest.fixture
def shared_mcp(idp: Idp, service_url: str, tmp_path: Path) -> Iterator[Mcp]:
    """A server requiring the IdP's tokens, allowing each subject 3 requests in any 3 hours (1 an hour)."""
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
        assert WINDOW - 100 < refusal_seconds(await client.call_tool("daftar_kamar", {})) <= WINDOW

    async with httpx2.AsyncClient(timeout=10, headers={"Authorization": f"Bearer {token}"}) as http:
        read = {"jsonrpc": "2.0", "id": 9, "method": "resources/read", "params": {"uri": "asrama://kamar"}}
        refused = await http.post(shared_mcp.url, json=read, headers=HEADERS)
        assert refused.status_code == 429
        assert WINDOW - 100 < int(refused.headers["retry-after"]) <= WINDOW
        body = refused.json()
        assert (body["id"], body["error"]["code"]) == (9, -32029)
        assert body["error"]["data"] == {"retryAfter": int(refused.headers["retry-after"])}
        assert "Al-Fatih" not in refused.text
        for _ in range(5):
            assert (await http.get(f"{shared_mcp.base}/healthz")).status_code == 200

    async with bearer_client(shared_mcp.url, token, "2026-07-28") as modern:
        assert WINDOW - 100 < refusal_seconds(await modern.call_tool("daftar_kamar", {})) <= WINDOW
        assert_listed([t.name for t in (await modern.list_tools()).tools], TOOLS)  # still free over the limit
    other = idp.mint(shared_mcp.public_url, sub="ustadzah-halimah")
    async with bearer_client(shared_mcp.url, other, "2026-07-28") as client:
        assert not (await client.call_tool("daftar_kamar", {})).is_error


# --- replicas ----------------------------------------------------------------------------------------------------


@contextmanager
def replicas(idp: Idp, service_url: str, folder: Path, storage: str) -> Iterator[tuple[Mcp, Mcp]]:
    """Two replicas of one server, as behind a load balancer: the same public URL (so one token is good on both),
    the small limit, their windows in `storage`."""
    first, second = free_port(), free_port()
    public = f"http://127.0.0.1:{first}/mcp"
    flags = ["--auth", "jwt", "--public-url", public, "--auth-issuer", idp.issuer, "--auth-jwks-url", idp.jwks_url]
    env = {
        "ASRAMA_API_URL": service_url,
        "ASRAMA_API_TOKEN": TOKEN,
        **SMALL_LIMIT,
        "ASRAMA_RATE_LIMIT_STORAGE": storage,
    }
    with mcp_process(flags, env, folder, first) as a, mcp_process(flags, env, folder, second) as b:
        yield a, b


def call_tool(mcp: Mcp, token: str) -> object:
    """One tool call through the SDK's client (its handshake and tool list cost nothing)."""

    async def once() -> object:
        async with bearer_client(mcp.url, token, "legacy") as client:
            return await client.call_tool("daftar_kamar", {})

    return anyio.run(once)


def granted(result: object) -> bool:
    return getattr(result, "is_error", None) is False


def spend_the_burst(mcp: Mcp, token: str) -> None:
    for _ in range(3):
        assert granted(call_tool(mcp, token))


@needs_redis
def test_a_burst_spent_on_one_replica_is_refused_on_the_other(
    idp: Idp, service_url: str, tmp_path: Path, redis_url: str
) -> None:
    with replicas(idp, service_url, tmp_path, redis_url) as (a, b):
        token = idp.mint(a.public_url, sub="ustadz-ridwan")
        spend_the_burst(a, token)
        assert WINDOW - 100 < refusal_seconds(call_tool(b, token)) <= WINDOW
        read = post(b.url, "resources/read", {"uri": "asrama://kamar"}, token=token)
        assert read.status_code == 429 and WINDOW - 100 < int(read.headers["retry-after"]) <= WINDOW
        assert refusal_seconds(call_tool(a, token)) > 0
        other = idp.mint(a.public_url, sub="ustadzah-halimah")  # another subject: a window of her own
        assert granted(call_tool(b, other))


def test_replicas_on_memory_each_keep_their_own_windows(idp: Idp, service_url: str, tmp_path: Path) -> None:
    with replicas(idp, service_url, tmp_path, "memory://") as (a, b):
        token = idp.mint(a.public_url, sub="ustadz-ridwan")
        spend_the_burst(a, token)
        assert refusal_seconds(call_tool(a, token)) > 0
        spend_the_burst(b, token)  # B never heard of A's requests
        assert refusal_seconds(call_tool(b, token)) > 0


def shut_down(redis_url: str) -> None:
    """Stop the Redis at `redis_url` as an operator (or a crash) would, without saving."""
    address = urlsplit(redis_url)
    with socket.create_connection((address.hostname, address.port), timeout=5) as connection:
        connection.sendall(b"SHUTDOWN NOSAVE\r\n")
        while connection.recv(1024):  # until Redis closes the connection
            pass


@needs_redis
def test_a_redis_stopped_mid_run_lets_requests_through_and_is_logged_once(
    idp: Idp, service_url: str, tmp_path: Path, redis_url: str
) -> None:
    with replicas(idp, service_url, tmp_path, redis_url) as (a, b):
        token = idp.mint(a.public_url, sub="ustadz-ridwan")
        spend_the_burst(a, token)
        assert refusal_seconds(call_tool(b, token)) > 0  # the store is in use
        shut_down(redis_url)
        for _ in range(3):
            assert granted(call_tool(a, token))  # fail open: never a 5xx, never a refusal
            read = post(a.url, "resources/read", {"uri": "asrama://kamar"}, token=token)
            assert read.status_code == 200 and "Traceback" not in read.text
    assert a.log is not None
    logged = [line for line in a.log.read_text().splitlines() if "rate limit store unreachable" in line]
    assert len(logged) == 1  # once a minute, however many requests
    assert "Traceback" not in a.log.read_text()
