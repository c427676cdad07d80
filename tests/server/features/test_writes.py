"""The write tools in memory, in both eras, against the real data service: a person confirms every write (accept,
decline, cancel, an unticked box, no elicitation capability), all or nothing (unknown, out-of-scope, invalid rows),
scope (a musyrif's `yang_lain` covers his room only), izin defaults, re-asking when the data changed, concurrent
roll calls, izin handles, and the audit of every attempt. Every check reads the service's own records."""

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult

from mcp_asrama.server.guard import audit_check
from tests.conftest import service_client
from tests.server.conftest import server_for
from tests.server.support import WRITE_TOOLS, assert_clean, call_error, call_ok, listed

pytestmark = pytest.mark.anyio

FRESH_DAY = "2026-10-20"  # no records yet
RECORDED_DAY = "2026-10-07"  # A001 hadir, A002 alpa, A003 izin ("Masih di rumah")
TODAY = date.today()


class Person:
    """The person behind the host: answers each confirmation as told, and remembers what was asked."""

    def __init__(self, action: str = "accept", setuju: bool = True) -> None:
        self.action, self.setuju = action, setuju
        self.asked: list[str] = []
        self.before_answer: Callable[[], Any] | None = None

    async def __call__(self, _ctx: Any, params: Any) -> ElicitResult:
        self.asked.append(params.message)
        if self.before_answer is not None:
            await self.before_answer()
            self.before_answer = None
        content = {"setuju": self.setuju} if self.action == "accept" else None
        return ElicitResult(action=self.action, content=content)  # type: ignore[arg-type]


@pytest.fixture
async def rest(service_app: FastAPI) -> AsyncIterator[httpx2.AsyncClient]:
    """The data service itself, to check what was written."""
    async with service_client(service_app) as client:
        yield client


async def day_of(rest: httpx2.AsyncClient, tanggal: str) -> dict[str, tuple[str, str | None]]:
    rows = (await rest.get("/absensi", params={"tanggal": tanggal})).json()["data"]
    return {r["id_anak"]: (r["status"], r.get("keterangan")) for r in rows}


def writer(app: FastAPI, era: str, person: Person | None, **settings: Any) -> Client:
    server = server_for(app, writes=True, **settings)
    return Client(server, mode=era, cache=None, elicitation_callback=person)


async def test_with_writes_off_the_write_tools_do_not_exist(service_app: FastAPI, era: str) -> None:
    async with Client(server_for(service_app), mode=era, cache=None, elicitation_callback=Person()) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert "daftar_izin" in names and not set(WRITE_TOOLS) & set(names)
        for name in WRITE_TOOLS:
            with pytest.raises(MCPError) as refused:
                await client.call_tool(name, {})
            assert refused.value.error.code == -32602


def test_which_tools_write_is_derived_from_their_annotations(service_app: FastAPI) -> None:
    server = server_for(service_app, writes=True)
    every = {"catat_absensi", "ajukan_izin", "akhiri_izin", "catat_pelanggaran", "catat_setoran_hafalan",
             "catat_kunjungan_klinik", "putuskan_usulan"}  # fmt: skip
    assert set(listed(sorted(server.write_tools))) == every

    def unannotated() -> str:
        """A tool that forgot to say whether it writes."""
        return "x"

    server.add_tool(unannotated)  # counted as writing: hidden from a caller who may not write
    assert "unannotated" in server.write_tools


async def test_a_tool_without_annotations_is_hidden_from_read_only_callers(service_app: FastAPI) -> None:
    server = server_for(service_app)

    def unannotated() -> str:
        """A tool that forgot to say whether it writes."""
        return "x"

    server.add_tool(unannotated)
    async with Client(server, mode="2026-07-28", cache=None) as client:
        assert "unannotated" not in {t.name for t in (await client.list_tools()).tools}


async def test_write_tools_are_listed_with_honest_annotations(service_app: FastAPI, era: str) -> None:
    async with writer(service_app, era, Person()) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert listed(list(tools))[-6:] == [
        "catat_absensi", "daftar_izin", "ajukan_izin", "akhiri_izin", "cek_usulan", "putuskan_usulan"
    ]  # fmt: skip
    for name in WRITE_TOOLS:
        hints = tools[name].annotations
        assert hints is not None and hints.read_only_hint is False and hints.destructive_hint is True
        assert "setuju" in (tools[name].description or "") or "menyetujui" in (tools[name].description or "")
    assert tools["catat_absensi"].annotations.idempotent_hint is True  # type: ignore[union-attr]
    assert tools["ajukan_izin"].annotations.idempotent_hint is False  # type: ignore[union-attr]
    schema = tools["catat_absensi"].input_schema
    assert set(schema["properties"]) == {"tanggal", "entri", "kamar", "kelas", "yang_lain"}
    assert set(schema["required"]) == {"tanggal", "entri"}


async def test_a_tool_list_that_depends_on_the_caller_is_cached_privately(service_app: FastAPI) -> None:
    async with Client(server_for(service_app), mode="2026-07-28", cache=None) as client:
        assert (await client.list_tools()).cache_scope == "public"
    async with writer(service_app, "2026-07-28", Person()) as client:
        assert (await client.list_tools()).cache_scope == "private"


async def test_a_roll_call_is_asked_then_written(service_app: FastAPI, rest: httpx2.AsyncClient, era: str) -> None:
    person = Person()
    arguments = {
        "tanggal": FRESH_DAY,
        "entri": [{"id_anak": "A002", "status": "sakit", "keterangan": "Demam"}],
        "kamar": "Al-Fatih 1",
        "yang_lain": "hadir",
    }
    async with writer(service_app, era, person) as client:
        body = await call_ok(client, "catat_absensi", arguments)
    assert person.asked == [
        "Catat absensi 2026-10-20 — kamar Al-Fatih 1: 2 anak; 2 baru, 0 diubah, 0 tetap.\n"
        "Yang berubah:\n"
        "- Budi Santoso (A002): belum dicatat → sakit (Demam)\n"
        "- Ahmad Fauzi (A001): belum dicatat → hadir\n"
        "Nilai lama tetap tersimpan di riwayat. Setujui untuk mencatat?"
    ]
    assert body["hasil"] == "ditulis" and (body["jumlah"], body["baru"], body["diubah"]) == (2, 2, 0)
    assert {p["id_anak"]: p["status_baru"] for p in body["perubahan"]} == {"A002": "sakit", "A001": "hadir"}
    assert await day_of(rest, FRESH_DAY) == {"A001": ("hadir", None), "A002": ("sakit", "Demam")}
    history = (await rest.get(f"/absensi/{FRESH_DAY}/A002/riwayat")).json()["data"]
    assert [(h.get("status_lama"), h["status_baru"], h["oleh"]) for h in history] == [(None, "sakit", "local")]
    assert len(history[0]["kunci"]) >= 16  # the write's Idempotency-Key (the confirmation on 2026-07-28)


async def test_an_overwrite_shows_old_and_new_and_keeps_the_old_value(
    service_app: FastAPI, rest: httpx2.AsyncClient, era: str
) -> None:
    person = Person()
    arguments = {
        "tanggal": RECORDED_DAY,
        "entri": [{"id_anak": "A002", "status": "sakit"}, {"id_anak": "A001", "status": "hadir"}],
    }
    async with writer(service_app, era, person) as client:
        body = await call_ok(client, "catat_absensi", arguments)
    assert person.asked[0].startswith("Catat absensi 2026-10-07: 2 anak; 0 baru, 1 diubah, 1 tetap.\n")
    assert "- Budi Santoso (A002): alpa → sakit\n" in person.asked[0] and "A001" not in person.asked[0]
    assert (body["diubah"], body["tetap"]) == (1, 1)
    history = (await rest.get(f"/absensi/{RECORDED_DAY}/A002/riwayat")).json()["data"]
    assert [(h.get("status_lama"), h["status_baru"]) for h in history][-1] == ("alpa", "sakit")


@pytest.mark.parametrize(
    ("action", "setuju", "hasil"),
    [("decline", True, "ditolak"), ("cancel", True, "dibatalkan"), ("accept", False, "ditolak")],
)
async def test_without_an_accept_nothing_is_written(
    service_app: FastAPI, rest: httpx2.AsyncClient, era: str, action: str, setuju: bool, hasil: str
) -> None:
    person = Person(action, setuju)
    async with writer(service_app, era, person) as client:
        body = await call_ok(
            client, "catat_absensi", {"tanggal": FRESH_DAY, "kamar": "Al-Fatih 1", "entri": [], "yang_lain": "hadir"}
        )
        izin = await call_ok(
            client,
            "ajukan_izin",
            {
                "id_anak": "A001",
                "dari": TODAY.isoformat(),
                "sampai": TODAY.isoformat(),
                "jenis": "pulang",
                "alasan": "Acara keluarga",
            },
        )
    assert len(person.asked) == 2
    assert body["hasil"] == izin["hasil"] == hasil and "tidak ada yang dicatat" in body["pesan"]
    assert await day_of(rest, FRESH_DAY) == {}
    assert (await rest.get("/izin")).json()["total"] == 0


async def test_a_host_without_elicitation_gets_32021_and_nothing_is_written(
    service_app: FastAPI, rest: httpx2.AsyncClient, era: str
) -> None:
    async with writer(service_app, era, None) as client:
        with pytest.raises(MCPError) as refused:
            await client.call_tool(
                "catat_absensi", {"tanggal": FRESH_DAY, "entri": [{"id_anak": "A001", "status": "hadir"}]}
            )
    assert refused.value.error.code == -32021
    assert await day_of(rest, FRESH_DAY) == {}


@pytest.mark.parametrize(
    ("entri", "named"),
    [
        ([{"id_anak": "A001", "status": "hadir"}, {"id_anak": "X404", "status": "hadir"}], ["X404"]),
        ([{"id_anak": "A001", "status": "hadir"}, {"id_anak": "A001", "status": "alpa"}], ["A001"]),
        ([{"id_anak": "A001", "status": "hadir"}, {"id_anak": "A002", "status": "bolos"}], ["entri[1] (A002) status"]),
        ([{"id_anak": "A001", "status": "hadir", "keterangan": "a\nb"}], ["entri[0] (A001) keterangan"]),
    ],
)
async def test_one_bad_row_writes_nothing_and_is_named(
    service_app: FastAPI, rest: httpx2.AsyncClient, era: str, entri: list[dict[str, Any]], named: list[str]
) -> None:
    person = Person()
    async with writer(service_app, era, person) as client:
        message = await call_error(client, "catat_absensi", {"tanggal": FRESH_DAY, "entri": entri})
    assert all(n in message for n in named), message
    assert person.asked == [] and await day_of(rest, FRESH_DAY) == {}


async def test_a_musyrif_records_only_his_room(service_app: FastAPI, rest: httpx2.AsyncClient, era: str) -> None:
    person = Person()
    async with writer(service_app, era, person, stdio_scope=["kamar:Al-Fatih 1"]) as client:
        # A003 lives in Aisyah 2: outside his scope, told apart from an unknown id by nothing.
        outside = await call_error(
            client, "catat_absensi", {"tanggal": FRESH_DAY, "entri": [{"id_anak": "A003", "status": "hadir"}]}
        )
        unknown = await call_error(
            client, "catat_absensi", {"tanggal": FRESH_DAY, "entri": [{"id_anak": "X404", "status": "hadir"}]}
        )
        assert outside.replace("A003", "X404") == unknown
        # Class 7A is A001 (his room) and A003 (not): `yang_lain` covers only A001.
        body = await call_ok(
            client, "catat_absensi", {"tanggal": FRESH_DAY, "kelas": "7A", "entri": [], "yang_lain": "hadir"}
        )
        other_room = await call_error(
            client, "catat_absensi", {"tanggal": FRESH_DAY, "kamar": "Aisyah 2", "entri": [], "yang_lain": "hadir"}
        )
    assert "Aisyah 2" in other_room
    assert [p["id_anak"] for p in body["perubahan"]] == ["A001"]
    assert await day_of(rest, FRESH_DAY) == {"A001": ("hadir", None)}


async def test_a_student_on_izin_stays_izin_under_yang_lain(
    service_app: FastAPI, rest: httpx2.AsyncClient, era: str
) -> None:
    today = TODAY.isoformat()
    made = await rest.post("/izin", json={"id_anak": "A002", "dari": today, "sampai": today, "jenis": "pulang"})
    assert made.status_code == 201
    await rest.put(f"/absensi/{today}/A002", json={"status": "hadir"})  # even when its izin day was overwritten
    person = Person()
    async with writer(service_app, era, person) as client:
        body = await call_ok(
            client, "catat_absensi", {"tanggal": today, "kamar": "Al-Fatih 1", "entri": [], "yang_lain": "hadir"}
        )
    day = await day_of(rest, today)
    assert day["A001"] == ("hadir", None) and day["A002"][0] == "izin"
    assert {p["id_anak"]: p["status_baru"] for p in body["perubahan"]} == {"A001": "hadir", "A002": "izin"}


async def test_nothing_to_change_asks_nobody(service_app: FastAPI, rest: httpx2.AsyncClient, era: str) -> None:
    person = Person()
    async with writer(service_app, era, person) as client:
        body = await call_ok(
            client, "catat_absensi", {"tanggal": RECORDED_DAY, "entri": [{"id_anak": "A001", "status": "hadir"}]}
        )
    assert body["hasil"] == "tetap" and person.asked == []
    assert len((await rest.get(f"/absensi/{RECORDED_DAY}/A001/riwayat")).json()["data"]) == 0


async def test_data_changed_while_asking_is_asked_again(service_app: FastAPI, rest: httpx2.AsyncClient) -> None:
    """On 2026-07-28 the plan is built again with the answer: a change meanwhile re-words the question, so the SDK
    asks again and the person confirms what will really happen."""
    person = Person()

    async def someone_else_records() -> None:
        done = await rest.put(f"/absensi/{FRESH_DAY}/A001", json={"status": "alpa"})
        assert done.status_code in (200, 201)

    person.before_answer = someone_else_records
    async with writer(service_app, "2026-07-28", person) as client:
        body = await call_ok(
            client, "catat_absensi", {"tanggal": FRESH_DAY, "entri": [{"id_anak": "A001", "status": "sakit"}]}
        )
    assert len(person.asked) == 2
    assert "belum dicatat → sakit" in person.asked[0] and "alpa → sakit" in person.asked[1]
    assert body["hasil"] == "ditulis" and await day_of(rest, FRESH_DAY) == {"A001": ("sakit", None)}


async def test_two_roll_calls_on_one_room_at_once_lose_nothing(
    service_app: FastAPI, rest: httpx2.AsyncClient, era: str
) -> None:
    async with writer(service_app, era, Person()) as one, writer(service_app, era, Person()) as two:
        first, second = await asyncio.gather(
            call_ok(
                one,
                "catat_absensi",
                {"tanggal": FRESH_DAY, "kamar": "Al-Fatih 1", "entri": [{"id_anak": "A001", "status": "sakit"}]},
            ),
            call_ok(
                two,
                "catat_absensi",
                {"tanggal": FRESH_DAY, "kamar": "Al-Fatih 1", "entri": [{"id_anak": "A002", "status": "alpa"}]},
            ),
        )
    assert first["hasil"] == second["hasil"] == "ditulis"
    assert await day_of(rest, FRESH_DAY) == {"A001": ("sakit", None), "A002": ("alpa", None)}


async def test_an_izin_is_asked_for_listed_and_ended(service_app: FastAPI, rest: httpx2.AsyncClient, era: str) -> None:
    person = Person()
    dari, sampai = TODAY - timedelta(days=1), TODAY + timedelta(days=2)
    arguments = {
        "id_anak": "A001",
        "dari": dari.isoformat(),
        "sampai": sampai.isoformat(),
        "jenis": "pulang",
        "alasan": "Nenek sakit",
    }
    async with writer(service_app, era, person) as client:
        made = await call_ok(client, "ajukan_izin", arguments)
        handle = made["izin"]["id"]
        clash = await call_error(client, "ajukan_izin", arguments)
        running = await call_ok(client, "daftar_izin", {"aktif": True})
        ended = await call_ok(client, "akhiri_izin", {"id_izin": handle, "tanggal_kembali": TODAY.isoformat()})
        again = await call_error(client, "akhiri_izin", {"id_izin": handle, "tanggal_kembali": TODAY.isoformat()})
        unknown = await call_error(
            client, "akhiri_izin", {"id_izin": "tidak-ada-izin", "tanggal_kembali": TODAY.isoformat()}
        )
        later = await call_ok(client, "daftar_izin", {"aktif": True})
    assert person.asked[0].startswith(f"Ajukan izin pulang untuk Ahmad Fauzi (A001): {dari} s.d. {sampai} (4 hari).\n")
    assert "Alasan: Nenek sakit" in person.asked[0] and "status anak aktif → izin" in person.asked[0]
    assert (
        person.asked[1].startswith("Akhiri izin pulang Ahmad Fauzi (A001)") and "lebih awal 3 hari" in person.asked[1]
    )
    assert len(person.asked) == 2  # the clash and the ended handle were refused before asking
    assert made["hasil"] == "ditulis" and len(handle) >= 16 and handle in made["pesan"]
    assert "bertabrakan" in clash and handle in clash
    assert [i["id"] for i in running["data"]] == [handle] and "alasan" not in running["data"][0]
    assert ended["izin"]["tanggal_kembali"] == TODAY.isoformat() and ended["izin"]["aktif"] is False
    assert "sudah selesai" in again and "daftar_izin" in unknown
    assert later["data"] == []
    student = (await rest.get("/anak/A001")).json()
    assert student["status"] == "aktif"


async def test_izin_of_another_room_is_out_of_reach(service_app: FastAPI, rest: httpx2.AsyncClient, era: str) -> None:
    made = (
        await rest.post(
            "/izin", json={"id_anak": "A003", "dari": TODAY.isoformat(), "sampai": TODAY.isoformat(), "jenis": "sakit"}
        )
    ).json()
    async with writer(service_app, era, Person(), stdio_scope=["kamar:Al-Fatih 1"]) as client:
        listed = await call_ok(client, "daftar_izin", {})
        refused = await call_error(client, "akhiri_izin", {"id_izin": made["id"], "tanggal_kembali": TODAY.isoformat()})
        asked = await call_error(
            client,
            "ajukan_izin",
            {
                "id_anak": "A003",
                "dari": TODAY.isoformat(),
                "sampai": TODAY.isoformat(),
                "jenis": "pulang",
                "alasan": "x",
            },
        )
    assert listed["data"] == [] and "tidak ditemukan" in refused and "tidak ditemukan" in asked
    assert (await rest.get(f"/izin/{made['id']}")).json().get("tanggal_kembali") is None


@pytest.mark.parametrize(
    ("arguments", "hint"),
    [
        ({"dari": "2026-10-10", "sampai": "2026-10-09"}, "sesudah dari"),
        ({"dari": "2026-10-01", "sampai": "2026-10-31"}, "30 hari"),
        ({"alasan": "   "}, "alasan"),
        ({"jenis": "liburan"}, "jenis"),
    ],
)
async def test_bad_izin_arguments_are_refused_before_asking(
    service_app: FastAPI, era: str, arguments: dict[str, str], hint: str
) -> None:
    person = Person()
    base = {"id_anak": "A001", "dari": "2026-10-10", "sampai": "2026-10-11", "jenis": "pulang", "alasan": "Lomba"}
    async with writer(service_app, era, person) as client:
        message = await call_error(client, "ajukan_izin", {**base, **arguments})
    assert hint in message and person.asked == []
    assert_clean(message)


async def test_every_write_attempt_is_audited_with_ids_and_statuses_only(
    service_app: FastAPI, era: str, tmp_path: Path
) -> None:
    log = tmp_path / "audit.jsonl"
    secret_note, secret_reason = "Demam berdarah", "Ayah dirawat"
    entri = [{"id_anak": "A002", "status": "sakit", "keterangan": secret_note}]
    async with writer(service_app, era, Person(), audit_log=log) as client:
        await call_ok(client, "catat_absensi", {"tanggal": FRESH_DAY, "entri": entri})
        await call_error(
            client, "catat_absensi", {"tanggal": FRESH_DAY, "entri": [{"id_anak": "X404", "status": "hadir"}]}
        )
    async with writer(service_app, era, Person("decline"), audit_log=log) as client:
        await call_ok(client, "catat_absensi", {"tanggal": FRESH_DAY, "entri": [{"id_anak": "A001", "status": "alpa"}]})
        izin = {"id_anak": "A001", "dari": FRESH_DAY, "sampai": FRESH_DAY, "jenis": "sakit", "alasan": secret_reason}
        await call_ok(client, "ajukan_izin", izin)
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    writes = [(e["target"], e["write"]["confirmation"], e["write"]["changes"]) for e in entries if "write" in e]
    asked = [("catat_absensi", "asked", [])] if era == "2026-07-28" else []
    asked_izin = [("ajukan_izin", "asked", [])] if era == "2026-07-28" else []
    assert writes == [
        *asked,
        ("catat_absensi", "accepted", [{"id": "A002", "old": None, "new": "sakit"}]),
        ("catat_absensi", "refused", []),
        *asked,
        ("catat_absensi", "declined", []),
        *asked_izin,
        ("ajukan_izin", "declined", []),
    ]
    text = log.read_text()
    assert secret_note not in text and secret_reason not in text
    assert all("write" not in e for e in entries if e["target"] not in WRITE_TOOLS)
    changed = audit_check.who_changed(log, "A002")
    assert [(c["confirmation"], c["old"], c["new"], c["target"], c["subject"]) for c in changed] == [
        ("accepted", None, "sakit", "catat_absensi", "local")
    ]
    assert audit_check.who_changed(log, "A001") == []
