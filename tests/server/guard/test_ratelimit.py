"""Rate limits per subject: the moving window (in memory, on real time: short windows), a store that cannot be
reached, the MCP middleware in both eras, and the HTTP layer around a tiny ASGI app and around the SDK's own
Streamable HTTP app."""

import json
import logging
import re
import socket
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from fastapi import FastAPI
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import TextContent
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcp_asrama.server.asrama_server import AsramaServer
from mcp_asrama.server.guard.access import SEMUA, current_principal
from mcp_asrama.server.guard.ratelimit import (
    CHARGED,
    RATE_LIMITED,
    STORE_TIMEOUT,
    RateLimiter,
    middleware,
    parse_rate,
    retry_seconds,
    subject_of,
    window,
    wrap_http,
)
from mcp_asrama.server.guard.token_cache import CachingVerifier
from mcp_asrama.server.routing_headers import RoutingHeaderCheck
from mcp_asrama.server.settings import ServerSettings
from tests.auth.idp import new_rsa_key, public_pem
from tests.e2e.conftest import free_port
from tests.server.conftest import connect, server_for
from tests.server.support import TOOLS, assert_listed

REFUSAL = re.compile(r"^Terlalu banyak permintaan; coba lagi dalam (\d+) detik\.$")


def limiter(rate: str = "3/min", burst: int = 3, **settings: Any) -> RateLimiter:
    return RateLimiter(ServerSettings(rate_limit=rate, rate_burst=burst, max_body_bytes=8192, **settings))


def token(subject: str | None, client_id: str = "host", expires_at: int | None = None) -> AccessToken:
    return AccessToken(
        token=f"tok-{subject}",
        client_id=client_id,
        scopes=["asrama:read"],
        subject=subject,
        expires_at=expires_at,
        claims={"asrama_scope": ["all"]},
    )


# --- the bucket -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "per_second"), [("60/min", 1.0), ("5/s", 5.0), ("7/sec", 7.0), ("3600/h", 1.0), ("2/hour", 2 / 3600)]
)
def test_rate_is_parsed_per_second(text: str, per_second: float) -> None:
    assert parse_rate(text) == pytest.approx(per_second)


@pytest.mark.parametrize("text", ["0/min", "x/min", "5/day", "5", "-1/s"])
def test_rate_that_allows_nothing_or_is_malformed_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="rate limit"):
        parse_rate(text)


@pytest.mark.parametrize(
    ("rate", "burst", "amount", "seconds"),
    [
        ("60/min", 20, 20, 20),  # the defaults: 20 in any 20 s
        ("3/min", 3, 3, 60),
        ("1/h", 3, 3, 3 * 3600),
        ("7/min", 20, 20, 172),  # 171.4 s rounded up: never faster than the rate
        ("5/s", 5, 5, 1),
        ("100/s", 20, 100, 1),  # under a second: one second holding the rate
    ],
)
def test_the_window_holds_the_burst_over_burst_per_rate_seconds(
    rate: str, burst: int, amount: int, seconds: int
) -> None:
    item = window(parse_rate(rate), burst)
    assert (item.amount, item.get_expiry()) == (amount, seconds)


@pytest.mark.anyio
async def test_burst_is_granted_then_refused_until_its_first_request_leaves_the_window() -> None:
    bucket = limiter("3/min", 3)
    assert [await bucket.acquire("ustadz") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert 59 < await bucket.acquire("ustadz") <= 60


@pytest.mark.anyio
async def test_each_request_frees_its_place_when_it_leaves_the_window() -> None:
    bucket = limiter("2/s", 2)  # 2 in any 1 s
    assert await bucket.acquire("ustadz") == 0.0
    await anyio.sleep(0.5)
    assert await bucket.acquire("ustadz") == 0.0
    wait = await bucket.acquire("ustadz")
    assert 0 < wait <= 0.5  # until the first leaves
    await anyio.sleep(wait + 0.05)
    assert await bucket.acquire("ustadz") == 0.0  # the first one's place
    assert 0 < await bucket.acquire("ustadz") <= 0.5  # the second still holds its own


@pytest.mark.anyio
async def test_a_refused_request_takes_nothing() -> None:
    bucket = limiter("1/s", 1)
    assert await bucket.acquire("ustadz") == 0.0
    for _ in range(10):
        assert await bucket.acquire("ustadz") > 0
    await anyio.sleep(1.05)
    assert await bucket.acquire("ustadz") == 0.0


@pytest.mark.anyio
async def test_subjects_have_their_own_windows() -> None:
    bucket = limiter("3/min", 2)
    assert [await bucket.acquire("a") for _ in range(3)][2] > 0
    assert [await bucket.acquire("b") for _ in range(2)] == [0.0, 0.0]


@pytest.mark.anyio
async def test_an_unreachable_store_lets_requests_through_and_is_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    bucket = limiter("1/h", 1, rate_limit_storage=f"redis://127.0.0.1:{free_port()}/0")  # nothing listens there
    with caplog.at_level(logging.ERROR, logger="mcp_asrama.server.guard.ratelimit"):
        assert [await bucket.acquire("ustadz") for _ in range(5)] == [0.0] * 5
    [record] = [r for r in caplog.records if "store unreachable" in r.getMessage()]
    assert record.__dict__["error"] and "127.0.0.1" not in record.getMessage()
    bucket.close()


@pytest.mark.anyio
async def test_a_store_that_never_answers_lets_requests_through_after_the_timeout() -> None:
    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        bucket = limiter("1/h", 1, rate_limit_storage=f"redis://127.0.0.1:{silent.getsockname()[1]}/0")
        started = time.monotonic()
        assert await bucket.acquire("ustadz") == 0.0
        assert STORE_TIMEOUT <= time.monotonic() - started < STORE_TIMEOUT + 2
        bucket.close()


def test_the_storage_setting_takes_memory_or_a_redis_url() -> None:
    assert ServerSettings().rate_limit_storage == "memory://"
    assert ServerSettings(rate_limit_storage="rediss://cache.sekolah:6380/1").rate_limit_storage.startswith("rediss://")
    for wrong in ("memcached://x", "redis://", "file:///tmp/windows", ""):
        with pytest.raises(ValueError, match="rate_limit_storage"):
            ServerSettings(rate_limit_storage=wrong)


def test_settings_refuse_a_rate_of_zero() -> None:
    with pytest.raises(ValueError, match="rate_limit"):
        limiter("0/min")


@pytest.mark.parametrize(("wait", "seconds"), [(0.01, 1), (1.0, 1), (1.2, 2), (19.97, 20), (3599.5, 3600)])
def test_retry_after_is_whole_seconds_rounded_up(wait: float, seconds: int) -> None:
    assert retry_seconds(wait) == seconds


def test_subject_is_the_one_access_names() -> None:
    for access in (token("ustadz-ridwan"), token(None, client_id="claude-desktop")):
        reset = auth_context_var.set(AuthenticatedUser(access))
        try:
            assert subject_of(access) == current_principal("asrama_scope", SEMUA).subject
        finally:
            auth_context_var.reset(reset)
    assert subject_of(None) == current_principal("asrama_scope", SEMUA).subject == "local"


# --- the MCP layer, in memory, in both eras ----------------------------------------------------------------------


@contextmanager
def signed_in(access: AccessToken | None) -> Iterator[None]:
    """Requests made meanwhile carry `access` as their validated token, as the SDK's auth middleware sets it."""
    reset = auth_context_var.set(None if access is None else AuthenticatedUser(access))
    try:
        yield
    finally:
        auth_context_var.reset(reset)


@pytest.fixture(scope="module")
def idp_key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PEM public key standing in for the identity provider's (limits apply to an authenticated server only)."""
    path = tmp_path_factory.mktemp("idp") / "idp.pem"
    path.write_bytes(public_pem(new_rsa_key()))
    return path


SHARED = {
    "transport": "http",
    "auth": "jwt",
    "public_url": "http://127.0.0.1:8001/mcp",
    "auth_issuer": "https://sso.example.sch.id/realms/sekolah",
}


def limited(service_app: FastAPI, idp_key: Path, rate: str = "3/min") -> AsramaServer:
    """A shared server allowing 3 requests in any window of 3 at `rate`; in memory every request is one subject's."""
    return server_for(service_app, rate_limit=rate, rate_burst=3, **SHARED, auth_public_key_file=idp_key)


def refusal_seconds(result: Any) -> int:
    assert result.is_error
    [block] = result.content
    assert isinstance(block, TextContent)
    match = REFUSAL.match(block.text)
    assert match, block.text
    return int(match.group(1))


def near_a_minute(seconds: int) -> bool:
    """The wait of a 60 s window whose first request was a moment ago."""
    return 55 < seconds <= 60


@pytest.mark.anyio
async def test_fourth_tool_call_in_a_burst_is_a_tool_error_saying_when_to_retry(
    service_app: FastAPI, idp_key: Path, era: str
) -> None:
    server = limited(service_app, idp_key)
    async with connect(server, era) as client:
        for _ in range(3):
            assert not (await client.call_tool("daftar_kamar", {})).is_error
        assert near_a_minute(refusal_seconds(await client.call_tool("daftar_kamar", {})))


@pytest.mark.anyio
async def test_other_subjects_are_not_affected(service_app: FastAPI, idp_key: Path, era: str) -> None:
    server = limited(service_app, idp_key)
    with signed_in(token("ustadz-ridwan")):
        async with connect(server, era) as ridwan:
            for _ in range(3):
                await ridwan.call_tool("daftar_kamar", {})
            assert near_a_minute(refusal_seconds(await ridwan.call_tool("detail_anak", {"id_anak": "A001"})))
    with signed_in(token("ustadzah-halimah")):
        async with connect(server, era) as halimah:
            for _ in range(3):
                assert not (await halimah.call_tool("daftar_kamar", {})).is_error
            assert near_a_minute(refusal_seconds(await halimah.call_tool("daftar_kamar", {})))
    async with connect(server, era) as local:
        assert not (await local.call_tool("daftar_kamar", {})).is_error


@pytest.mark.anyio
async def test_calls_succeed_again_once_the_window_has_passed(service_app: FastAPI, idp_key: Path, era: str) -> None:
    server = limited(service_app, idp_key, rate="3/s")  # 3 in any 1 s
    async with connect(server, era) as client:
        for _ in range(3):
            await client.call_tool("daftar_kamar", {})
        assert refusal_seconds(await client.call_tool("daftar_kamar", {})) == 1
        await anyio.sleep(1.05)
        assert not (await client.call_tool("daftar_kamar", {})).is_error


@pytest.mark.anyio
async def test_reads_over_the_limit_are_a_protocol_error_and_lists_stay_free(
    service_app: FastAPI, idp_key: Path, era: str
) -> None:
    server = limited(service_app, idp_key)
    async with connect(server, era) as client:
        for _ in range(3):
            await client.read_resource("asrama://kamar")
        with pytest.raises(MCPError) as refused:
            await client.read_resource("asrama://kamar")
        assert refused.value.error.code == RATE_LIMITED
        assert near_a_minute(refused.value.error.data["retryAfter"])
        assert REFUSAL.match(refused.value.error.message)
        for _ in range(5):
            assert_listed([t.name for t in (await client.list_tools()).tools], TOOLS)
        assert near_a_minute(refusal_seconds(await client.call_tool("daftar_kamar", {})))


# --- the HTTP layer around a tiny app ------------------------------------------------------------------------------


class Inner:
    """A stand-in for the SDK's app: echoes the body it receives and records whether the request was charged."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        self.charged: list[bool] = []

        async def mcp(request: Request) -> Response:
            body = await request.body()
            self.bodies.append(body)
            self.charged.append(bool(request.scope.get(CHARGED)))
            return Response(body, media_type="application/octet-stream")

        async def ok(_: Request) -> Response:
            return JSONResponse({"status": "ok"})

        self.app = Starlette(
            routes=[
                Route("/mcp", mcp, methods=["GET", "POST"]),
                Route("/healthz", ok),
                Route("/readyz", ok),
                Route("/.well-known/oauth-protected-resource", ok),
                Route("/.well-known/oauth-protected-resource/mcp", ok),
            ]
        )


class Verifier:
    """A fake identity provider's verification: known tokens map to their AccessToken."""

    def __init__(self, tokens: dict[str, AccessToken], fail: bool = False) -> None:
        self.tokens = tokens
        self.calls = 0
        self.fail = fail

    async def verify_token(self, token: str) -> AccessToken | None:
        return (await self.check(token))[0]

    async def check(self, token: str) -> tuple[AccessToken | None, str]:
        self.calls += 1
        if self.fail:
            raise RuntimeError("jwks unreachable")
        found = self.tokens.get(token)
        return found, "" if found else "unknown token"


@asynccontextmanager
async def http(app: Any) -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1:8001") as client:
        yield client


def layered(app: Any, bucket: RateLimiter, verifier: Any = None) -> Any:
    """The HTTP rate limit as http_app stacks it: behind the check that reads the body once."""
    return RoutingHeaderCheck(wrap_http(app, bucket, verifier), bucket.settings.max_body_bytes)


def rpc(method: str, request_id: int | None = 1, **params: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if request_id is not None:
        message["id"] = request_id
    return message


READ = rpc("resources/read", uri="asrama://kamar")
CALL = rpc("tools/call", name="daftar_kamar", arguments={})


@pytest.mark.anyio
async def test_http_request_over_the_limit_is_429_with_retry_after_and_a_json_rpc_error() -> None:
    inner = Inner()
    async with http(layered(inner.app, limiter(), None)) as client:
        for i in range(3):
            assert (await client.post("/mcp", json={**READ, "id": i})).status_code == 200
        refused = await client.post("/mcp", json={**READ, "id": 41})
    assert refused.status_code == 429
    seconds = int(refused.headers["retry-after"])
    assert near_a_minute(seconds)
    assert refused.headers["content-type"] == "application/json"
    assert refused.json() == {
        "jsonrpc": "2.0",
        "id": 41,
        "error": {
            "code": RATE_LIMITED,
            "message": f"Terlalu banyak permintaan; coba lagi dalam {seconds} detik.",
            "data": {"retryAfter": seconds},
        },
    }
    assert len(inner.bodies) == 3
    assert inner.charged == [True, True, True]


@pytest.mark.anyio
async def test_http_tool_calls_pass_uncharged_to_the_mcp_layer() -> None:
    inner = Inner()
    async with http(layered(inner.app, limiter(), None)) as client:
        for _ in range(10):
            assert (await client.post("/mcp", json=CALL)).status_code == 200
        for _ in range(3):  # the tool calls took nothing from the window
            assert (await client.post("/mcp", json=READ)).status_code == 200
        assert (await client.post("/mcp", json=READ)).status_code == 429
        over = await client.post("/mcp", json=CALL)  # over the limit: still the MCP layer's to answer
    assert over.status_code == 200
    assert json.loads(over.content) == CALL
    assert inner.charged == [False] * 10 + [True] * 3 + [False]


@pytest.mark.anyio
async def test_http_a_method_header_that_disagrees_with_the_body_is_refused_uncharged() -> None:
    inner = Inner()
    async with http(layered(inner.app, limiter(burst=1), None)) as client:
        lying = await client.post("/mcp", json=READ, headers={"Mcp-Method": "tools/list"})
        assert lying.status_code == 400
        assert lying.json()["error"]["code"] == -32020 and lying.json()["id"] == 1
        assert (await client.post("/mcp", json=READ, headers={"Mcp-Method": "resources/read"})).status_code == 200
        call = await client.post("/mcp", json=CALL, headers={"Mcp-Method": "tools/call"})
    assert call.status_code == 200
    assert inner.charged == [True, False]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "message",
    [
        rpc("notifications/initialized", None),
        rpc("notifications/cancelled", None, requestId=3),
        rpc("initialize", protocolVersion="2025-11-25", capabilities={}, clientInfo={"name": "t", "version": "0"}),
        rpc("server/discover"),
        rpc("ping"),
        rpc("tools/list"),
        rpc("prompts/list"),
        rpc("resources/list"),
        rpc("resources/templates/list"),
        {"jsonrpc": "2.0", "id": 7, "result": {}},
    ],
)
async def test_http_free_messages_pass_even_over_the_limit(message: dict[str, Any]) -> None:
    inner = Inner()
    async with http(layered(inner.app, limiter(burst=1), None)) as client:
        assert (await client.post("/mcp", json=READ)).status_code == 200
        assert (await client.post("/mcp", json=READ)).status_code == 429
        for _ in range(5):
            assert (await client.post("/mcp", json=message)).status_code == 200
    assert inner.charged == [True] + [False] * 5


@pytest.mark.anyio
@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/.well-known/oauth-protected-resource/mcp"])
async def test_http_health_and_metadata_are_never_limited(path: str) -> None:
    inner = Inner()
    async with http(layered(inner.app, limiter(burst=1), None)) as client:
        assert (await client.post("/mcp", json=READ)).status_code == 200
        assert (await client.get("/mcp")).status_code == 429  # any other request is charged, a GET too
        for _ in range(20):
            assert (await client.get(path)).status_code == 200


@pytest.mark.anyio
@pytest.mark.parametrize(
    "body",
    [
        json.dumps(rpc("tools/call", name="cari_anak", arguments={"nama": "Siti Ñurhaliza 🌙 " * 4000})).encode(),
        json.dumps(READ).encode(),
        b"{not json",
        b"[1, 2]",
        b"\xff\xfe" * 5000,  # over this limiter's 8192-byte body limit
    ],
)
async def test_http_body_reaches_the_app_intact(body: bytes) -> None:
    inner = Inner()

    async def chunks() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 1000):
            yield body[start : start + 1000]

    with anyio.fail_after(10):  # a body read but not handed on would leave the app waiting for it
        async with http(layered(inner.app, limiter(burst=10), None)) as client:
            response = await client.post("/mcp", content=chunks(), headers={"Content-Type": "application/json"})
    assert response.status_code == 200
    assert inner.bodies == [body]
    assert response.content == body


@pytest.mark.anyio
async def test_http_bodies_that_are_not_one_request_are_charged() -> None:
    inner = Inner()
    async with http(layered(inner.app, limiter(burst=2), None)) as client:
        assert (await client.post("/mcp", content=b"{not json")).status_code == 200
        assert (await client.post("/mcp", json=[CALL, CALL])).status_code == 200
        assert (await client.post("/mcp", content=b"x" * 9000)).status_code == 429  # oversize: charged, not read
    assert inner.charged == [True, True]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "body",
    [b"[" * 4000 + b"]" * 4000, b'{"jsonrpc": "2.0", "id": 1, "method": ["tools/call"]}', b'{"id": 1, "method": {}}'],
)
async def test_http_hostile_bodies_are_charged_and_handed_on(body: bytes) -> None:
    inner = Inner()
    async with http(layered(inner.app, limiter(burst=1), None)) as client:
        assert (await client.post("/mcp", content=body)).status_code == 200
        assert (await client.post("/mcp", content=body)).status_code == 429
    assert inner.bodies == [body]


@pytest.mark.anyio
async def test_http_subjects_come_from_verified_tokens_each_verified_once() -> None:
    inner = Inner()
    fake = Verifier({"tok-a": token("ustadz-a"), "tok-b": token("ustadz-b")})
    async with http(layered(inner.app, limiter(burst=2), CachingVerifier(fake.check))) as client:
        a = {"Authorization": "Bearer tok-a"}
        assert [(await client.post("/mcp", json=READ, headers=a)).status_code for _ in range(3)] == [200, 200, 429]
        b = {"Authorization": "bearer tok-b"}
        assert [(await client.post("/mcp", json=READ, headers=b)).status_code for _ in range(3)] == [200, 200, 429]
    assert fake.calls == 2  # each token verified once, then remembered


@pytest.mark.anyio
@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer forged"}, {"Authorization": "Basic dTpw"}])
async def test_http_without_a_valid_token_is_charged_to_its_client_address(headers: dict[str, str]) -> None:
    inner = Inner()
    async with http(layered(inner.app, limiter(burst=2), CachingVerifier(Verifier({}).check))) as c:
        statuses = [(await c.post("/mcp", json={**READ, "id": i}, headers=headers)).status_code for i in range(5)]
        refused = await c.post("/mcp", json={**READ, "id": "x-9"}, headers=headers)
    assert statuses == [200, 200, 429, 429, 429]  # the first two reach the SDK (which answers 401)
    assert refused.json()["id"] == "x-9"
    assert inner.charged == [False, False]  # never marked as a subject's charge


@pytest.mark.anyio
async def test_http_anonymous_windows_are_per_client_address() -> None:
    bucket = limiter(burst=1)
    gate = layered(Inner().app, bucket, CachingVerifier(Verifier({}).check))
    for address in ("10.0.0.1", "10.0.0.2"):
        transport = httpx2.ASGITransport(app=gate, client=(address, 5000))
        async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1:8001") as client:
            assert [(await client.post("/mcp", json=READ)).status_code for _ in range(2)] == [200, 429]


@pytest.mark.anyio
async def test_http_verifier_failure_is_a_refusal() -> None:
    inner = Inner()
    verifier = CachingVerifier(Verifier({"tok-a": token("ustadz-a")}, fail=True).check)
    async with http(layered(inner.app, limiter(burst=1), verifier)) as client:
        statuses = [
            (await client.post("/mcp", json=READ, headers={"Authorization": "Bearer tok-a"})).status_code
            for _ in range(3)
        ]
    assert statuses == [200, 429, 429]
    assert inner.charged == [False]


# --- both layers on the SDK's own Streamable HTTP app: one window, never charged twice -----------------------------


@asynccontextmanager
async def sdk_http(service_app: FastAPI) -> AsyncIterator[httpx2.AsyncClient]:
    """Both layers around the SDK's app, without the SDK's bearer auth (the subject is `local`): the layering under
    test, not a configuration the product starts (it limits only authenticated servers)."""
    server = server_for(service_app, transport="http", rate_limit="3/min", rate_burst=3)
    server.middleware.extend(middleware(server.limiter))
    app = server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True)
    async with server.session_manager.run(), http(layered(app, server.limiter, None)) as client:
        yield client


HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.mark.anyio
async def test_sdk_app_tool_calls_are_charged_once_and_refused_as_tool_errors(service_app: FastAPI) -> None:
    async with sdk_http(service_app) as client:
        results = [(await client.post("/mcp", json={**CALL, "id": i}, headers=HEADERS)).json() for i in range(4)]
        read = await client.post("/mcp", json=READ, headers=HEADERS)
    assert [r["result"]["isError"] for r in results] == [False, False, False, True]
    assert REFUSAL.match(results[3]["result"]["content"][0]["text"])
    assert read.status_code == 429
    assert near_a_minute(int(read.headers["retry-after"]))


@pytest.mark.anyio
async def test_sdk_app_reads_use_the_same_window_as_tool_calls(service_app: FastAPI) -> None:
    async with sdk_http(service_app) as client:
        reads = [await client.post("/mcp", json=READ, headers=HEADERS) for _ in range(3)]
        call = await client.post("/mcp", json=CALL, headers=HEADERS)
    assert [r.status_code for r in reads] == [200, 200, 200]
    assert all('"Al-Fatih 1"' in r.json()["result"]["contents"][0]["text"] for r in reads)  # charged once each
    assert call.status_code == 200
    assert REFUSAL.match(call.json()["result"]["content"][0]["text"])


@pytest.mark.anyio
async def test_sdk_auth_subjects_share_windows_between_the_layers() -> None:
    """With the SDK's own bearer authentication: the MCP layer sees the same subject the HTTP layer charged."""
    bucket = limiter(burst=2)
    verifier = Verifier({"tok-a": token("ustadz-a"), "tok-b": token("ustadz-b")})
    server = MCPServer(
        "t",
        version="0",
        token_verifier=verifier,
        auth=AuthSettings(
            issuer_url=AnyHttpUrl("https://idp.example"),
            resource_server_url=AnyHttpUrl("http://127.0.0.1:8001/mcp"),
            required_scopes=["asrama:read"],
            validate_token_resource=False,
        ),
        middleware=middleware(bucket),
    )

    @server.tool()
    def halo() -> str:
        return "halo"

    @server.resource("asrama://salam")
    def salam() -> str:
        return "salam"

    app = server.streamable_http_app(streamable_http_path="/mcp", stateless_http=True, json_response=True)
    a, b = {**HEADERS, "Authorization": "Bearer tok-a"}, {**HEADERS, "Authorization": "Bearer tok-b"}
    salam_read = rpc("resources/read", uri="asrama://salam")
    halo_call = rpc("tools/call", name="halo", arguments={})
    async with server.session_manager.run(), http(layered(app, bucket, verifier)) as client:
        assert (await client.post("/mcp", json=salam_read, headers=a)).json()["result"]["contents"][0][
            "text"
        ] == "salam"
        assert (await client.post("/mcp", json=halo_call, headers=a)).json()["result"]["isError"] is False
        over = (await client.post("/mcp", json=halo_call, headers=a)).json()["result"]
        assert over["isError"] is True
        assert REFUSAL.match(over["content"][0]["text"])
        assert (await client.post("/mcp", json=salam_read, headers=a)).status_code == 429
        assert (await client.post("/mcp", json=halo_call, headers=b)).json()["result"]["isError"] is False
        assert (await client.post("/mcp", json=salam_read, headers=b)).status_code == 200
        assert (await client.post("/mcp", json=halo_call, headers=HEADERS)).status_code == 401
