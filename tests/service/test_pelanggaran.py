"""`/pelanggaran`: the school's kinds, recording a violation (defaults from its kind, the actor kept), listing with
filters, the summary per student and category checked by hand; validation and idempotent replays."""

from datetime import date, timedelta
from typing import Any

import httpx2
import pytest
from sqlalchemy import func, select

from mcp_asrama.service.db import make_engine
from mcp_asrama.service.models import Pelanggaran

pytestmark = pytest.mark.anyio

TODAY = date.today()
KEY = "konfirmasi-pelanggaran-01"


def day(offset: int) -> str:
    return (TODAY + timedelta(days=offset)).isoformat()


def query(url: str, statement: Any) -> list[Any]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return list(conn.execute(statement))
    finally:
        engine.dispose()


def catat(id_anak: str = "A001", jenis: str = "membawa_hp", offset: int = 0, **extra: Any) -> dict[str, Any]:
    return {"id_anak": id_anak, "tanggal": day(offset), "jenis": jenis, **extra}


async def post(service: httpx2.AsyncClient, body: dict[str, Any], **headers: str) -> httpx2.Response:
    return await service.post("/pelanggaran", json=body, headers=headers)


async def test_jenis_lists_the_default_kinds_by_kategori_then_nama(service: httpx2.AsyncClient) -> None:
    response = await service.get("/pelanggaran/jenis")
    assert response.status_code == 200
    data = response.json()["data"]
    assert len(data) >= 12
    by_kode = {j["kode"]: j for j in data}
    assert by_kode["terlambat_sholat"] == {
        "kode": "terlambat_sholat",
        "nama": "Terlambat sholat berjamaah",
        "kategori": "ringan",
        "poin": 5,
    }
    assert (by_kode["keluar_tanpa_izin"]["kategori"], by_kode["keluar_tanpa_izin"]["poin"]) == ("sedang", 20)
    assert (by_kode["merokok"]["kategori"], by_kode["merokok"]["poin"]) == ("berat", 75)
    order = {"ringan": 0, "sedang": 1, "berat": 2}
    keys = [(order[j["kategori"]], j["nama"]) for j in data]
    assert keys == sorted(keys)


async def test_catat_takes_points_and_category_from_the_kind_and_records_the_actor(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    response = await post(service, catat(keterangan="HP disimpan di lemari"), **{"X-Asrama-Actor": "musyrif-ridwan"})
    assert response.status_code == 201
    body = response.json()
    assert {k: body[k] for k in ("id_anak", "nama", "kelas", "kamar", "tanggal", "kategori", "jenis", "poin")} == {
        "id_anak": "A001",
        "nama": "Ahmad Fauzi",
        "kelas": "7A",
        "kamar": "Al-Fatih 1",
        "tanggal": day(0),
        "kategori": "sedang",
        "jenis": "membawa_hp",
        "poin": 25,
    }
    assert body["nama_jenis"] == "Membawa HP tanpa izin"
    assert body["keterangan"] == "HP disimpan di lemari" and body["dicatat_oleh"] == "musyrif-ridwan"
    assert len(body["id"]) == 16 and not body["id"].isdigit()
    stored = query(tutorial_db, select(Pelanggaran.id, Pelanggaran.dicatat_oleh, Pelanggaran.poin))
    assert [tuple(r) for r in stored] == [(body["id"], "musyrif-ridwan", 25)]


async def test_catat_may_set_its_own_points_and_category(service: httpx2.AsyncClient) -> None:
    response = await post(service, catat(jenis="terlambat_sholat", poin=0, kategori="sedang", offset=-3))
    assert response.status_code == 201
    body = response.json()
    assert (body["poin"], body["kategori"], body["tanggal"]) == (0, "sedang", day(-3))
    assert "keterangan" not in body and "dicatat_oleh" not in body
    second = await post(service, catat(jenis="terlambat_sholat"))
    assert second.json()["id"] != body["id"]


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        (catat(id_anak="A999"), 404, "Anak tidak ditemukan"),
        (catat(jenis="terbang"), 422, "jenis pelanggaran tidak dikenal: lihat GET /pelanggaran/jenis"),
        (catat(offset=1), 422, "tanggal tidak boleh sesudah hari ini"),
    ],
)
async def test_catat_refuses_unknown_student_kind_and_future_date(
    service: httpx2.AsyncClient, tutorial_db: str, body: dict[str, Any], status: int, detail: str
) -> None:
    response = await post(service, body)
    assert (response.status_code, response.json()["detail"]) == (status, detail)
    assert query(tutorial_db, select(func.count()).select_from(Pelanggaran))[0][0] == 0


@pytest.mark.parametrize(
    "body",
    [
        catat(kategori="sangat_berat"),
        catat(poin=1001),
        catat(poin=-1),
        catat(jenis="Membawa HP"),
        catat(keterangan="x" * 501),
        catat(keterangan="a\x00b"),
        {**catat(), "tanggal": "2026-02-30"},
        {**catat(), "tanggal": "01-12-2026"},
        {**catat(), "dicatat_oleh": "palsu"},
        {"id_anak": "A001", "tanggal": day(0)},
    ],
)
async def test_catat_validates_every_field(service: httpx2.AsyncClient, body: dict[str, Any]) -> None:
    response = await post(service, body)
    assert response.status_code == 422


async def test_catat_replays_under_the_same_key_and_refuses_it_for_another_request(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    first = await post(service, catat(), **{"Idempotency-Key": KEY, "X-Asrama-Actor": "wk"})
    again = await post(service, catat(), **{"Idempotency-Key": KEY, "X-Asrama-Actor": "wk"})
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json() and again.headers["idempotent-replayed"] == "true"
    assert query(tutorial_db, select(func.count()).select_from(Pelanggaran))[0][0] == 1
    other = await post(service, catat(jenis="merokok"), **{"Idempotency-Key": KEY, "X-Asrama-Actor": "wk"})
    assert other.status_code == 409
    assert query(tutorial_db, select(func.count()).select_from(Pelanggaran))[0][0] == 1


async def _record_month(service: httpx2.AsyncClient) -> list[str]:
    """A001: membawa_hp (sedang 25) today, terlambat_sholat (ringan 5) 2 days ago, merokok (berat 75) 40 days ago;
    A002 (8B): terlambat_sholat twice (ringan 5 each) 1 and 10 days ago; A003 (7A, Aisyah 2): berkelahi (berat 50)
    5 days ago."""
    ids = []
    for body in [
        catat("A001", "membawa_hp", 0),
        catat("A001", "terlambat_sholat", -2),
        catat("A001", "merokok", -40),
        catat("A002", "terlambat_sholat", -1),
        catat("A002", "terlambat_sholat", -10),
        catat("A003", "berkelahi", -5),
    ]:
        response = await post(service, body)
        assert response.status_code == 201
        ids.append(response.json()["id"])
    return ids


async def test_daftar_filters_by_student_class_room_and_period_latest_first(service: httpx2.AsyncClient) -> None:
    await _record_month(service)
    everything = (await service.get("/pelanggaran")).json()
    assert everything["total"] == 6
    dates = [r["tanggal"] for r in everything["data"]]
    assert dates == sorted(dates, reverse=True)
    cases = {
        "id_anak=A001": ["A001", "A001", "A001"],
        "kelas=7a": ["A001", "A001", "A003", "A001"],
        "kamar=AISYAH 2": ["A003"],
        f"dari={day(-5)}&sampai={day(-1)}": ["A002", "A001", "A003"],
        f"kelas=8B&dari={day(-30)}": ["A002", "A002"],
        f"sampai={day(-30)}": ["A001"],
        "id_anak=A999": [],
    }
    for params, expected in cases.items():
        response = await service.get(f"/pelanggaran?{params}")
        assert response.status_code == 200, params
        assert [r["id_anak"] for r in response.json()["data"]] == expected, params
        assert response.json()["total"] == len(expected), params
    page = (await service.get("/pelanggaran?limit=2&offset=1")).json()
    assert page["total"] == 6 and [r["tanggal"] for r in page["data"]] == dates[1:3]


async def test_rekap_sums_counts_and_points_per_student_and_category(service: httpx2.AsyncClient) -> None:
    await _record_month(service)
    response = await service.get(f"/pelanggaran/rekap?dari={day(-29)}&sampai={day(0)}")
    assert response.status_code == 200
    rekap = response.json()
    # In the last 30 days: A003 50 points (1 berat); A001 25 + 5 = 30 (1 sedang, 1 ringan); A002 5 + 5 = 10.
    assert rekap == {
        "dari": day(-29),
        "sampai": day(0),
        "jumlah_anak": 3,
        "total": {"ringan": 3, "sedang": 1, "berat": 1, "jumlah": 5, "poin": 90},
        "per_anak": [
            {
                "id_anak": "A003",
                "nama": "Citra Lestari",
                "kelas": "7A",
                "kamar": "Aisyah 2",
                **{"ringan": 0, "sedang": 0, "berat": 1, "jumlah": 1, "poin": 50},
            },
            {
                "id_anak": "A001",
                "nama": "Ahmad Fauzi",
                "kelas": "7A",
                "kamar": "Al-Fatih 1",
                **{"ringan": 1, "sedang": 1, "berat": 0, "jumlah": 2, "poin": 30},
            },
            {
                "id_anak": "A002",
                "nama": "Budi Santoso",
                "kelas": "8B",
                "kamar": "Al-Fatih 1",
                **{"ringan": 2, "sedang": 0, "berat": 0, "jumlah": 2, "poin": 10},
            },
        ],
    }
    first = (await service.get(f"/pelanggaran/rekap?dari={day(-29)}&sampai={day(0)}&limit=2")).json()
    assert first == {**rekap, "per_anak": rekap["per_anak"][:2]}  # the count and total stay those of all
    wider = (await service.get(f"/pelanggaran/rekap?dari={day(-60)}&sampai={day(0)}&kelas=7A")).json()
    assert [(r["id_anak"], r["poin"], r["berat"]) for r in wider["per_anak"]] == [("A001", 105, 1), ("A003", 50, 1)]
    assert wider["total"] == {"ringan": 1, "sedang": 1, "berat": 2, "jumlah": 4, "poin": 155}
    room = (await service.get(f"/pelanggaran/rekap?dari={day(-60)}&sampai={day(0)}&kamar=al-fatih 1")).json()
    assert room["jumlah_anak"] == 2 and {r["id_anak"] for r in room["per_anak"]} == {"A001", "A002"}
    empty = (await service.get(f"/pelanggaran/rekap?dari={day(-400)}&sampai={day(-100)}")).json()
    assert empty["jumlah_anak"] == 0 and empty["per_anak"] == [] and empty["total"]["jumlah"] == 0


@pytest.mark.parametrize(
    ("path", "detail"),
    [
        (f"/pelanggaran/rekap?dari={day(0)}&sampai={day(-1)}", "sampai harus sama dengan atau sesudah dari"),
        (f"/pelanggaran/rekap?dari={day(-366)}&sampai={day(0)}", "rentang tanggal paling lama 366 hari"),
        (f"/pelanggaran?dari={day(0)}&sampai={day(-1)}", "sampai harus sama dengan atau sesudah dari"),
    ],
)
async def test_periods_are_checked(reader: httpx2.AsyncClient, path: str, detail: str) -> None:
    response = await reader.get(path)
    assert (response.status_code, response.json()["detail"]) == (422, detail)


@pytest.mark.parametrize(
    "path",
    [
        "/pelanggaran/rekap",
        f"/pelanggaran/rekap?dari={day(-1)}",
        "/pelanggaran/rekap?dari=2026-13-01&sampai=2026-12-01",
        "/pelanggaran?limit=0",
        "/pelanggaran?limit=501",
        "/pelanggaran?offset=-1",
        "/pelanggaran?dari=kemarin",
    ],
)
async def test_bad_queries_are_422(reader: httpx2.AsyncClient, path: str) -> None:
    assert (await reader.get(path)).status_code == 422


async def test_routes_need_the_token(reader: httpx2.AsyncClient) -> None:
    for path in ("/pelanggaran", "/pelanggaran/jenis", f"/pelanggaran/rekap?dari={day(-1)}&sampai={day(0)}"):
        response = await reader.get(path, headers={"Authorization": "Bearer salah"})
        assert response.status_code == 401, path
    assert (await reader.post("/pelanggaran", json=catat(), headers={"Authorization": ""})).status_code == 401
