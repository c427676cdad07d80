"""`yang_lain` fills only the students without a record that day or recorded `hadir`: one recorded `sakit`, `izin` or
`alpa` (by the clinic, the office, another musyrif) keeps it unless named in `entri`, and the question says how many
were kept. In memory, both eras, against the real data service (the tutorial's days 2026-10-07 and 2026-10-08)."""

from collections.abc import AsyncIterator, Iterator
from datetime import date

import httpx2
import pytest
from fastapi import FastAPI

from tests.conftest import insert_rows, service_client
from tests.server.conftest import make_service
from tests.server.features.test_writes import Person, day_of, writer
from tests.server.support import call_ok

pytestmark = pytest.mark.anyio


@pytest.fixture
async def rest(service_app: FastAPI) -> AsyncIterator[httpx2.AsyncClient]:
    """The data service itself, to check what was written."""
    async with service_client(service_app) as client:
        yield client


async def test_a_recorded_absence_is_kept_and_counted_in_the_question(
    service_app: FastAPI, rest: httpx2.AsyncClient, era: str
) -> None:
    person = Person()
    arguments = {"tanggal": "2026-10-07", "kamar": "Al-Fatih 1", "entri": [], "yang_lain": "sakit"}
    async with writer(service_app, era, person) as client:
        body = await call_ok(client, "catat_absensi", arguments)
    assert person.asked == [
        "Catat absensi 2026-10-07 — kamar Al-Fatih 1: 2 anak; 0 baru, 1 diubah, 1 tetap.\n"
        "1 anak yang sudah tercatat sakit, izin atau alpa tidak diubah.\n"
        "Yang berubah:\n"
        "- Ahmad Fauzi (A001): hadir → sakit\n"
        "Nilai lama tetap tersimpan di riwayat. Setujui untuk mencatat?"
    ]
    assert body["hasil"] == "ditulis" and [p["id_anak"] for p in body["perubahan"]] == ["A001"]
    day = await day_of(rest, "2026-10-07")
    assert (day["A001"], day["A002"]) == (("sakit", None), ("alpa", None))


async def test_a_named_student_is_changed_and_the_others_recorded_absences_kept(
    service_app: FastAPI, rest: httpx2.AsyncClient, era: str
) -> None:
    person = Person()
    arguments = {
        "tanggal": "2026-10-08",
        "kamar": "Al-Fatih 1",
        "entri": [{"id_anak": "A002", "status": "hadir"}],
        "yang_lain": "hadir",
    }
    async with writer(service_app, era, person) as client:
        await call_ok(client, "catat_absensi", arguments)
    [question] = person.asked
    assert "1 anak yang sudah tercatat sakit, izin atau alpa tidak diubah." in question
    assert "(A002): alpa → hadir" in question and "(A001)" not in question
    day = await day_of(rest, "2026-10-08")
    assert (day["A001"], day["A002"]) == (("sakit", "Demam"), ("hadir", None))


async def test_when_every_other_student_is_recorded_absent_nobody_is_asked(
    service_app: FastAPI, rest: httpx2.AsyncClient, era: str
) -> None:
    person = Person()
    arguments = {"tanggal": "2026-10-08", "kamar": "Al-Fatih 1", "entri": [], "yang_lain": "hadir"}
    async with writer(service_app, era, person) as client:
        body = await call_ok(client, "catat_absensi", arguments)
    assert body["hasil"] == "tetap" and (body["jumlah"], body["tetap"]) == (2, 2) and person.asked == []
    day = await day_of(rest, "2026-10-08")
    assert (day["A001"], day["A002"]) == (("sakit", "Demam"), ("alpa", None))


@pytest.fixture
def big_room_app(db_url: str) -> Iterator[FastAPI]:
    """A room of eight (more than a small group, so the service counts its day), every one `hadir` on 2026-10-07."""
    kamar = [{"nama": "Al-Fatih 9", "gedung": "Putra", "kapasitas": 10, "musyrif": "Ust. Ridwan"}]
    anak = [
        {"id": f"B{i:03d}", "nama": f"Santri {i}", "kelas": "7A", "kamar": "Al-Fatih 9", "status": "aktif"}
        for i in range(1, 9)
    ]
    absensi = [{"id_anak": a["id"], "tanggal": date(2026, 10, 7), "status": "hadir"} for a in anak]
    insert_rows(db_url, kamar=kamar, anak=anak, absensi=absensi)
    app = make_service(db_url)
    yield app
    app.state.engine.dispose()


@pytest.mark.parametrize("yang_lain", ["hadir", "alpa"])
async def test_a_room_larger_than_a_small_group_is_recorded_whole(
    big_room_app: FastAPI, era: str, yang_lain: str
) -> None:
    """The room's roll call takes every student's row, not the day as the service counts it (absent ones only)."""
    person = Person()
    arguments = {"tanggal": "2026-10-07", "kamar": "Al-Fatih 9", "entri": [], "yang_lain": yang_lain}
    async with writer(big_room_app, era, person) as client:
        body = await call_ok(client, "catat_absensi", arguments)
    assert body["jumlah"] == 8  # before the fix: a room whose every student is hadir had "no student" to record
    if yang_lain == "hadir":
        assert (body["hasil"], body["tetap"], person.asked) == ("tetap", 8, [])
    else:
        [question] = person.asked
        assert "kamar Al-Fatih 9: 8 anak; 0 baru, 8 diubah, 0 tetap." in question
        assert [p["id_anak"] for p in body["perubahan"]] == [f"B{i:03d}" for i in range(1, 9)]
    async with service_client(big_room_app) as rest:
        day = await day_of(rest, "2026-10-07")
    assert {day[f"B{i:03d}"][0] for i in range(1, 9)} == {yang_lain}
