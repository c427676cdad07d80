"""`/kesehatan`: recording a clinic visit (the actor kept), listing with filters, counts per category checked by hand
(every category, no student in the answer); validation, replays, and no health detail in any log line."""

import logging
from datetime import date, timedelta
from typing import Any

import httpx2
import pytest
from sqlalchemy import select

from mcp_asrama.service.db import make_engine
from mcp_asrama.service.models import KunjunganKlinik

pytestmark = pytest.mark.anyio

TODAY = date.today()
KEY = "konfirmasi-klinik-00001"
KATEGORI = ["demam", "batuk-pilek", "pencernaan", "cedera", "kulit", "lainnya"]


def day(offset: int) -> str:
    return (TODAY + timedelta(days=offset)).isoformat()


def rows(url: str) -> list[Any]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return list(conn.execute(select(KunjunganKlinik.id, KunjunganKlinik.dicatat_oleh)))
    finally:
        engine.dispose()


def kunjungan(
    id_anak: str = "A001", kategori: str = "demam", offset: int = 0, keluhan: str = "Panas 38,5", **extra: Any
) -> dict[str, Any]:
    return {"id_anak": id_anak, "tanggal": day(offset), "keluhan": keluhan, "kategori": kategori, **extra}


FULL = kunjungan(
    keluhan="Demam tinggi dan pusing sejak semalam",
    tindakan="Kompres, istirahat di UKS",
    obat="Parasetamol 500 mg",
    rujukan="Puskesmas Ciawi",
    petugas="Ns. Aminah",
)


async def test_kunjungan_is_recorded_with_every_field_and_the_actor(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    response = await service.post("/kesehatan", json=FULL, headers={"X-Asrama-Actor": "klinik-aminah"})
    assert response.status_code == 201
    body = response.json()
    assert len(body["id"]) == 16
    assert body == {
        "id": body["id"],
        "id_anak": "A001",
        "nama": "Ahmad Fauzi",
        "kelas": "7A",
        "kamar": "Al-Fatih 1",
        "tanggal": day(0),
        "kategori": "demam",
        "keluhan": "Demam tinggi dan pusing sejak semalam",
        "tindakan": "Kompres, istirahat di UKS",
        "obat": "Parasetamol 500 mg",
        "rujukan": "Puskesmas Ciawi",
        "petugas": "Ns. Aminah",
    }
    assert [tuple(r) for r in rows(tutorial_db)] == [(body["id"], "klinik-aminah")]
    short = await service.post("/kesehatan", json=kunjungan(kategori="kulit", obat="  "))
    assert short.status_code == 201 and not {"tindakan", "obat", "rujukan", "petugas"} & set(short.json())


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        (kunjungan(id_anak="A999"), 404, "Anak tidak ditemukan"),
        (kunjungan(offset=1), 422, "tanggal tidak boleh sesudah hari ini"),
    ],
)
async def test_unknown_student_or_future_day_is_refused(
    service: httpx2.AsyncClient, tutorial_db: str, body: dict[str, Any], status: int, detail: str
) -> None:
    response = await service.post("/kesehatan", json=body)
    assert (response.status_code, response.json()["detail"]) == (status, detail)
    assert rows(tutorial_db) == []


@pytest.mark.parametrize(
    "body",
    [
        kunjungan(kategori="flu"),
        kunjungan(kategori="Demam"),
        kunjungan(keluhan=""),
        kunjungan(keluhan="x" * 501),
        kunjungan(tindakan="x" * 501),
        kunjungan(petugas="x" * 201),
        kunjungan(obat="a\x00b"),
        {**kunjungan(), "tanggal": "2026-04-31"},
        {**kunjungan(), "diagnosa": "x"},
        {"id_anak": "A001", "tanggal": day(0), "kategori": "demam"},
    ],
)
async def test_kunjungan_validates_every_field(service: httpx2.AsyncClient, body: dict[str, Any]) -> None:
    assert (await service.post("/kesehatan", json=body)).status_code == 422


async def test_kunjungan_replays_under_the_same_key(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    headers = {"Idempotency-Key": KEY, "X-Asrama-Actor": "klinik"}
    first = await service.post("/kesehatan", json=FULL, headers=headers)
    again = await service.post("/kesehatan", json=FULL, headers=headers)
    assert first.status_code == again.status_code == 201 and again.json() == first.json()
    assert again.headers["idempotent-replayed"] == "true" and len(rows(tutorial_db)) == 1
    other = await service.post("/kesehatan", json=kunjungan(kategori="kulit"), headers=headers)
    assert other.status_code == 409 and len(rows(tutorial_db)) == 1


async def _visits(service: httpx2.AsyncClient) -> None:
    """A001: demam today and 3 days ago, batuk-pilek 20 days ago; A002 (8B): demam yesterday; A003 (7A, Aisyah 2):
    cedera 2 days ago, pencernaan 100 days ago."""
    for body in [
        kunjungan("A001", "demam", 0),
        kunjungan("A001", "demam", -3),
        kunjungan("A001", "batuk-pilek", -20),
        kunjungan("A002", "demam", -1),
        kunjungan("A003", "cedera", -2),
        kunjungan("A003", "pencernaan", -100),
    ]:
        assert (await service.post("/kesehatan", json=body)).status_code == 201


async def test_daftar_filters_by_student_class_room_and_period_latest_first(service: httpx2.AsyncClient) -> None:
    await _visits(service)
    everything = (await service.get("/kesehatan")).json()
    assert everything["total"] == 6
    assert [r["tanggal"] for r in everything["data"]] == [day(n) for n in (0, -1, -2, -3, -20, -100)]
    cases = {
        "id_anak=A001": ["A001"] * 3,
        "kelas=7a": ["A001", "A003", "A001", "A001", "A003"],
        "kamar=AISYAH 2": ["A003", "A003"],
        f"dari={day(-3)}&sampai={day(-1)}": ["A002", "A003", "A001"],
        f"sampai={day(-50)}": ["A003"],
        "id_anak=A999": [],
    }
    for params, expected in cases.items():
        response = await service.get(f"/kesehatan?{params}")
        assert response.status_code == 200, params
        assert [r["id_anak"] for r in response.json()["data"]] == expected, params
    page = (await service.get("/kesehatan?limit=2&offset=2")).json()
    assert page["total"] == 6 and [r["tanggal"] for r in page["data"]] == [day(-2), day(-3)]


async def test_rekap_counts_visits_and_students_per_category_and_names_nobody(service: httpx2.AsyncClient) -> None:
    await _visits(service)
    response = await service.get(f"/kesehatan/rekap?dari={day(-29)}&sampai={day(0)}")
    assert response.status_code == 200
    rekap = response.json()
    # Last 30 days: 5 visits by 3 students; demam 3 visits by A001 (twice) and A002; batuk-pilek 1; cedera 1.
    assert rekap == {
        "dari": day(-29),
        "sampai": day(0),
        "kunjungan": 5,
        "anak": 3,
        "per_kategori": [
            {"kategori": "demam", "kunjungan": 3, "anak": 2},
            {"kategori": "batuk-pilek", "kunjungan": 1, "anak": 1},
            {"kategori": "pencernaan", "kunjungan": 0, "anak": 0},
            {"kategori": "cedera", "kunjungan": 1, "anak": 1},
            {"kategori": "kulit", "kunjungan": 0, "anak": 0},
            {"kategori": "lainnya", "kunjungan": 0, "anak": 0},
        ],
    }
    assert not any(s in response.text for s in ("A00", "Ahmad", "Budi", "Citra", "Panas"))
    kelas = (await service.get(f"/kesehatan/rekap?dari={day(-200)}&sampai={day(0)}&kelas=7A")).json()
    assert (kelas["kunjungan"], kelas["anak"]) == (5, 2)
    assert [k["kunjungan"] for k in kelas["per_kategori"]] == [2, 1, 1, 1, 0, 0]
    room = (await service.get(f"/kesehatan/rekap?dari={day(-10)}&sampai={day(0)}&kamar=al-fatih 1")).json()
    assert (room["kunjungan"], room["anak"]) == (3, 2)
    empty = (await service.get(f"/kesehatan/rekap?dari={day(-400)}&sampai={day(-300)}")).json()
    assert [k["kategori"] for k in empty["per_kategori"]] == KATEGORI and empty["kunjungan"] == 0


@pytest.mark.parametrize(
    ("path", "status"),
    [
        (f"/kesehatan/rekap?dari={day(0)}&sampai={day(-1)}", 422),
        (f"/kesehatan/rekap?dari={day(-400)}&sampai={day(0)}", 422),
        ("/kesehatan/rekap", 422),
        (f"/kesehatan?dari={day(0)}&sampai={day(-1)}", 422),
        ("/kesehatan?limit=501", 422),
        ("/kesehatan", 200),
    ],
)
async def test_queries_are_checked(reader: httpx2.AsyncClient, path: str, status: int) -> None:
    assert (await reader.get(path)).status_code == status


async def test_no_health_detail_reaches_a_log_line(
    service: httpx2.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    assert (await service.post("/kesehatan", json=FULL, headers={"X-Asrama-Actor": "klinik"})).status_code == 201
    assert (await service.post("/kesehatan", json={**FULL, "kategori": "x"})).status_code == 422
    assert (await service.get("/kesehatan?id_anak=A001")).status_code == 200
    logged = "\n".join(r.getMessage() + str(r.__dict__) for r in caplog.records)
    for value in ("Demam tinggi", "Kompres", "Parasetamol", "Puskesmas"):
        assert value not in logged
