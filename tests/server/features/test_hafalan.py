"""Hafalan: one student's progress and deposits, progress per class or room, both following the scope; a deposit's
surah by number or name and its ayat checked against the surah's length before anyone is asked; the examiner's
name never shown. Against the leaky upstream (every student deposited Al-Mulk 1–10, 85), then the real service."""

import json
from typing import Any

import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import ElicitResult

from tests.conftest import TUTORIAL_ANAK, TUTORIAL_KAMAR, insert_rows, service_client
from tests.server.conftest import connect, make_service, server_for
from tests.server.support import Recording, call_error, call_ok, leaky_upstream
from tests.server.support_records import CLINIC, RECORD_EXTRAS, seed_hafalan

pytestmark = pytest.mark.anyio

SEES = [
    (["kamar:Al-Fatih 1"], ["A001", "A002"]),
    (["kelas:7A"], ["A001", "A003"]),
    (["peran:bk"], []),
    (CLINIC, ["A001", "A002", "A003"]),
    (["all"], ["A001", "A002", "A003"]),
]


@pytest.mark.parametrize(("scope", "seen"), SEES)
async def test_progress_and_deposits_follow_the_scope(era: str, scope: list[str], seen: list[str]) -> None:
    async with connect(server_for(leaky_upstream(), stdio_scope=scope), era) as client:
        progres = await call_ok(client, "progres_hafalan", {})
        assert sorted(r["id_anak"] for r in progres["data"]) == seen and progres["jumlah_anak"] == len(seen)
        if seen:
            assert progres["rata_rata"] == {"ayat": 10, "juz": 0.04}
        for id_anak in ("A001", "A002", "A003"):
            if id_anak in seen:
                body = await call_ok(client, "hafalan_anak", {"id_anak": id_anak})
                assert (body["ayat"], body["juz"], body["ayat_per_pekan"], body["jumlah_setoran"]) == (10, 0.04, 2.5, 1)
                deposit = body["setoran"][0]
                assert (deposit["nama_surah"], deposit["juz"], deposit["nilai"]) == ("Al-Mulk", [29], 85)
                resource = await client.read_resource(f"asrama://anak/{id_anak}/hafalan")
                assert json.loads(resource.contents[0].text) == body
                assert not any(v in resource.contents[0].text for v in RECORD_EXTRAS.values())
            else:
                assert "tidak ditemukan" in await call_error(client, "hafalan_anak", {"id_anak": id_anak})
                with pytest.raises(MCPError):
                    await client.read_resource(f"asrama://anak/{id_anak}/hafalan")


async def test_progress_of_a_room_within_a_class_scope(era: str) -> None:
    async with connect(server_for(leaky_upstream(), stdio_scope=["kelas:7A"]), era) as client:
        body = await call_ok(client, "progres_hafalan", {"kamar": "Aisyah 2"})
    assert [r["id_anak"] for r in body["data"]] == ["A003"]


def person(answers: list[str]) -> Any:
    async def answer(_ctx: Any, params: Any) -> ElicitResult:
        answers.append(params.message)
        return ElicitResult(action="cancel")

    return answer


@pytest.mark.parametrize(
    ("surah", "mulai", "selesai", "problem"),
    [
        ("Al-Baqarah", 280, 286, None),
        ("al mulk", 25, 31, "Argumen tidak valid: Al-Mulk hanya punya 30 ayat."),
        ("Al-Baqarah", 280, 287, "ayat_selesai: paling besar 286"),
        (2, 10, 5, "melewati ayat selesai"),
        ("Surat Entah", 1, 2, "Surah tidak dikenal"),
        (115, 1, 2, "Surah tidak dikenal"),
    ],
)
async def test_a_deposit_is_checked_against_the_surah(
    era: str, surah: Any, mulai: int, selesai: int, problem: str | None
) -> None:
    asked: list[str] = []
    server = server_for(leaky_upstream(), writes=True)
    arguments = {"id_anak": "A001", "tanggal": "2026-10-06", "jenis": "ziyadah", "surah": surah,
                 "ayat_mulai": mulai, "ayat_selesai": selesai}  # fmt: skip
    async with Client(server, mode=era, cache=None, elicitation_callback=person(asked)) as client:
        if problem is None:
            assert (await call_ok(client, "catat_setoran_hafalan", arguments))["hasil"] == "dibatalkan"
        else:
            assert problem in await call_error(client, "catat_setoran_hafalan", arguments)
    if problem is None:
        assert asked == [
            "Catat setoran ziyadah Ahmad Fauzi (A001) pada 2026-10-06: Al-Baqarah (2) ayat 280–286 (7 ayat, juz 3).\n"
            "Setujui untuk mencatat?"
        ]
    else:
        assert asked == []


async def test_a_surah_name_is_forgiving_and_the_examiner_is_asked_about(era: str) -> None:
    asked: list[str] = []
    server = server_for(leaky_upstream(), writes=True, stdio_scope=["kamar:Al-Fatih 1"])
    arguments = {"id_anak": "A002", "tanggal": "2026-10-06", "jenis": "murajaah", "surah": "yaasiin",
                 "ayat_mulai": 1, "ayat_selesai": 12, "nilai": 90, "penguji": "Ust. Hadi"}  # fmt: skip
    async with Client(server, mode=era, cache=None, elicitation_callback=person(asked)) as client:
        await call_ok(client, "catat_setoran_hafalan", arguments)
        outside = await call_error(client, "catat_setoran_hafalan", {**arguments, "id_anak": "A003"})
    assert asked == [
        "Catat setoran murajaah Budi Santoso (A002) pada 2026-10-06: Yasin (36) ayat 1–12 (12 ayat, juz 22), "
        "nilai 90.\n"
        "Penguji: Ust. Hadi\nSetujui untuk mencatat?"
    ]
    assert "tidak ditemukan" in outside


# --- against the real data service -------------------------------------------------------------------------------

REAL_SEES = [(["kamar:Aisyah 2"], {"A003"}), (["kelas:7A"], {"A001", "A003"}), (["peran:bk"], set()),
             (CLINIC, {"A001", "A002", "A003"}), (["all"], {"A001", "A002", "A003"})]  # fmt: skip


@pytest.mark.parametrize(("scope", "seen"), REAL_SEES)
async def test_real_progress_and_deposits_follow_the_scope(
    service_app: FastAPI, era: str, scope: list[str], seen: set[str]
) -> None:
    await seed_hafalan(service_app)
    async with connect(server_for(service_app, stdio_scope=scope), era) as client:
        progres = await call_ok(client, "progres_hafalan", {})
        assert {r["id_anak"] for r in progres["data"]} == seen and progres["jumlah_anak"] == len(seen)
        outputs = [json.dumps(progres)]
        for id_anak in ("A001", "A002", "A003"):
            if id_anak in seen:
                body = await call_ok(client, "hafalan_anak", {"id_anak": id_anak})
                assert (body["ayat"], body["jumlah_setoran"]) == {"A001": (30, 1), "A003": (40, 1)}.get(id_anak, (0, 0))
                resource = await client.read_resource(f"asrama://anak/{id_anak}/hafalan")
                assert json.loads(resource.contents[0].text) == body
                outputs.append(resource.contents[0].text)
            else:
                await call_error(client, "hafalan_anak", {"id_anak": id_anak})
    assert "penguji-rahasia" not in "".join(outputs)


class Accepts:
    def __init__(self, action: str) -> None:
        self.action, self.asked = action, []  # type: list[str]

    async def __call__(self, _ctx: Any, params: Any) -> ElicitResult:
        self.asked.append(params.message)
        content = {"setuju": True} if self.action == "accept" else None
        return ElicitResult(action=self.action, content=content)  # type: ignore[arg-type]


@pytest.mark.parametrize("action", ["accept", "decline", "cancel"])
async def test_a_deposit_is_written_only_when_confirmed_and_counts_in_the_progress(
    service_app: FastAPI, era: str, action: str
) -> None:
    person = Accepts(action)
    arguments = {"id_anak": "A002", "tanggal": "2026-10-06", "jenis": "ziyadah", "surah": "an-naba",
                 "ayat_mulai": 1, "ayat_selesai": 40, "nilai": 88}  # fmt: skip
    server = server_for(service_app, writes=True, stdio_scope=["kelas:8B"])
    async with Client(server, mode=era, cache=None, elicitation_callback=person) as client:
        body = await call_ok(client, "catat_setoran_hafalan", arguments)
        mine = await call_ok(client, "hafalan_anak", {"id_anak": "A002"})
        outside = await call_error(client, "catat_setoran_hafalan", {**arguments, "id_anak": "A001"})
    async with service_client(service_app) as rest:
        stored = (await rest.get("/hafalan", params={"id_anak": "A002"})).json()
    assert len(person.asked) == 1 and "tidak ditemukan" in outside
    if action == "accept":
        assert body["hasil"] == "ditulis" and body["setoran"]["surah"] == 78 and body["setoran"]["juz"] == [30]
        assert (mine["ayat"], mine["jumlah_setoran"]) == (40, 1)
        assert stored["total"] == 1 and stored["data"][0]["id"] == body["setoran"]["id_setoran"]
    else:
        assert body["hasil"] in ("ditolak", "dibatalkan") and stored["total"] == 0 and mine["ayat"] == 0


async def test_a_large_schools_progress_asks_for_its_top_rows_and_counts_every_student(db_url: str, era: str) -> None:
    """600 students: the office's read asks the service for the first 500 only (the most a result could show), and
    the answer still counts and averages all 600."""
    crowd = [
        {**TUTORIAL_ANAK[0], "id": f"B{n:03d}", "nama": f"Santri {n:03d}", "nik": None, "no_hp_wali": None}
        for n in range(600)
    ]
    insert_rows(db_url, kamar=TUTORIAL_KAMAR, anak=crowd, absensi=[])
    app = make_service(db_url)
    recording = Recording(app)
    deposit = {"id_anak": "B000", "tanggal": "2026-10-06", "jenis": "ziyadah", "surah": 78, "ayat_mulai": 1,
               "ayat_selesai": 40}  # fmt: skip
    try:
        async with service_client(app) as rest:
            made = await rest.post("/hafalan", json=deposit, headers={"Idempotency-Key": "progres-top-0001"})
        assert made.status_code == 201, made.text
        async with connect(server_for(recording), era) as client:
            body = await call_ok(client, "progres_hafalan", {})
    finally:
        app.state.engine.dispose()
    asked = [q for path, q in recording.requests if path == b"/hafalan/progres"]
    assert asked == [b"limit=500"]
    assert body["jumlah_anak"] == 600 and body["rata_rata"] == {"ayat": 0.1, "juz": 0.0}
    assert body["data"][0]["id_anak"] == "B000" and body["data"][0]["ayat"] == 40
    assert 0 < len(body["data"]) < 500
    assert f"Daftar dipotong: {len(body['data'])} dari 600 anak" in body["catatan"]
