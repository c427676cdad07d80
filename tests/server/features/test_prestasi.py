"""Achievements: one student's achievements, the summary and the resource follow the room/class scope (a role alone
adds none), who recorded one never leaves, and an achievement is recorded only after a person confirms it, on a
form, on the Apps view or on the browser page, once. Against the real data service, in both protocol eras."""

import json
import webbrowser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult

from mcp_asrama.server import features
from mcp_asrama.server.features.write import META
from tests.conftest import service_client
from tests.server.conftest import connect, server_for
from tests.server.support import call_error, call_ok, tutorial_upstream
from tests.server.test_views import AppsHost

pytestmark = pytest.mark.anyio

RANGE = {"dari": "2026-10-01", "sampai": "2026-10-31"}
# A001 7A Al-Fatih 1, A002 8B Al-Fatih 1, A003 7A Aisyah 2
ACHIEVEMENTS = [
    ("A001", "2026-10-05", "tahfidz", "kabupaten", "Juara 2 MTQ cabang hifzil Qur'an"),
    ("A001", "2026-10-20", "olahraga", "pesantren", None),
    ("A002", "2026-10-10", "seni", "nasional", "Juara harapan festival nasyid"),
    ("A003", "2026-10-12", "akademik", "provinsi", "Finalis lomba debat bahasa Arab"),
    ("A003", "2026-09-12", "akademik", "pesantren", "Juara 1 cerdas cermat"),  # before the range
]
ORDER = ["A002", "A003", "A001"]  # the highest level first: nasional, provinsi, kabupaten
SCOPES: list[tuple[list[str], list[str]]] = [
    (["kamar:Aisyah 2"], ["A003"]),
    (["kelas:7A"], ["A003", "A001"]),
    (["kamar:Al-Fatih 1"], ["A002", "A001"]),
    (["kamar:Aisyah 2", "kelas:8B"], ["A002", "A003"]),  # two sides: counted from the visible records
    (["peran:bk"], []),  # counselling widens violations only
    (["all"], ORDER),
    ([], []),
]
KALIGRAFI = "Juara 1 lomba kaligrafi"
WRITE = {"id_anak": "A003", "tanggal": "2026-10-21", "bidang": "seni", "tingkat": "kabupaten", "keterangan": KALIGRAFI}
QUESTION = (
    "Catat prestasi seni tingkat kabupaten untuk Citra Lestari (A003) pada 2026-10-21.\n"
    f"Keterangan: {KALIGRAFI}\nSetujui untuk mencatat?"
)


async def seed(app: FastAPI) -> None:
    async with service_client(app) as rest:
        for n, (id_anak, tanggal, bidang, tingkat, keterangan) in enumerate(ACHIEVEMENTS):
            body = {"id_anak": id_anak, "tanggal": tanggal, "bidang": bidang, "tingkat": tingkat}
            body |= {"keterangan": keterangan} if keterangan else {}
            headers = {"Idempotency-Key": f"seed-prestasi-{n:04d}", "X-Asrama-Actor": "pencatat-rahasia"}
            assert (await rest.post("/prestasi", json=body, headers=headers)).status_code == 201


async def stored(app: FastAPI) -> list[dict[str, Any]]:
    async with service_client(app) as rest:
        return list((await rest.get("/prestasi", params={"id_anak": "A003", **RANGE})).json()["data"])


@pytest.mark.parametrize(("scope", "seen"), SCOPES)
async def test_achievements_follow_the_scope(service_app: FastAPI, era: str, scope: list[str], seen: list[str]) -> None:
    await seed(service_app)
    in_range = [a for a in ACHIEVEMENTS if a[0] in seen and a[1] >= RANGE["dari"]]
    async with connect(server_for(service_app, stdio_scope=scope), era) as client:
        rekap = await call_ok(client, "rekap_prestasi", RANGE)
        outputs = [json.dumps(rekap)]
        for id_anak in ("A001", "A002", "A003"):
            if id_anak not in seen:
                hidden = await call_error(client, "prestasi_anak", {"id_anak": id_anak})
                unknown = await call_error(client, "prestasi_anak", {"id_anak": "X999"})
                assert hidden.replace(id_anak, "X") == unknown.replace("X999", "X")
                with pytest.raises(MCPError):
                    await client.read_resource(f"asrama://anak/{id_anak}/prestasi")
                continue
            body = await call_ok(client, "prestasi_anak", {"id_anak": id_anak, **RANGE})
            mine = sorted((a for a in in_range if a[0] == id_anak), key=lambda a: a[1], reverse=True)
            assert [(d["tanggal"], d["bidang"], d["tingkat"], d.get("keterangan")) for d in body["data"]] == [
                a[1:] for a in mine
            ]
            assert body["jumlah"] == len(mine) == sum(body["per_tingkat"].values()) == sum(body["per_bidang"].values())
            assert list(body["per_tingkat"]) == ["pesantren", "kabupaten", "provinsi", "nasional"]
            everything = await call_ok(client, "prestasi_anak", {"id_anak": id_anak})
            resource = await client.read_resource(f"asrama://anak/{id_anak}/prestasi")
            assert json.loads(resource.contents[0].text) == everything  # no range: every achievement
            outputs += [json.dumps(body), resource.contents[0].text]
    assert rekap["jumlah_anak"] == len(seen) and [r["id_anak"] for r in rekap["anak_berprestasi"]] == seen
    assert rekap["total"]["jumlah"] == len(in_range) == sum(b["jumlah"] for b in rekap["per_bidang"])
    assert [b["bidang"] for b in rekap["per_bidang"]] == ["tahfidz", "akademik", "olahraga", "seni", "lainnya"]
    assert "pencatat-rahasia" not in "".join(outputs) and "dicatat_oleh" not in "".join(outputs)


async def test_a_service_without_achievements_says_so(era: str) -> None:
    async with connect(server_for(tutorial_upstream()), era) as client:
        one = await call_error(client, "prestasi_anak", {"id_anak": "A001"})
        rekap = await call_error(client, "rekap_prestasi", RANGE)
        backwards = await call_error(client, "rekap_prestasi", {"dari": "2026-10-31", "sampai": "2026-10-01"})
    assert "tidak menyediakan data prestasi" in one and "tidak menyediakan data prestasi" in rekap
    assert "sampai" in backwards


def person(asked: list[str], action: str) -> Any:
    async def answer(_ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action=action, content={"setuju": True} if action == "accept" else None)  # type: ignore[arg-type]

    return answer


@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_a_form_confirms_each_achievement(service_app: FastAPI, era: str, action: str, tmp_path: Path) -> None:
    asked: list[str] = []
    log = tmp_path / "audit.jsonl"
    server = server_for(service_app, writes=True, stdio_scope=["kamar:Aisyah 2", "peran:bk"], audit_log=log)
    async with Client(server, mode=era, cache=None, elicitation_callback=person(asked, action)) as client:
        body = await call_ok(client, "catat_prestasi", WRITE)
        outside = await call_error(client, "catat_prestasi", {**WRITE, "id_anak": "A001"})
        future = await call_error(client, "catat_prestasi", {**WRITE, "tanggal": "2999-01-01"})
        wrong = await client.call_tool("catat_prestasi", {**WRITE, "tingkat": "dunia"})
    assert asked == [QUESTION] and "tidak ditemukan" in outside and "hari ini" in future and wrong.is_error
    rows = await stored(service_app)
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    written = [(e["write"]["confirmation"], e["write"]["changes"]) for e in entries if e.get("write")]
    assert KALIGRAFI not in log.read_text()  # the audit keeps ids and statuses only
    if action == "accept":
        assert body["hasil"] == "ditulis" and body["id_anak"] == "A003"
        assert body["prestasi"] == {"id_prestasi": rows[0]["id"], **{k: v for k, v in WRITE.items() if k != "id_anak"}}
        assert [(r["bidang"], r["tingkat"], r["keterangan"]) for r in rows] == [("seni", "kabupaten", KALIGRAFI)]
        change = {"id": "A003", "old": None, "new": "prestasi", "prestasi": rows[0]["id"]}
        assert ("accepted", [change]) in written
    else:
        assert body["hasil"] == "ditolak" and rows == [] and ("declined", []) in written


async def test_the_view_decides_once(service_app: FastAPI, era: str) -> None:
    server = server_for(service_app, writes=True, stdio_scope=["kelas:7A"])
    async with Client(server, mode=era, cache=None, extensions=[AppsHost()]) as client:
        result = await client.call_tool("catat_prestasi", WRITE)
        assert not result.is_error and result.meta is not None, result
        waiting, found = result.structured_content, result.meta[META]
        assert waiting is not None and waiting["hasil"] == "menunggu" and waiting["pertanyaan"] == QUESTION
        assert await stored(service_app) == []
        decide = {"id_usulan": found["id"], "kunci": found["kunci"], "keputusan": "setuju"}
        decided = await call_ok(client, "putuskan_usulan", decide)
        replay = await call_error(client, "putuskan_usulan", decide)
        declined = await client.call_tool("catat_prestasi", {**WRITE, "tanggal": "2026-10-22"})
        assert declined.meta is not None
        no = {"id_usulan": declined.meta[META]["id"], "kunci": declined.meta[META]["kunci"], "keputusan": "tolak"}
        assert (await call_ok(client, "putuskan_usulan", no))["status"] == "ditolak"
    assert decided["status"] == "ditulis" and decided["hasil"]["prestasi"]["bidang"] == "seni" and replay
    assert [r["tanggal"] for r in await stored(service_app)] == ["2026-10-21"]  # written once, the declined not


async def test_the_browser_page_decides_once(service_app: FastAPI, era: str, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda url, new=0: opened.append(url) or True)
    server = server_for(service_app, writes=True, konfirmasi=["halaman"], stdio_scope=["kamar:Aisyah 2"])
    async with Client(server, mode=era, cache=None) as client:
        waiting = await call_ok(client, "catat_prestasi", WRITE)
        await call_ok(client, "catat_prestasi", {**WRITE, "tanggal": "2026-10-22"})  # keeps the page bound
        url = opened[0]
        parts = urlsplit(url)
        origin, yes = f"{parts.scheme}://{parts.netloc}", {"rahasia": parts.fragment, "keputusan": "setuju"}
        async with httpx2.AsyncClient(headers={"Origin": origin}) as http:
            asked = await http.post(f"{origin}{parts.path}/pertanyaan", json={"rahasia": parts.fragment})
            decided = await http.post(f"{origin}{parts.path}/keputusan", json=yes)
            replay = await http.post(f"{origin}{parts.path}/keputusan", json=yes)
        checked = await call_ok(client, "cek_usulan", {"id_usulan": waiting["id_usulan"]})
    assert waiting["hasil"] == "menunggu" and asked.json()["pertanyaan"] == QUESTION and len(opened) == 2
    assert (decided.status_code, replay.status_code, checked["status"]) == (200, 409, "ditulis")
    assert len(await stored(service_app)) == 1


async def test_only_a_server_that_writes_lists_catat_prestasi(service_app: FastAPI, era: str) -> None:
    async with connect(server_for(service_app), era) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        with pytest.raises(MCPError) as refused:
            await client.call_tool("catat_prestasi", WRITE)
    assert "prestasi_anak" in names and "rekap_prestasi" in names and "catat_prestasi" not in names
    assert refused.value.error.code == -32602 and await stored(service_app) == []
    async with connect(server_for(service_app, writes=True), era) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    declared = {
        n: (list(t.input_schema["properties"]), sorted(t.input_schema.get("required", []))) for n, t in tools.items()
    }
    assert declared["prestasi_anak"] == (["id_anak", "dari", "sampai"], ["id_anak"])
    assert declared["rekap_prestasi"] == (["dari", "sampai", "kelas", "kamar"], ["dari", "sampai"])
    assert declared["catat_prestasi"] == (
        ["id_anak", "tanggal", "bidang", "tingkat", "keterangan"],
        ["bidang", "id_anak", "tanggal", "tingkat"],
    )
    hints = tools["catat_prestasi"].annotations
    assert hints is not None and hints.read_only_hint is False and hints.idempotent_hint is False
    assert list(tools).index("catat_prestasi") > list(tools).index("akhiri_izin")  # after every listed tool
    assert "catat prestasi (catat_prestasi)" in features.instructions(writes=True)


async def test_the_parents_report_shows_achievements_beside_violations(service_app: FastAPI, era: str) -> None:
    async with connect(server_for(service_app, stdio_scope=["kelas:7A"]), era) as client:
        result = await client.get_prompt("laporan_bulanan_wali", {"id_anak": "A001", "bulan": "2026-10"})
    text = result.messages[0].content.text  # type: ignore[union-attr]
    assert 'prestasi_anak(id_anak="A001", dari="2026-10-01", sampai="2026-10-31")' in text
    assert "disiplin dan prestasi" in text and text.index("pelanggaran_anak(") < text.index("prestasi_anak(")
