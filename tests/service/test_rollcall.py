"""`POST /absensi/{tanggal}` (a roll call, all or nothing), its history, idempotent replays and concurrent writers;
`GET /absensi/{tanggal}/{id_anak}/riwayat`."""

import asyncio
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise
from typing import Any

import httpx2
import pytest
from sqlalchemy import func, select

from mcp_asrama.service.db import make_engine, make_sessionmaker
from mcp_asrama.service.models import Absensi, Idempotensi, RiwayatAbsensi
from tests.conftest import TUTORIAL_ANAK

pytestmark = pytest.mark.anyio

HARI = "2026-10-06"
BESOK = "2026-10-07"
KEY = "konfirmasi-0001-abcdef"
PERSONAL = [str(a[f]) for a in TUTORIAL_ANAK for f in ("nik", "no_hp_wali", "alamat", "tanggal_lahir", "nama")]


def count(url: str, table: Any) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return conn.scalar(select(func.count()).select_from(table)) or 0
    finally:
        engine.dispose()


def stored(url: str, tanggal: str) -> dict[str, tuple[str, str | None]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            query = select(Absensi.id_anak, Absensi.status, Absensi.keterangan).where(
                Absensi.tanggal == date.fromisoformat(tanggal)
            )
            return {r.id_anak: (r.status, r.keterangan) for r in conn.execute(query)}
    finally:
        engine.dispose()


def roll(*entries: tuple[str, str] | tuple[str, str, str]) -> dict[str, Any]:
    return {"entri": [dict(zip(("id_anak", "status", "keterangan"), e, strict=False)) for e in entries]}


async def test_roll_call_writes_every_student_and_answers_old_to_new(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    response = await service.post(f"/absensi/{HARI}", json=roll(("A001", "alpa"), ("A002", "hadir"), ("A003", "hadir")))
    assert response.status_code == 200
    body = response.json()
    assert body["jumlah"] == 3 and body["baru"] == 0 and body["diubah"] == 2 and body["tetap"] == 1
    assert body["data"] == [
        {"id_anak": "A001", "status_lama": "hadir", "status_baru": "alpa"},
        {"id_anak": "A002", "status_lama": "hadir", "status_baru": "hadir"},
        {"id_anak": "A003", "status_lama": "izin", "status_baru": "hadir"},
    ]
    assert stored(tutorial_db, HARI) == {"A001": ("alpa", None), "A002": ("hadir", None), "A003": ("hadir", None)}


async def test_roll_call_on_a_new_day_counts_new_records(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    response = await service.post(f"/absensi/{BESOK}", json=roll(("A001", "sakit", "Demam"), ("A002", "hadir")))
    assert response.status_code == 200
    assert response.json()["baru"] == 2
    assert response.json()["data"][0] == {"id_anak": "A001", "status_baru": "sakit"}
    assert stored(tutorial_db, BESOK) == {"A001": ("sakit", "Demam"), "A002": ("hadir", None)}


@pytest.mark.parametrize(
    ("body", "status"),
    [
        (roll(("A001", "alpa"), ("X999", "hadir"), ("X998", "hadir")), 404),
        (roll(("A001", "alpa"), ("A002", "terlambat")), 422),
        (roll(("A001", "alpa"), ("A001", "hadir")), 422),
        (roll(("A001", "alpa"), ("A002", "hadir", "x" * 501)), 422),
        (roll(("A001", "alpa"), ("A;DROP TABLE", "hadir")), 422),
        ({"entri": []}, 422),
        ({"entri": [{"id_anak": "A001", "status": "alpa"}], "lain": 1}, 422),
    ],
)
async def test_roll_call_is_all_or_nothing(
    service: httpx2.AsyncClient, tutorial_db: str, body: dict[str, Any], status: int
) -> None:
    before = stored(tutorial_db, HARI)
    response = await service.post(f"/absensi/{HARI}", json=body)
    assert response.status_code == status
    assert stored(tutorial_db, HARI) == before
    assert count(tutorial_db, RiwayatAbsensi) == 0


async def test_unknown_students_are_named_by_id_only(service: httpx2.AsyncClient) -> None:
    response = await service.post(f"/absensi/{HARI}", json=roll(("A001", "alpa"), ("X999", "hadir"), ("X998", "izin")))
    assert response.status_code == 404
    detail = response.json()["detail"]
    assert "X998" in detail and "X999" in detail
    assert "A001" not in detail and "Ahmad" not in detail


async def test_roll_call_of_more_than_300_is_422(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    response = await service.post(f"/absensi/{BESOK}", json=roll(*[(f"S{i}", "hadir") for i in range(301)]))
    assert response.status_code == 422
    assert count(tutorial_db, Absensi) == 3


@pytest.mark.parametrize(
    "path", ["/absensi/2026-02-30", "/absensi/kemarin", "/absensi/" + "9" * 5000, "/absensi/2026-10-6"]
)
async def test_roll_call_with_impossible_date_is_4xx(service: httpx2.AsyncClient, path: str) -> None:
    response = await service.post(path, json=roll(("A001", "hadir")))
    assert 400 <= response.status_code < 500


async def test_hostile_bodies_are_4xx_never_500(service: httpx2.AsyncClient) -> None:
    for body in (
        [1, 2],
        {"entri": "semua"},
        {"entri": [None]},
        {"entri": [{"id_anak": 5, "status": []}]},
        "x" * 10_000,
    ):
        response = await service.post(f"/absensi/{HARI}", json=body)
        assert response.status_code == 422, body
    response = await service.post(f"/absensi/{HARI}", json=roll(("A001", "hadir", "a\x00b")))
    assert response.status_code == 422


async def test_overwrites_are_kept_in_the_history_with_actor_and_key(service: httpx2.AsyncClient) -> None:
    headers = {"X-Asrama-Actor": "ustadz.ridwan@pesantren.sch.id", "Idempotency-Key": KEY}
    response = await service.post(
        f"/absensi/{HARI}", json=roll(("A001", "sakit", "Demam"), ("A002", "hadir")), headers=headers
    )
    assert response.status_code == 200
    riwayat = (await service.get(f"/absensi/{HARI}/A001/riwayat")).json()
    assert riwayat["id_anak"] == "A001" and riwayat["tanggal"] == HARI
    [change] = riwayat["data"]
    assert change["status_lama"] == "hadir" and change["status_baru"] == "sakit"
    assert change["keterangan_baru"] == "Demam" and "keterangan_lama" not in change
    assert change["oleh"] == "ustadz.ridwan@pesantren.sch.id"
    assert change["kunci"] == KEY
    assert change["waktu"]
    # An unchanged record is not written and not in the history.
    assert (await service.get(f"/absensi/{HARI}/A002/riwayat")).json()["data"] == []


async def test_put_records_its_history_too(service: httpx2.AsyncClient) -> None:
    put = await service.put(f"/absensi/{HARI}/A003", json={"status": "hadir"}, headers={"X-Asrama-Actor": "wali"})
    assert put.status_code == 200
    [change] = (await service.get(f"/absensi/{HARI}/A003/riwayat")).json()["data"]
    assert (change["status_lama"], change["status_baru"], change["oleh"]) == ("izin", "hadir", "wali")
    assert change["keterangan_lama"] == "Pulang, acara keluarga" and "kunci" not in change


async def test_history_of_unknown_student_is_404(service: httpx2.AsyncClient) -> None:
    assert (await service.get(f"/absensi/{HARI}/X999/riwayat")).status_code == 404
    assert (await service.get("/absensi/2026-02-30/A001/riwayat")).status_code == 422


async def test_a_repeated_key_returns_the_first_answer_and_writes_once(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    body = roll(("A001", "alpa"), ("A002", "sakit"))
    first = await service.post(f"/absensi/{BESOK}", json=body, headers={"Idempotency-Key": KEY})
    # Someone changes A001 between the two: a replay must not undo it.
    await service.put(f"/absensi/{BESOK}/A001", json={"status": "hadir"})
    second = await service.post(f"/absensi/{BESOK}", json=body, headers={"Idempotency-Key": KEY})
    assert first.status_code == second.status_code == 200
    assert second.json() == first.json()
    assert second.headers.get("Idempotent-Replayed") == "true"
    assert stored(tutorial_db, BESOK)["A001"] == ("hadir", None)
    assert count(tutorial_db, RiwayatAbsensi) == 3  # two from the roll call, one from the PUT
    assert count(tutorial_db, Idempotensi) == 1


async def test_the_same_key_with_another_request_is_409(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    assert await service.post(f"/absensi/{BESOK}", json=roll(("A001", "alpa")), headers={"Idempotency-Key": KEY})
    other = await service.post(f"/absensi/{BESOK}", json=roll(("A001", "hadir")), headers={"Idempotency-Key": KEY})
    assert other.status_code == 409
    assert "Idempotency-Key" in other.json()["detail"]
    elsewhere = await service.post(f"/absensi/{HARI}", json=roll(("A001", "alpa")), headers={"Idempotency-Key": KEY})
    assert elsewhere.status_code == 409
    assert stored(tutorial_db, BESOK) == {"A001": ("alpa", None)}
    assert stored(tutorial_db, HARI)["A001"] == ("hadir", None)


@pytest.mark.parametrize("key", ["pendek", "x" * 129, "kunci dengan spasi!!", "kunci/../../etc/passwd"])
async def test_a_malformed_key_is_422_and_writes_nothing(
    service: httpx2.AsyncClient, tutorial_db: str, key: str
) -> None:
    response = await service.post(f"/absensi/{BESOK}", json=roll(("A001", "alpa")), headers={"Idempotency-Key": key})
    assert response.status_code == 422
    assert count(tutorial_db, Absensi) == 3


@pytest.mark.parametrize("actor", ["x" * 201, "a\tb", "baris\u0085baru"])
async def test_a_malformed_actor_is_422_and_not_echoed(
    service: httpx2.AsyncClient, tutorial_db: str, actor: str
) -> None:
    response = await service.post(
        f"/absensi/{BESOK}", json=roll(("A001", "alpa")), headers={"X-Asrama-Actor": actor.encode("latin-1")}
    )
    assert response.status_code == 422
    assert actor not in response.text
    assert count(tutorial_db, Absensi) == 3


async def test_answers_carry_no_personal_data(service: httpx2.AsyncClient) -> None:
    response = await service.post(f"/absensi/{HARI}", json=roll(("A001", "alpa"), ("A002", "sakit"), ("A003", "hadir")))
    riwayat = await service.get(f"/absensi/{HARI}/A001/riwayat")
    for text in (response.text, riwayat.text):
        assert not [p for p in PERSONAL if p in text]


async def test_concurrent_roll_calls_on_one_room_lose_no_update(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    """Two roll calls at once (the routes run in the server's threads, each with its own session), many times over:
    both students' records end as written and each history chain is unbroken (every old value is the new value
    before it)."""
    statuses = ["hadir", "alpa", "sakit", "izin"]
    for i in range(12):
        a = roll(("A001", statuses[i % 4]), ("A002", statuses[(i + 1) % 4]))
        b = roll(("A002", statuses[(i + 2) % 4]), ("A001", statuses[(i + 3) % 4]))
        ra, rb = await asyncio.gather(
            service.post(f"/absensi/{BESOK}", json=a), service.post(f"/absensi/{BESOK}", json=b)
        )
        assert ra.status_code == rb.status_code == 200
    for id_anak in ("A001", "A002"):
        chain = (await service.get(f"/absensi/{BESOK}/{id_anak}/riwayat")).json()["data"]
        assert "status_lama" not in chain[0]
        for before, after in pairwise(chain):
            assert after["status_lama"] == before["status_baru"]
        assert stored(tutorial_db, BESOK)[id_anak][0] == chain[-1]["status_baru"]


async def test_concurrent_replays_of_one_key_write_once(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    body = roll(("A001", "alpa"), ("A002", "sakit"))
    answers = await asyncio.gather(
        *(service.post(f"/absensi/{BESOK}", json=body, headers={"Idempotency-Key": KEY}) for _ in range(4))
    )
    assert {r.status_code for r in answers} == {200}
    assert len({r.text for r in answers}) == 1
    assert count(tutorial_db, RiwayatAbsensi) == 2
    assert count(tutorial_db, Idempotensi) == 1


async def test_a_stored_answer_older_than_a_day_is_deleted_by_the_next_write(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    engine = make_engine(tutorial_db)
    with make_sessionmaker(engine)() as session, session.begin():
        old = datetime.now(UTC) - timedelta(days=2)
        session.add(
            Idempotensi(
                kunci="kunci-lama-sekali-0001", rute="x", fingerprint="s", status_code=200, respons="{}", waktu=old
            )
        )
    engine.dispose()
    written = await service.post(
        f"/absensi/{HARI}", json=roll(("A001", "sakit")), headers={"Idempotency-Key": "kunci-baru-sekali-0002"}
    )
    assert written.status_code == 200
    engine = make_engine(tutorial_db)
    with engine.connect() as conn:
        kept = set(conn.scalars(select(Idempotensi.kunci)))
    engine.dispose()
    assert kept == {"kunci-baru-sekali-0002"}


def seen(id_anak: str, status: str, baru: str, keterangan: str | None = None) -> dict[str, Any]:
    """A roll-call entry carrying the old record its caller read (`belum_dicatat`: none)."""
    return {"id_anak": id_anak, "status": baru, "status_lama": status, "keterangan_lama": keterangan}


async def test_old_values_as_stored_write_the_roll_call(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    body = {
        "entri": [
            seen("A001", "hadir", "sakit"),
            seen("A003", "izin", "hadir", "Pulang, acara keluarga"),
        ]
    }
    response = await service.post(f"/absensi/{HARI}", json=body)
    assert response.status_code == 200
    assert stored(tutorial_db, HARI) == {"A001": ("sakit", None), "A002": ("hadir", None), "A003": ("hadir", None)}
    fresh = await service.post(f"/absensi/{BESOK}", json={"entri": [seen("A001", "belum_dicatat", "alpa")]})
    assert fresh.status_code == 200 and stored(tutorial_db, BESOK) == {"A001": ("alpa", None)}


@pytest.mark.parametrize(
    "stale",
    [
        seen("A002", "alpa", "izin"),  # another status
        seen("A003", "izin", "hadir", "Sakit"),  # the same status, another note
        seen("A003", "izin", "hadir"),  # the note was there
        seen("A002", "belum_dicatat", "izin"),  # there is a record
    ],
)
async def test_a_record_changed_since_it_was_read_refuses_the_whole_roll_call(
    service: httpx2.AsyncClient, tutorial_db: str, stale: dict[str, Any]
) -> None:
    before = stored(tutorial_db, HARI)
    body = {"entri": [seen("A001", "hadir", "sakit"), stale]}
    response = await service.post(f"/absensi/{HARI}", json=body, headers={"Idempotency-Key": KEY})
    assert response.status_code == 409
    assert response.headers["X-Asrama-Konflik"] == "berubah"
    assert response.json()["detail"].endswith(stale["id_anak"])
    assert stored(tutorial_db, HARI) == before
    assert count(tutorial_db, RiwayatAbsensi) == 0 and count(tutorial_db, Idempotensi) == 0


async def test_a_concurrent_write_meanwhile_is_refused_then_a_fresh_read_writes(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    await service.put(f"/absensi/{BESOK}/A002", json={"status": "sakit", "keterangan": "Demam"})
    body = {"entri": [seen("A001", "belum_dicatat", "hadir"), seen("A002", "belum_dicatat", "hadir")]}
    refused = await service.post(f"/absensi/{BESOK}", json=body, headers={"Idempotency-Key": KEY})
    assert refused.status_code == 409
    assert stored(tutorial_db, BESOK) == {"A002": ("sakit", "Demam")}
    again = {"entri": [seen("A001", "belum_dicatat", "hadir"), seen("A002", "sakit", "hadir", " Demam ")]}
    written = await service.post(f"/absensi/{BESOK}", json=again, headers={"Idempotency-Key": KEY + "-2"})
    assert written.status_code == 200
    assert stored(tutorial_db, BESOK) == {"A001": ("hadir", None), "A002": ("hadir", None)}


async def test_a_replay_of_a_committed_roll_call_is_answered_though_its_old_values_are_gone(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    body = {"entri": [seen("A001", "hadir", "alpa")]}
    first = await service.post(f"/absensi/{HARI}", json=body, headers={"Idempotency-Key": KEY})
    second = await service.post(f"/absensi/{HARI}", json=body, headers={"Idempotency-Key": KEY})
    assert first.status_code == second.status_code == 200
    assert second.json() == first.json() and second.headers.get("Idempotent-Replayed") == "true"
    assert count(tutorial_db, RiwayatAbsensi) == 1


async def test_put_with_old_values_writes_only_while_they_hold(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    stale = await service.put(f"/absensi/{HARI}/A001", json={"status": "sakit", "status_lama": "alpa"})
    assert stale.status_code == 409 and stale.headers["X-Asrama-Konflik"] == "berubah"
    assert stored(tutorial_db, HARI)["A001"] == ("hadir", None)
    fresh = await service.put(f"/absensi/{HARI}/A001", json={"status": "sakit", "status_lama": "hadir"})
    assert fresh.status_code == 200 and stored(tutorial_db, HARI)["A001"] == ("sakit", None)


@pytest.mark.parametrize(
    "entry",
    [
        {"id_anak": "A001", "status": "alpa", "keterangan_lama": "x"},  # a note without its status
        {"id_anak": "A001", "status": "alpa", "status_lama": "belum_dicatat", "keterangan_lama": "x"},
        {"id_anak": "A001", "status": "alpa", "status_lama": "terlambat"},
        {"id_anak": "A001", "status": "alpa", "status_lama": "hadir", "keterangan_lama": "x" * 501},
    ],
)
async def test_malformed_old_values_are_422_and_write_nothing(
    service: httpx2.AsyncClient, tutorial_db: str, entry: dict[str, Any]
) -> None:
    response = await service.post(f"/absensi/{HARI}", json={"entri": [entry]})
    assert response.status_code == 422
    assert count(tutorial_db, RiwayatAbsensi) == 0
