"""Over real HTTP with real tokens: a scoped token sees only its rooms and classes in every tool, resource and
prompt; a token without the claim sees nothing; each disclosure is audited under the token's subject."""

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_asrama.server.guard import audit_check
from tests.auth.conftest import Mcp, jwt_settings, mcp_in_thread
from tests.auth.idp import Idp
from tests.auth.support import bearer_client

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

HIDDEN = ("A001", "A002", "Ahmad", "Budi", "Al-Fatih", "Hasan", "Ridwan")
EVERY_TOOL = [
    ("cari_anak", {}),
    ("cari_anak", {"nama": "a"}),
    ("detail_anak", {"id_anak": "A003"}),
    ("daftar_kamar", {}),
    ("absensi_harian", {"tanggal": "2026-10-06"}),
    ("rekap_absensi", {"dari": "2026-10-01", "sampai": "2026-10-31"}),
]
EVERY_RESOURCE = ["asrama://kamar", "asrama://anak/A003", "asrama://absensi/2026-10-06"]


async def everything_seen(client: Client) -> str:
    """The text of every tool, resource and prompt answer this principal can get."""
    seen = [result.content[0].text for result in [await client.call_tool(n, a) for n, a in EVERY_TOOL]]
    for uri in EVERY_RESOURCE:
        try:
            seen.append((await client.read_resource(uri)).contents[0].text)
        except MCPError as exc:
            seen.append(exc.error.message)
    for name, arguments in [
        ("laporan_kamar", {"nama_kamar": "Aisyah 2"}),
        ("laporan_harian", {"tanggal": "2026-10-06"}),
    ]:
        seen.append((await client.get_prompt(name, arguments)).messages[0].content.text)
    return "\n".join(seen)


def musyrif_token(idp: Idp, mcp: Mcp, **claims: Any) -> str:
    return idp.mint(mcp.public_url, sub="ustz-halimah", asrama_scope=["kamar:Aisyah 2"], **claims)


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
async def test_a_musyrif_token_sees_only_her_room_everywhere(jwt_mcp: Mcp, idp: Idp, era: str) -> None:
    async with bearer_client(jwt_mcp.url, musyrif_token(idp, jwt_mcp), era) as client:
        seen = await everything_seen(client)
        hidden = await client.call_tool("detail_anak", {"id_anak": "A001"})
        assert hidden.is_error and "tidak ditemukan" in hidden.content[0].text
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("laporan_kamar", {"nama_kamar": "Al-Fatih 1"})
        assert refused.value.error.code == -32602
    assert "Citra Lestari" in seen and '"total":1' in seen
    for value in HIDDEN:
        assert value not in seen, value


async def test_an_all_token_sees_everyone_and_a_token_without_the_claim_sees_no_one(jwt_mcp: Mcp, idp: Idp) -> None:
    async with bearer_client(jwt_mcp.url, idp.mint(jwt_mcp.public_url, asrama_scope=["all"]), "2026-07-28") as c:
        assert (await c.call_tool("cari_anak", {})).structured_content["total"] == 3
    no_claim = idp.mint(jwt_mcp.public_url, asrama_scope=None)
    async with bearer_client(jwt_mcp.url, no_claim, "2026-07-28") as client:
        body = (await client.call_tool("cari_anak", {})).structured_content
        assert (body["total"], body["data"]) == (0, [])
        assert (await client.call_tool("daftar_kamar", {})).structured_content["data"] == []
        hidden = await client.call_tool("detail_anak", {"id_anak": "A001"})
        assert hidden.is_error


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("kamar:Al-Fatih 1", {"A001", "A002"}),  # one string, a space inside the room's name
        ("kamar:Aisyah 2,kelas:8B", {"A002", "A003"}),
        ("kamar:Aula all", set()),  # a bare word `all` inside an entry grants nothing
        ("all kamar:Aula", set()),
        (["kamar:Aula", "ALL"], set()),
    ],
)
async def test_a_string_scope_claim_is_split_on_commas_only(
    jwt_mcp: Mcp, idp: Idp, claim: object, expected: set[str]
) -> None:
    token = idp.mint(jwt_mcp.public_url, sub="musyrif", asrama_scope=claim)
    async with bearer_client(jwt_mcp.url, token, "2026-07-28") as client:
        body = (await client.call_tool("cari_anak", {})).structured_content
    assert {row["id"] for row in body["data"]} == expected
    assert body["total"] == len(expected)


async def test_disclosures_are_audited_under_the_token_subject(idp: Idp, service_url: str, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    settings = jwt_settings(idp, api_url=service_url, audit_log=log)
    with mcp_in_thread(**settings) as mcp:
        async with bearer_client(mcp.url, musyrif_token(idp, mcp), "2026-07-28") as client:
            await client.call_tool("cari_anak", {"kelas": "7A"})
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    call = next(e for e in entries if e["method"] == "tools/call")
    assert call["subject"] == "ustz-halimah"
    assert call["disclosed"] == ["A003"]
    assert audit_check.verify(log)[0]
    assert [e["subject"] for e in audit_check.who_saw(log, "A003")] == ["ustz-halimah"]
    assert audit_check.who_saw(log, "A001") == []


def test_requests_the_gate_refuses_cost_no_rate(idp: Idp, service_url: str) -> None:
    from tests.auth.support import post

    limits = {"rate_limit": "1/h", "rate_burst": 2}
    with mcp_in_thread(**jwt_settings(idp, api_url=service_url, **limits)) as mcp:
        token = musyrif_token(idp, mcp)
        for _ in range(5):
            refused = post(
                mcp.url,
                "resources/read",
                {"uri": "asrama://kamar"},
                token=token,
                headers={"Origin": "https://evil.example"},
            )
            assert refused.status_code == 403
        allowed = post(mcp.url, "resources/read", {"uri": "asrama://kamar"}, token=token)
        assert allowed.status_code == 200, allowed.text


async def test_a_musyrif_token_may_listen_to_her_room_only(jwt_mcp: Mcp, idp: Idp) -> None:
    """Subscribing is reading: a listen naming a student outside the token's scope is refused as if the student did
    not exist, and one on her own student and the day is acknowledged."""
    async with bearer_client(jwt_mcp.url, musyrif_token(idp, jwt_mcp), "2026-07-28") as client:
        mine = ["asrama://anak/A003", "asrama://absensi/2026-10-06"]
        async with client.listen(resource_subscriptions=mine) as subscription:
            assert subscription.honored.resource_subscriptions == mine
        with pytest.raises(MCPError) as refused:
            async with client.listen(resource_subscriptions=["asrama://anak/A001"]):
                pass
    assert refused.value.error.code == -32602
    assert refused.value.error.message == (
        "Tidak dapat berlangganan asrama://anak/A001: "
        "Anak dengan id 'A001' tidak ditemukan; cari id-nya dengan cari_anak"
    )
