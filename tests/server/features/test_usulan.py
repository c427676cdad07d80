"""Writes confirmed outside the call (issue 20): a host that renders MCP Apps and shows no form gets an usulan; the
view's `putuskan_usulan` with the key from the result's `_meta` decides it once; the model never sees the key.
Against the real data service, in both protocol eras."""

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ElicitResult

from mcp_asrama.server.features.write import META
from tests.conftest import service_client
from tests.server.conftest import server_for
from tests.server.support import call_error, call_ok
from tests.server.support_records import CLINIC, SECRET
from tests.server.test_views import AppsHost

pytestmark = pytest.mark.anyio

DAY = "2026-10-21"
ROLL_CALL = {"tanggal": DAY, "entri": [{"id_anak": "A002", "status": "sakit"}], "kamar": "Al-Fatih 1",
             "yang_lain": "hadir"}  # fmt: skip


def apps_host(app: FastAPI, era: str, **settings: Any) -> Client:
    """A host that renders views and declares no form elicitation (claude.ai, ChatGPT)."""
    return Client(server_for(app, writes=True, **settings), mode=era, cache=None, extensions=[AppsHost()])


async def day_of(app: FastAPI) -> dict[str, str]:
    async with service_client(app) as rest:
        rows = (await rest.get("/absensi", params={"tanggal": DAY})).json()["data"]
    return {r["id_anak"]: r["status"] for r in rows}


def key_of(result: CallToolResult) -> tuple[str, str]:
    """The usulan id and its key, from the result's `_meta` only; neither the key nor `_meta` reaches the model."""
    assert result.meta is not None, result
    found = result.meta[META]
    seen_by_model = json.dumps([c.model_dump() for c in result.content]) + json.dumps(result.structured_content)
    assert found["kunci"] not in seen_by_model
    return found["id"], found["kunci"]


async def propose(client: Client) -> tuple[str, str, dict[str, Any]]:
    result = await client.call_tool("catat_absensi", ROLL_CALL)
    assert not result.is_error and isinstance(result.structured_content, dict), result
    id_usulan, kunci = key_of(result)
    return id_usulan, kunci, result.structured_content


async def test_a_click_on_setuju_writes_once_and_the_model_is_told_to_wait(service_app: FastAPI, era: str) -> None:
    async with apps_host(service_app, era) as client:
        id_usulan, kunci, body = await propose(client)
        assert (body["hasil"], body["id_usulan"]) == ("menunggu", id_usulan)
        assert "cek_usulan" in body["pesan"] and "- Budi Santoso (A002): belum dicatat → sakit" in body["pertanyaan"]
        assert await day_of(service_app) == {}
        assert (await call_ok(client, "cek_usulan", {"id_usulan": id_usulan}))["status"] == "menunggu"
        decided = await call_ok(
            client, "putuskan_usulan", {"id_usulan": id_usulan, "kunci": kunci, "keputusan": "setuju"}
        )
        again = await call_error(
            client, "putuskan_usulan", {"id_usulan": id_usulan, "kunci": kunci, "keputusan": "setuju"}
        )
        checked = await call_ok(client, "cek_usulan", {"id_usulan": id_usulan})
    assert decided["status"] == "ditulis" and decided["hasil"]["jumlah"] == 2
    assert "sudah diputuskan" in again
    assert (checked["status"], checked["hasil"]["baru"]) == ("ditulis", 2)
    assert await day_of(service_app) == {"A001": "hadir", "A002": "sakit"}


async def test_tolak_writes_nothing(service_app: FastAPI, era: str) -> None:
    async with apps_host(service_app, era) as client:
        id_usulan, kunci, _ = await propose(client)
        decided = await call_ok(
            client, "putuskan_usulan", {"id_usulan": id_usulan, "kunci": kunci, "keputusan": "tolak"}
        )
        checked = await call_ok(client, "cek_usulan", {"id_usulan": id_usulan})
    assert decided["status"] == checked["status"] == "ditolak"
    assert await day_of(service_app) == {}


async def test_the_model_cannot_decide_without_the_key(service_app: FastAPI, era: str) -> None:
    async with apps_host(service_app, era) as client:
        id_usulan, kunci, _ = await propose(client)
        guessed = await call_error(
            client, "putuskan_usulan", {"id_usulan": id_usulan, "kunci": "A" * 24, "keputusan": "setuju"}
        )
        unknown = await call_error(
            client, "putuskan_usulan", {"id_usulan": "B" * 24, "kunci": kunci, "keputusan": "setuju"}
        )
        missing = await client.call_tool("putuskan_usulan", {"id_usulan": id_usulan, "keputusan": "setuju"})
        still = await call_ok(client, "cek_usulan", {"id_usulan": id_usulan})
    assert "tidak cocok" in guessed and "tidak ditemukan" in unknown and missing.is_error
    assert still["status"] == "menunggu" and await day_of(service_app) == {}


async def test_the_app_only_tool_is_marked_for_the_view_and_writes_link_the_view(
    service_app: FastAPI, era: str
) -> None:
    async with apps_host(service_app, era) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    ui = (tools["putuskan_usulan"].meta or {})["ui"]
    assert (ui["visibility"], ui["resourceUri"]) == (["app"], "ui://asrama/konfirmasi")
    for name in ("catat_absensi", "ajukan_izin", "akhiri_izin", "catat_pelanggaran", "catat_setoran_hafalan"):
        assert (tools[name].meta or {})["ui"]["resourceUri"] == "ui://asrama/konfirmasi"
    assert tools["cek_usulan"].annotations.read_only_hint is True  # type: ignore[union-attr]


async def test_data_changed_before_the_click_writes_nothing_and_asks_again(service_app: FastAPI, era: str) -> None:
    async with apps_host(service_app, era) as client:
        id_usulan, kunci, _ = await propose(client)
        async with service_client(service_app) as rest:  # a colleague records A001 alpa meanwhile
            put = await rest.put(f"/absensi/{DAY}/A001", json={"status": "alpa"}, headers={"X-Asrama-Actor": "ust"})
            assert put.status_code in (200, 201), put.text
        result = await client.call_tool(
            "putuskan_usulan", {"id_usulan": id_usulan, "kunci": kunci, "keputusan": "setuju"}
        )
        assert not result.is_error and isinstance(result.structured_content, dict)
        changed = result.structured_content
        assert await day_of(service_app) == {"A001": "alpa"}
        new_id, new_key = key_of(result)
        decided = await call_ok(
            client, "putuskan_usulan", {"id_usulan": new_id, "kunci": new_key, "keputusan": "setuju"}
        )
        first = await call_ok(client, "cek_usulan", {"id_usulan": id_usulan})
    assert (changed["status"], changed["id_usulan_baru"]) == ("berubah", new_id)
    assert "alpa tidak diubah" in changed["pertanyaan"] or "alpa" in changed["pertanyaan"]
    assert decided["status"] == "ditulis" and (first["status"], first["id_usulan_baru"]) == ("berubah", new_id)
    assert await day_of(service_app) == {"A001": "alpa", "A002": "sakit"}


async def test_an_expired_usulan_writes_nothing_and_is_audited_once(
    service_app: FastAPI, era: str, tmp_path: Path
) -> None:
    log = tmp_path / "audit.jsonl"
    async with apps_host(service_app, era, usulan_menit=0.005, audit_log=log) as client:  # 0.3 s
        id_usulan, kunci, _ = await propose(client)
        await asyncio.sleep(0.4)
        checked = await call_ok(client, "cek_usulan", {"id_usulan": id_usulan})
        again = await call_ok(client, "cek_usulan", {"id_usulan": id_usulan})
        decide = {"id_usulan": id_usulan, "kunci": kunci, "keputusan": "setuju"}
        late = await call_error(client, "putuskan_usulan", decide)
    assert "sudah diputuskan (kedaluwarsa)" in late and checked["status"] == again["status"] == "kedaluwarsa"
    assert await day_of(service_app) == {}
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    ends = [(e["target"], e["write"]["confirmation"]) for e in lines if "write" in e]
    assert ends == [("catat_absensi", "proposed"), ("cek_usulan", "expired"), ("putuskan_usulan", "replayed")]


async def test_a_click_after_the_expiry_is_refused_and_audited_expired(service_app: FastAPI, era: str) -> None:
    async with apps_host(service_app, era, usulan_menit=0.005) as client:  # 0.3 s
        id_usulan, kunci, _ = await propose(client)
        await asyncio.sleep(0.4)
        decide = {"id_usulan": id_usulan, "kunci": kunci, "keputusan": "setuju"}
        late = await call_error(client, "putuskan_usulan", decide)
        checked = await call_ok(client, "cek_usulan", {"id_usulan": id_usulan})
    assert "kedaluwarsa" in late and checked["status"] == "kedaluwarsa"
    assert await day_of(service_app) == {}


async def test_a_host_that_can_confirm_no_way_is_told_which_apps_can(service_app: FastAPI, era: str) -> None:
    async with Client(server_for(service_app, writes=True), mode=era, cache=None) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool("catat_absensi", ROLL_CALL)
    assert refused.value.error.code == -32021
    assert "ASRAMA_KONFIRMASI=halaman" in refused.value.error.message and "claude.ai" in refused.value.error.message
    assert await day_of(service_app) == {}


async def test_decisions_are_audited_with_their_channel(service_app: FastAPI, era: str, tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    async with apps_host(service_app, era, audit_log=log) as client:
        id_usulan, kunci, _ = await propose(client)
        await call_ok(client, "putuskan_usulan", {"id_usulan": id_usulan, "kunci": kunci, "keputusan": "setuju"})
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    writes = [(e["target"], e["write"]["confirmation"], e["write"].get("channel")) for e in lines if "write" in e]
    assert writes == [("catat_absensi", "proposed", "tampilan"), ("putuskan_usulan", "accepted", "tampilan")]
    assert kunci not in log.read_text()
    accepted = lines[-1]["write"]["changes"]
    assert {c["id"]: c["new"] for c in accepted} == {"A001": "hadir", "A002": "sakit"}


async def test_formulir_first_keeps_the_form_for_hosts_that_show_one(service_app: FastAPI, era: str) -> None:
    asked: list[str] = []

    async def person(_ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"setuju": True})

    server = server_for(service_app, writes=True, konfirmasi=["formulir", "tampilan"])
    async with Client(server, mode=era, cache=None, extensions=[AppsHost()], elicitation_callback=person) as client:
        body = await call_ok(client, "catat_absensi", ROLL_CALL)
    assert body["hasil"] == "ditulis" and len(asked) == 1


async def test_a_clinic_visit_shown_again_by_cek_usulan_is_audited_as_health(
    service_app: FastAPI, era: str, tmp_path: Path
) -> None:
    """The written visit `cek_usulan` shows again carries its health details: its line is marked as the write's."""
    log = tmp_path / "audit.jsonl"
    visit = {"id_anak": "A003", "tanggal": "2026-10-06", "kategori": "cedera", **SECRET}
    async with apps_host(service_app, era, stdio_scope=CLINIC, audit_log=log) as client:
        result = await client.call_tool("catat_kunjungan_klinik", visit)
        id_usulan, kunci = key_of(result)
        await call_ok(client, "cek_usulan", {"id_usulan": id_usulan})  # waiting: nothing written to show
        await call_ok(client, "putuskan_usulan", {"id_usulan": id_usulan, "kunci": kunci, "keputusan": "setuju"})
        checked = await call_ok(client, "cek_usulan", {"id_usulan": id_usulan})
    assert checked["hasil"]["kunjungan"]["obat"] == SECRET["obat"]
    lines = [json.loads(line) for line in log.read_bytes().splitlines()]
    checks = [e for e in lines if e["method"] == "tools/call" and e["target"] == "cek_usulan"]
    assert [(e.get("kesehatan"), e.get("disclosed")) for e in checks] == [(None, []), (True, ["A003"])]
