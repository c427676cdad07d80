"""The claim store behind single-use confirmations: a key is claimed once within its TTL, then forgotten; bounded
without forgetting an unexpired claim; and a state the SDK did not verify is never claimed nor let through."""

import json
from pathlib import Path
from typing import Annotated

import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.server.mcpserver import Elicit, ElicitationResult, Resolve
from mcp.server.request_state import RequestStateBoundary
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult
from pydantic import BaseModel

from mcp_asrama.server.app import build_server
from mcp_asrama.server.guard.confirm import FULL, UNVERIFIED, Claimed, ClaimsFull, MemoryClaims, digest
from mcp_asrama.server.settings import ServerSettings
from tests.server.conftest import server_for
from tests.server.support import closed_port_url

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_a_key_is_claimed_once_within_its_ttl_then_forgotten() -> None:
    clock = Clock()
    claims = MemoryClaims(clock=clock)
    assert await claims.claim("k", ttl=600) is True
    assert await claims.claim("k", ttl=600) is False
    clock.now += 599
    assert await claims.claim("k", ttl=600) is False
    clock.now += 1
    assert await claims.claim("k", ttl=600) is True  # the state it named has expired by now: the SDK refuses it anyway


async def test_a_full_store_refuses_new_claims_and_forgets_none_before_its_ttl() -> None:
    clock = Clock()
    claims = MemoryClaims(max_keys=3, clock=clock)
    for key in "abc":
        assert await claims.claim(key, ttl=600)
    with pytest.raises(ClaimsFull):
        await claims.claim("d", ttl=600)
    assert "d" not in claims
    assert await claims.claim("a", ttl=600) is False  # still claimed: a full store never evicts
    clock.now += 600
    assert await claims.claim("d", ttl=600) is True  # once the old claims expire there is room again
    assert "a" not in claims


class Setuju(BaseModel):
    setuju: bool


async def tanya() -> Elicit[Setuju]:
    return Elicit("Tulis?", Setuju)


async def test_a_state_the_sdk_did_not_verify_is_refused_and_claims_nothing() -> None:
    """Were the SDK's boundary ever to stop verifying a confirming method (here: taken out), the state reaching
    the claim is the one that arrived: refused (-32603), nothing claimed, the tool never runs."""
    server = build_server(ServerSettings(api_url=closed_port_url(), api_token="t", writes=True))
    runs: list[bool] = []

    async def tulis(jawaban: Annotated[ElicitationResult[Setuju], Resolve(tanya)]) -> str:
        runs.append(True)
        return "ditulis"

    server.tool(name="tulis")(tulis)
    server.middleware[:] = [m for m in server.middleware if not isinstance(m, RequestStateBoundary)]

    async def accept(_ctx: object, _params: object) -> ElicitResult:
        return ElicitResult(action="accept", content={"setuju": True})

    async with Client(server, mode="2026-07-28", cache=None, elicitation_callback=accept) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("tulis", {})
    assert (refused.value.error.code, refused.value.error.message) == (-32603, UNVERIFIED)
    assert runs == []


def test_a_digest_never_holds_the_token() -> None:
    token = "v1.rahasia-state"
    assert token not in digest(token) and len(digest(token)) == 64 and digest(token) == digest(token)


async def test_a_round_refused_by_a_full_store_is_audited_as_refused(service_app: FastAPI, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    server = server_for(service_app, writes=True, audit_log=log)
    [claimed] = [m for m in server.middleware if isinstance(m, Claimed)]
    assert isinstance(claimed.claims, MemoryClaims)
    claimed.claims.max_keys = 1

    async def accept(_ctx: object, _params: object) -> ElicitResult:
        return ElicitResult(action="accept", content={"setuju": True})

    async with Client(server, mode="2026-07-28", cache=None, elicitation_callback=accept) as client:
        first = await client.call_tool(
            "catat_absensi", {"tanggal": "2026-10-20", "entri": [{"id_anak": "A001", "status": "hadir"}]}
        )
        assert not first.is_error
        with pytest.raises(MCPError) as refused:
            await client.call_tool(
                "catat_absensi", {"tanggal": "2026-10-21", "entri": [{"id_anak": "A001", "status": "hadir"}]}
            )
    assert (refused.value.error.code, refused.value.error.message) == (-32603, FULL)
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    confirmations = [e["write"]["confirmation"] for e in entries if "write" in e]
    assert confirmations[-1] == "refused" and "accepted" in confirmations
