"""A confirmation is used at most once, over real HTTP: the accepted retry of a multi round-trip call, sent again
byte for byte, is refused like an invalid state (-32602) and the tool body does not run again; a forged state is
refused without claiming anything; a second server with the same ASRAMA_STATE_KEYS finishes a confirmation the first
one asked for, once; with a Redis they share (ASRAMA_CONFIRM_STORAGE), a confirmation used on one replica is refused
on the other, and an unreachable store refuses the round. A confirmation is claimed only by the call it confirms:
sent on any other method, tool or arguments it is not burnt (nor, with Redis, does it leave a key), and a full
store refuses new confirmations instead of forgetting a used one. (The SDK seals requestState but does not make it
single-use.)"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import anyio
import coredis
import httpx2
import pytest
from mcp.server.mcpserver import Elicit, ElicitationResult, Resolve
from pydantic import BaseModel

from mcp_asrama.server.app import build_server
from mcp_asrama.server.guard.confirm import FULL, Claimed, MemoryClaims, confirmation_key, digest
from mcp_asrama.server.settings import ServerSettings
from mcp_asrama.server.transport import http_app
from tests.auth.conftest import TOKEN, needs_redis, uvicorn_thread
from tests.auth.support import MODERN, rpc
from tests.e2e.conftest import free_port
from tests.http_rpc import reply

pytestmark = pytest.mark.e2e

KEYS = "kunci-rahasia-sekolah-yang-panjang-0001,kunci-lama-sekolah-yang-panjang-sekali-2"


class Setuju(BaseModel):
    setuju: bool


async def tanya(n: int) -> Elicit[Setuju]:
    return Elicit(f"Catat {n} baris?", Setuju)


class Counter:
    """A stand-in write: counts how often its body ran."""

    def __init__(self) -> None:
        self.runs = 0
        self.keys: list[str | None] = []

    async def tulis(self, n: int, jawaban: Annotated[ElicitationResult[Setuju], Resolve(tanya)]) -> str:
        self.runs += 1
        self.keys.append(confirmation_key())
        return f"{n} dicatat"


@contextmanager
def server_with_write(counter: Counter, *, max_claims: int | None = None, **settings: Any) -> Iterator[str]:
    """A server with the stand-in write; `max_claims` shrinks its memory claim store (to show it full)."""
    port = free_port()
    # The stand-in write calls no data service: the upstream is a port nothing listens on, never a running demo's.
    upstream = f"http://127.0.0.1:{free_port()}"
    # A write tool (not annotated read-only) exists only with the writes on.
    config = ServerSettings(transport="http", mcp_port=port, api_url=upstream, api_token=TOKEN, writes=True, **settings)
    server = build_server(config)
    server.tool(name="tulis")(counter.tulis)
    if max_claims is not None:
        [claimed] = [m for m in server.middleware if isinstance(m, Claimed)]
        assert isinstance(claimed.claims, MemoryClaims)
        claimed.claims.max_keys = max_claims
    with uvicorn_thread(http_app(server, config), port):
        yield f"http://127.0.0.1:{port}/mcp"


def call(url: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    return reply(httpx2.post(url, json=body, headers={**headers, "Mcp-Name": "tulis"}, timeout=15))


def first_round(url: str, n: int = 3) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    body, headers = rpc("tools/call", {"name": "tulis", "arguments": {"n": n}}, era=MODERN)
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = {"elicitation": {"form": {}}}
    asked = call(url, body, headers)["result"]
    assert asked["resultType"] == "input_required"
    return body, headers, asked


def accepted_retry(body: dict[str, Any], asked: dict[str, Any], request_id: int) -> dict[str, Any]:
    [key] = asked["inputRequests"]
    answer = {"action": "accept", "content": {"setuju": True}}
    params = {**body["params"], "inputResponses": {key: answer}, "requestState": asked["requestState"]}
    return {**body, "id": request_id, "params": params}


def test_an_accepted_confirmation_sent_again_is_refused_and_runs_once() -> None:
    counter = Counter()
    with server_with_write(counter) as url:
        body, headers, asked = first_round(url)
        done = call(url, accepted_retry(body, asked, 2), headers)
        assert done["result"]["content"][0]["text"] == "3 dicatat"
        for request_id in (3, 4):
            again = call(url, accepted_retry(body, asked, request_id), headers)
            assert again["error"]["code"] == -32602
            assert again["error"]["message"] == "Invalid or expired requestState"
    assert counter.runs == 1
    assert counter.keys == [digest(asked["requestState"])]  # the write's Idempotency-Key: this confirmation


def test_a_forged_state_claims_nothing_and_the_real_one_still_works() -> None:
    counter = Counter()
    with server_with_write(counter) as url:
        body, headers, asked = first_round(url)
        forged = accepted_retry(body, {**asked, "requestState": asked["requestState"][:-4] + "AAAA"}, 2)
        assert call(url, forged, headers)["error"]["code"] == -32602
        assert call(url, accepted_retry(body, asked, 3), headers)["result"]["content"][0]["text"] == "3 dicatat"
    assert counter.runs == 1


def test_a_second_server_with_the_same_keys_finishes_the_confirmation() -> None:
    first, second = Counter(), Counter()
    with server_with_write(first, state_keys=KEYS) as url_a, server_with_write(second, state_keys=KEYS) as url_b:
        body, headers, asked = first_round(url_a)
        assert call(url_b, accepted_retry(body, asked, 2), headers)["result"]["content"][0]["text"] == "3 dicatat"
    assert (first.runs, second.runs) == (0, 1)


def test_a_server_with_other_keys_refuses_the_confirmation() -> None:
    counter = Counter()
    with server_with_write(Counter(), state_keys=KEYS) as url_a, server_with_write(counter) as url_b:
        body, headers, asked = first_round(url_a)
        assert call(url_b, accepted_retry(body, asked, 2), headers)["error"]["code"] == -32602
    assert counter.runs == 0


def test_state_keys_shorter_than_32_bytes_are_refused() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        ServerSettings(state_keys="pendek")


@needs_redis
def test_replicas_sharing_a_store_use_each_confirmation_once(redis_url: str) -> None:
    first, second = Counter(), Counter()
    shared = {"state_keys": KEYS, "confirm_storage": redis_url}
    with server_with_write(first, **shared) as url_a, server_with_write(second, **shared) as url_b:
        body, headers, asked = first_round(url_a)
        assert call(url_b, accepted_retry(body, asked, 2), headers)["result"]["content"][0]["text"] == "3 dicatat"
        again = call(url_a, accepted_retry(body, asked, 3), headers)  # the other replica never saw it used
        assert again["error"]["code"] == -32602
    assert (first.runs, second.runs) == (0, 1)


def test_without_a_shared_store_the_other_replica_would_run_it_again() -> None:
    """Why the shared store exists: with memory claims the replay on the other replica runs the body again (the
    service's Idempotency-Key still keeps that from writing twice)."""
    first, second = Counter(), Counter()
    with server_with_write(first, state_keys=KEYS) as url_a, server_with_write(second, state_keys=KEYS) as url_b:
        body, headers, asked = first_round(url_a)
        call(url_b, accepted_retry(body, asked, 2), headers)
        call(url_a, accepted_retry(body, asked, 3), headers)
    assert (first.runs, second.runs) == (1, 1)
    assert first.keys == second.keys  # the same Idempotency-Key both times


@needs_redis
def test_an_unreachable_store_refuses_the_round(redis_url: str) -> None:
    counter = Counter()
    unreachable = f"redis://127.0.0.1:{free_port()}/0"
    with server_with_write(counter, confirm_storage=unreachable) as url:
        body, headers, asked = first_round(url)
        refused = call(url, accepted_retry(body, asked, 2), headers)
    assert refused["error"]["code"] == -32603 and "nothing was written" in refused["error"]["message"]
    assert counter.runs == 0


def test_the_store_setting_takes_memory_or_a_redis_url() -> None:
    assert ServerSettings(confirm_storage="redis://cache.sekolah:6379/2").confirm_storage.startswith("redis://")
    for wrong in ("memcached://x", "redis://", "file:///tmp/claims"):
        with pytest.raises(ValueError):
            ServerSettings(confirm_storage=wrong)


# --- a confirmation is claimed only by the call it confirms ------------------------------------------------------

# Where an onlooker who saw a sealed state could send it: other methods of either era, another tool, other arguments.
ELSEWHERE: list[tuple[str, dict[str, Any], str]] = [
    ("tools/list", {}, MODERN),
    ("tools/list", {}, "legacy"),
    ("ping", {}, "legacy"),
    ("prompts/list", {}, MODERN),
    ("resources/read", {"uri": "asrama://kamar"}, MODERN),
    ("prompts/get", {"name": "laporan_bulanan_wali", "arguments": {"id_anak": "A001"}}, MODERN),
    ("tools/call", {"name": "cari_anak", "arguments": {"nama": "Ahmad"}}, MODERN),
    ("tools/call", {"name": "tulis", "arguments": {"n": 4}}, MODERN),
]


def carrying(url: str, state: str, method: str, params: dict[str, Any], era: str) -> dict[str, Any]:
    """`method` sent with `state` as its requestState; the answer."""
    body, headers = rpc(method, {**params, "requestState": state}, era=era)
    if era == MODERN and method in ("resources/read", "prompts/get"):
        headers["Mcp-Name"] = params.get("uri") or params["name"]
    return reply(httpx2.post(url, json=body, headers=headers, timeout=15))


def burn_attempts(url: str, state: str) -> None:
    """Send `state` everywhere but the call it confirms: a call it does not confirm is refused by the SDK's seal
    (-32602); a method that carries no confirmation ignores it."""
    for method, params, era in ELSEWHERE:
        answer = carrying(url, state, method, params, era)
        if method in ("tools/call", "resources/read", "prompts/get"):
            assert answer["error"]["code"] == -32602, (method, params, answer)
        else:
            assert "error" not in answer or answer["error"]["code"] == -32601, (method, era, answer)


def test_a_state_sent_anywhere_but_its_own_call_is_not_burnt() -> None:
    counter = Counter()
    with server_with_write(counter) as url:
        body, headers, asked = first_round(url)
        burn_attempts(url, asked["requestState"])
        assert counter.runs == 0
        done = call(url, accepted_retry(body, asked, 2), headers)  # its own caller's retry still writes, once
        assert done["result"]["content"][0]["text"] == "3 dicatat"
        assert call(url, accepted_retry(body, asked, 3), headers)["error"]["code"] == -32602
    assert counter.runs == 1


def test_a_full_claim_store_refuses_new_confirmations_and_forgets_no_used_one() -> None:
    counter = Counter()
    with server_with_write(counter, max_claims=1) as url:
        body_a, headers, asked_a = first_round(url, 3)
        body_b, _, asked_b = first_round(url, 5)
        assert call(url, accepted_retry(body_a, asked_a, 2), headers)["result"]["content"][0]["text"] == "3 dicatat"
        refused = call(url, accepted_retry(body_b, asked_b, 3), headers)  # the store is full: refused, not evicted
        assert refused["error"] == {"code": -32603, "message": FULL}
        again = call(url, accepted_retry(body_a, asked_a, 4), headers)  # so the used one is still refused
        assert again["error"]["code"] == -32602
    assert counter.runs == 1


@needs_redis
def test_states_sent_elsewhere_or_forged_leave_no_key_in_the_shared_store(redis_url: str) -> None:
    counter = Counter()
    with server_with_write(counter, confirm_storage=redis_url) as url:
        body, headers, asked = first_round(url)
        state = asked["requestState"]
        burn_attempts(url, state)
        for junk in ("v1." + "A" * 80, "v1.bukan-state", "x" * 1000, state[:-4] + "AAAA"):
            assert (
                call(url, accepted_retry(body, {**asked, "requestState": junk}, 2), headers)["error"]["code"] == -32602
            )
            carrying(url, junk, "tools/list", {}, MODERN)
        assert anyio.run(redis_keys, redis_url) == 0
        assert call(url, accepted_retry(body, asked, 3), headers)["result"]["content"][0]["text"] == "3 dicatat"
        assert anyio.run(redis_keys, redis_url) == 1  # the one verified, used confirmation
    assert counter.runs == 1


async def redis_keys(url: str) -> int:
    """How many keys the Redis at `url` holds."""
    client: coredis.Redis[str] = coredis.Redis.from_url(url, decode_responses=True)
    return await client.dbsize()
