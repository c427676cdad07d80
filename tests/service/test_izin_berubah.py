"""`POST /izin` with `absensi_lama`: the days' records as the caller read them. When one is no longer so (another
roll call meanwhile) the whole izin is refused with 409 `berubah` and nothing is written; a replay of a committed
izin is still answered; a caller without the field writes as before. SQLite and PostgreSQL."""

from typing import Any

import httpx2
import pytest

from mcp_asrama.service.models import Idempotensi, Izin, RiwayatAbsensi
from tests.service.test_izin import KEY, count, day, days_of, izin, status_of

pytestmark = pytest.mark.anyio


def lama(offset: int, status: str = "belum_dicatat", keterangan: str | None = None) -> dict[str, Any]:
    """One day's record as read (`belum_dicatat`: none)."""
    return {"tanggal": day(offset), "status_lama": status, "keterangan_lama": keterangan}


async def record(service: httpx2.AsyncClient, offset: int, status: str, keterangan: str | None = None) -> None:
    answer = await service.put(f"/absensi/{day(offset)}/A001", json={"status": status, "keterangan": keterangan})
    assert answer.status_code == 200


async def test_old_values_as_stored_write_the_izin(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    await record(service, 0, "hadir")
    await record(service, 1, "sakit", "Demam")
    body = izin(dari=0, sampai=2, absensi_lama=[lama(0, "hadir"), lama(1, "sakit", " Demam "), lama(2)])
    response = await service.post("/izin", json=body)
    assert response.status_code == 201
    recorded = days_of(tutorial_db, "A001")
    assert {day(n): recorded[day(n)] for n in range(3)} == {day(n): ("izin", "Izin pulang") for n in range(3)}


@pytest.mark.parametrize(
    "stale",
    [
        lama(1),  # there is a record now
        lama(0, "alpa"),  # another status
        lama(1, "sakit"),  # the same status, the note was there
        lama(1, "sakit", "Pusing"),  # the same status, another note
    ],
)
async def test_a_day_changed_since_it_was_read_refuses_the_whole_izin(
    service: httpx2.AsyncClient, tutorial_db: str, stale: dict[str, Any]
) -> None:
    await record(service, 0, "hadir")
    await record(service, 1, "sakit", "Demam")
    before, history = days_of(tutorial_db, "A001"), count(tutorial_db, RiwayatAbsensi)
    fresh = [lama(0, "hadir"), lama(1, "sakit", "Demam"), lama(2)]
    old = [stale if d["tanggal"] == stale["tanggal"] else d for d in fresh]
    response = await service.post(
        "/izin", json=izin(dari=0, sampai=2, absensi_lama=old), headers={"Idempotency-Key": KEY}
    )
    assert response.status_code == 409
    assert response.headers["X-Asrama-Konflik"] == "berubah"
    assert response.json()["detail"] == "Absensi 1 hari berubah sejak dibaca; tidak ada yang dicatat"
    assert days_of(tutorial_db, "A001") == before and status_of(tutorial_db, "A001") == "aktif"
    assert count(tutorial_db, Izin) == count(tutorial_db, Idempotensi) == 0
    assert count(tutorial_db, RiwayatAbsensi) == history
    again = await service.post(
        "/izin", json=izin(dari=0, sampai=2, absensi_lama=fresh), headers={"Idempotency-Key": KEY}
    )
    assert again.status_code == 201 and status_of(tutorial_db, "A001") == "izin"


async def test_a_replay_of_a_committed_izin_is_answered_though_its_old_values_are_gone(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    body = izin(dari=0, sampai=1, absensi_lama=[lama(0), lama(1)])
    first = await service.post("/izin", json=body, headers={"Idempotency-Key": KEY})
    second = await service.post("/izin", json=body, headers={"Idempotency-Key": KEY})
    assert first.status_code == second.status_code == 201
    assert second.json() == first.json() and second.headers.get("Idempotent-Replayed") == "true"
    assert count(tutorial_db, Izin) == 1


async def test_without_old_values_or_for_a_day_left_out_the_izin_writes_as_before(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    await record(service, 0, "hadir")
    await record(service, 3, "alpa")
    assert (await service.post("/izin", json=izin(dari=0, sampai=1))).status_code == 201
    partial = izin(dari=2, sampai=3, jenis="keperluan", absensi_lama=[lama(2)])  # day 3 not read: not checked
    assert (await service.post("/izin", json=partial)).status_code == 201
    assert days_of(tutorial_db, "A001")[day(3)] == ("izin", "Izin keperluan")


async def test_an_overlapping_izin_is_refused_as_an_overlap_first(service: httpx2.AsyncClient) -> None:
    assert (await service.post("/izin", json=izin(dari=0, sampai=1))).status_code == 201
    response = await service.post("/izin", json=izin(dari=1, sampai=2, absensi_lama=[lama(1), lama(2)]))
    assert response.status_code == 409 and "X-Asrama-Konflik" not in response.headers


@pytest.mark.parametrize(
    "old",
    [
        [lama(3)],  # a day outside the leave
        [lama(0), lama(0)],  # a day twice
        [lama(0, "belum_dicatat", "x")],  # a note without a record
        [lama(0, "terlambat")],
        [lama(0, "hadir", "x" * 501)],
        [{"tanggal": day(0)}],
        [{**lama(0), "lain": 1}],
        [lama(0)] * 31,
    ],
)
async def test_malformed_old_values_are_422_and_write_nothing(
    service: httpx2.AsyncClient, tutorial_db: str, old: list[dict[str, Any]]
) -> None:
    response = await service.post("/izin", json=izin(dari=0, sampai=2, absensi_lama=old))
    assert response.status_code == 422
    assert count(tutorial_db, Izin) == 0 and count(tutorial_db, RiwayatAbsensi) == 0
