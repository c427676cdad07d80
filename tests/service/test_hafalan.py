"""`/hafalan`: recording a deposit (surah name and juz derived, ayat checked against the surah), listing with
filters, progress per student checked by hand (distinct ayat, juz, last deposit, pace); validation and replays."""

from datetime import date, timedelta
from typing import Any

import httpx2
import pytest
from sqlalchemy import func, select

from mcp_asrama.service.db import make_engine
from mcp_asrama.service.models import Hafalan

pytestmark = pytest.mark.anyio

TODAY = date.today()
KEY = "konfirmasi-setoran-0001"


def day(offset: int) -> str:
    return (TODAY + timedelta(days=offset)).isoformat()


def count(url: str) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(select(func.count()).select_from(Hafalan)).scalar_one())
    finally:
        engine.dispose()


def setoran(
    id_anak: str = "A001", surah: int = 78, mulai: int = 1, selesai: int = 40, offset: int = 0, **extra: Any
) -> dict[str, Any]:
    return {
        "id_anak": id_anak,
        "tanggal": day(offset),
        "jenis": extra.pop("jenis", "ziyadah"),
        "surah": surah,
        "ayat_mulai": mulai,
        "ayat_selesai": selesai,
        **extra,
    }


async def test_setoran_names_the_surah_and_its_juz(service: httpx2.AsyncClient) -> None:
    response = await service.post(
        "/hafalan", json=setoran(nilai=88, penguji="Ust. Ridwan"), headers={"X-Asrama-Actor": "ust-ridwan"}
    )
    assert response.status_code == 201
    body = response.json()
    assert len(body.pop("id")) == 16
    assert body == {
        "id_anak": "A001",
        "nama": "Ahmad Fauzi",
        "kelas": "7A",
        "kamar": "Al-Fatih 1",
        "tanggal": day(0),
        "jenis": "ziyadah",
        "surah": 78,
        "nama_surah": "An-Naba'",
        "ayat_mulai": 1,
        "ayat_selesai": 40,
        "juz": [30],
        "nilai": 88,
        "penguji": "Ust. Ridwan",
    }
    across = await service.post("/hafalan", json=setoran(surah=2, mulai=140, selesai=145, jenis="murajaah"))
    assert across.status_code == 201
    assert (across.json()["nama_surah"], across.json()["juz"]) == ("Al-Baqarah", [1, 2])
    assert "nilai" not in across.json() and "penguji" not in across.json()


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (setoran(surah=2, mulai=280, selesai=290), "Al-Baqarah hanya punya 286 ayat"),
        (setoran(surah=114, mulai=1, selesai=7), "An-Nas hanya punya 6 ayat"),
        (setoran(surah=78, mulai=10, selesai=5), "Ayat mulai (10) melewati ayat selesai (5)"),
        (setoran(offset=1), "tanggal tidak boleh sesudah hari ini"),
    ],
)
async def test_setoran_outside_the_surah_or_in_the_future_is_422_with_the_reason(
    service: httpx2.AsyncClient, tutorial_db: str, body: dict[str, Any], detail: str
) -> None:
    response = await service.post("/hafalan", json=body)
    assert (response.status_code, response.json()["detail"]) == (422, detail)
    assert count(tutorial_db) == 0


@pytest.mark.parametrize(
    "body",
    [
        setoran(surah=0),
        setoran(surah=115),
        setoran(mulai=0),
        setoran(jenis="tilawah"),
        setoran(nilai=101),
        setoran(nilai=-1),
        setoran(penguji="x" * 201),
        {**setoran(), "surah": "Al-Baqarah"},
        {**setoran(), "tanggal": "2026-02-29"},
        {**setoran(), "juz": 30},
    ],
)
async def test_setoran_validates_every_field(service: httpx2.AsyncClient, body: dict[str, Any]) -> None:
    assert (await service.post("/hafalan", json=body)).status_code == 422


async def test_setoran_for_an_unknown_student_is_404(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    response = await service.post("/hafalan", json=setoran(id_anak="A999"))
    assert (response.status_code, response.json()["detail"]) == (404, "Anak tidak ditemukan")
    assert count(tutorial_db) == 0


async def test_setoran_replays_under_the_same_key(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    headers = {"Idempotency-Key": KEY}
    first = await service.post("/hafalan", json=setoran(), headers=headers)
    again = await service.post("/hafalan", json=setoran(), headers=headers)
    assert first.status_code == again.status_code == 201 and again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true" and count(tutorial_db) == 1
    assert (await service.post("/hafalan", json=setoran(selesai=30), headers=headers)).status_code == 409
    assert count(tutorial_db) == 1


async def _deposits(service: httpx2.AsyncClient) -> None:
    """A001: An-Naba' 1-40 two days ago, An-Nas 1-6 40 days ago (ziyadah), An-Naba' 1-10 yesterday (murajaah),
    An-Naba' 1-20 30 days ago (ziyadah, counted once); A003: Al-Baqarah 1-6 today; A002: nothing."""
    for body in [
        setoran("A001", 78, 1, 40, -2),
        setoran("A001", 114, 1, 6, -40),
        setoran("A001", 78, 1, 10, -1, jenis="murajaah"),
        setoran("A001", 78, 1, 20, -30),
        setoran("A003", 2, 1, 6, 0),
    ]:
        assert (await service.post("/hafalan", json=body)).status_code == 201


async def test_daftar_filters_by_student_class_room_period_and_kind(service: httpx2.AsyncClient) -> None:
    await _deposits(service)
    everything = (await service.get("/hafalan")).json()
    assert everything["total"] == 5
    assert [r["tanggal"] for r in everything["data"]] == [day(0), day(-1), day(-2), day(-30), day(-40)]
    cases = {
        "id_anak=A001": 4,
        "jenis=murajaah": 1,
        "jenis=ziyadah&id_anak=A001": 3,
        "kelas=7a": 5,
        "kelas=8B": 0,
        "kamar=aisyah 2": 1,
        f"dari={day(-2)}&sampai={day(-1)}": 2,
        f"sampai={day(-35)}": 1,
    }
    for params, total in cases.items():
        response = await service.get(f"/hafalan?{params}")
        assert response.status_code == 200, params
        assert response.json()["total"] == total == len(response.json()["data"]), params
    assert (await service.get("/hafalan?jenis=tilawah")).status_code == 422
    assert (await service.get(f"/hafalan?dari={day(0)}&sampai={day(-1)}")).status_code == 422
    page = (await service.get("/hafalan?limit=1&offset=4")).json()
    assert [r["surah"] for r in page["data"]] == [114]


async def test_progres_counts_distinct_ziyadah_ayat_juz_last_deposit_and_pace(service: httpx2.AsyncClient) -> None:
    await _deposits(service)
    response = await service.get("/hafalan/progres")
    assert response.status_code == 200
    progres = response.json()
    # A001: 40 (An-Naba') + 6 (An-Nas) distinct ziyadah ayat = 46 of juz 30's 564 = 0.08 juz; in the last 28 days
    # 40 ziyadah ayat (the 1-20 of 30 days ago is outside) = 10.0 a week; last deposit yesterday (murajaah).
    # A003: 6 of juz 1's 148 ayat = 0.04 juz, 1.5 a week. A002: none.
    assert progres == {
        "jumlah_anak": 3,
        "rata_rata": {"ayat": 17.3, "juz": 0.04},
        "data": [
            {
                "id_anak": "A001",
                "nama": "Ahmad Fauzi",
                "kelas": "7A",
                "kamar": "Al-Fatih 1",
                "ayat": 46,
                "juz": 0.08,
                "setoran_terakhir": day(-1),
                "ayat_per_pekan": 10.0,
            },
            {
                "id_anak": "A003",
                "nama": "Citra Lestari",
                "kelas": "7A",
                "kamar": "Aisyah 2",
                "ayat": 6,
                "juz": 0.04,
                "setoran_terakhir": day(0),
                "ayat_per_pekan": 1.5,
            },
            {
                "id_anak": "A002",
                "nama": "Budi Santoso",
                "kelas": "8B",
                "kamar": "Al-Fatih 1",
                "ayat": 0,
                "juz": 0.0,
                "ayat_per_pekan": 0.0,
            },
        ],
    }
    kelas = (await service.get("/hafalan/progres?kelas=7a")).json()
    assert kelas["jumlah_anak"] == 2 and kelas["rata_rata"] == {"ayat": 26.0, "juz": 0.06}
    room = (await service.get("/hafalan/progres?kamar=Al-Fatih 1")).json()
    assert [r["id_anak"] for r in room["data"]] == ["A001", "A002"]
    one = (await service.get("/hafalan/progres?id_anak=A003")).json()
    assert [r["ayat"] for r in one["data"]] == [6]
    top = (await service.get("/hafalan/progres?limit=2")).json()  # the first rows; count and averages of all
    assert top == {**progres, "data": progres["data"][:2]}
    for wrong in ("0", "501", "dua"):
        assert (await service.get(f"/hafalan/progres?limit={wrong}")).status_code == 422


async def test_progres_of_an_unknown_student_is_404_and_of_an_empty_class_empty(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/hafalan/progres?id_anak=A999")
    assert (response.status_code, response.json()["detail"]) == (404, "Anak tidak ditemukan")
    empty = (await reader.get("/hafalan/progres?kelas=12C")).json()
    assert empty == {"jumlah_anak": 0, "rata_rata": {"ayat": 0.0, "juz": 0.0}, "data": []}
