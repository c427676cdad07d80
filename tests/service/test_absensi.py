"""`/absensi`: one day's records, the summary over a range, and recording one student's day."""

from collections.abc import AsyncIterator, Iterator
from datetime import date
from typing import Any

import httpx2
import pytest
from sqlalchemy import func, select

from mcp_asrama.service.db import make_engine
from mcp_asrama.service.models import Absensi
from tests.conftest import (
    BACKENDS,
    TUTORIAL_ABSENSI,
    TUTORIAL_ANAK,
    TUTORIAL_KAMAR,
    fresh_database,
    insert_rows,
    serve_db,
)
from tests.conftest import (
    CITRA_ON_THE_6TH as CITRA,
)

pytestmark = pytest.mark.anyio

HARI = "2026-10-06"
AHMAD = {"id_anak": "A001", "status": "hadir", "nama": "Ahmad Fauzi", "kelas": "7A", "kamar": "Al-Fatih 1"}
BUDI = {"id_anak": "A002", "status": "hadir", "nama": "Budi Santoso", "kelas": "8B", "kamar": "Al-Fatih 1"}
IMPOSSIBLE_DATES = ["2026-02-30", "2026-13-01", "2026-00-10", "kemarin", "1700000000", "2026-10-6", "06-10-2026"]


def rows_stored(url: str, tanggal: str, id_anak: str) -> list[tuple[str, str | None]]:
    """What the database holds for one student's day, read past the service."""
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            query = select(Absensi.status, Absensi.keterangan).where(
                Absensi.tanggal == date.fromisoformat(tanggal), Absensi.id_anak == id_anak
            )
            return [(r.status, r.keterangan) for r in conn.execute(query)]
    finally:
        engine.dispose()


def count_stored(url: str) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return conn.scalar(select(func.count()).select_from(Absensi)) or 0
    finally:
        engine.dispose()


# --- GET /absensi?tanggal= -------------------------------------------------------------------------------------


async def test_day_gives_tutorial_records_with_who_each_student_is(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/absensi", params={"tanggal": HARI})
    assert response.status_code == 200
    body = response.json()
    assert body["tanggal"] == HARI
    assert {r["id_anak"]: r for r in body["data"]} == {"A001": AHMAD, "A002": BUDI, "A003": CITRA}


async def test_keterangan_is_present_only_when_set(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/absensi", params={"tanggal": HARI})
    records = {r["id_anak"]: r for r in response.json()["data"]}
    assert "keterangan" not in records["A001"]
    assert "keterangan" not in records["A002"]
    assert records["A003"]["keterangan"] == "Pulang, acara keluarga"


async def test_day_records_are_ordered_by_class_then_name(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/absensi", params={"tanggal": HARI})
    assert [r["id_anak"] for r in response.json()["data"]] == ["A001", "A003", "A002"]


async def test_day_without_records_is_an_empty_list(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/absensi", params={"tanggal": "2026-10-07"})
    assert response.status_code == 200
    assert response.json() == {"tanggal": "2026-10-07", "data": []}


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"kelas": "7A"}, ["A001", "A003"]),
        ({"kelas": "7a"}, ["A001", "A003"]),
        ({"kelas": "8"}, []),
        ({"kamar": "al-fatih 1"}, ["A001", "A002"]),
        ({"kamar": "Aisyah 2"}, ["A003"]),
        ({"status": "izin"}, ["A003"]),
        ({"status": "hadir"}, ["A001", "A002"]),
        ({"status": "alpa"}, []),
        ({"kelas": "7A", "status": "hadir"}, ["A001"]),
        ({"kelas": "7A", "kamar": "Al-Fatih 1", "status": "izin"}, []),
    ],
)
async def test_day_filters_by_class_room_and_status(
    reader: httpx2.AsyncClient, params: dict[str, str], expected: list[str]
) -> None:
    response = await reader.get("/absensi", params={"tanggal": HARI, **params})
    assert response.status_code == 200
    assert sorted(r["id_anak"] for r in response.json()["data"]) == expected


@pytest.mark.parametrize("status", ["aktif", "Hadir", "terlambat", ""])
async def test_day_with_unknown_attendance_status_is_422(reader: httpx2.AsyncClient, status: str) -> None:
    response = await reader.get("/absensi", params={"tanggal": HARI, "status": status})
    assert response.status_code == 422


async def test_day_without_tanggal_is_422(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/absensi")
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "tanggal"]


@pytest.mark.parametrize("tanggal", [*IMPOSSIBLE_DATES, "2026-10-06T00:00:00", " 2026-10-06", ""])
async def test_day_with_impossible_date_is_422(reader: httpx2.AsyncClient, tanggal: str) -> None:
    response = await reader.get("/absensi", params={"tanggal": tanggal})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "tanggal"]


async def test_leap_day_is_a_date(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/absensi", params={"tanggal": "2028-02-29"})
    assert response.json() == {"tanggal": "2028-02-29", "data": []}


# --- GET /absensi?semua_anak=true: every student of the filter --------------------------------------------------

# Imported after the day was recorded: in 7A, without a room, herself `pulang` (she still expects a record).
DEWI_ANAK = {"id": "N001", "nama": "Dewi Anggraini", "kelas": "7A", "kamar": None, "status": "pulang",
             "nik": "3171000000000004", "no_hp_wali": "081200000004", "alamat": "Jl. Anggrek No. 4, Bogor"}  # fmt: skip
DEWI = {"id_anak": "N001", "status": "belum_dicatat", "nama": "Dewi Anggraini", "kelas": "7A"}


@pytest.fixture(scope="module", params=BACKENDS)
def imported_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database(request.param, tmp_path_factory.mktemp("db")) as url:
        insert_rows(url, kamar=TUTORIAL_KAMAR, anak=[*TUTORIAL_ANAK, DEWI_ANAK], absensi=TUTORIAL_ABSENSI)
        yield url


@pytest.fixture
async def imported(imported_db: str) -> AsyncIterator[httpx2.AsyncClient]:
    """The tutorial's data plus one student without a record on 2026-10-06 (read only)."""
    async for client in serve_db(imported_db):
        yield client


async def test_semua_anak_adds_each_student_without_a_record_as_belum_dicatat(imported: httpx2.AsyncClient) -> None:
    response = await imported.get("/absensi", params={"tanggal": HARI, "semua_anak": "true"})
    assert response.status_code == 200
    assert response.json() == {"tanggal": HARI, "data": [AHMAD, CITRA, DEWI, BUDI], "semua_anak": True}
    assert not any(DEWI_ANAK[f] in response.text for f in ("nik", "no_hp_wali", "alamat"))


async def test_the_day_of_some_students_only(imported: httpx2.AsyncClient) -> None:
    params = [("tanggal", HARI), ("semua_anak", "true"), ("id_anak", "A003"), ("id_anak", "A001"), ("id_anak", "X9")]
    response = await imported.get("/absensi", params=params)
    assert response.status_code == 200
    assert response.json()["data"] == [AHMAD, CITRA]  # the class's order; an unknown id is simply absent
    too_many = [("tanggal", HARI), *(("id_anak", f"A{i:03d}") for i in range(301))]
    assert (await imported.get("/absensi", params=too_many)).status_code == 422
    bad = await imported.get("/absensi", params=[("tanggal", HARI), ("id_anak", "../x")])
    assert bad.status_code == 422


async def test_without_semua_anak_the_day_is_its_records_as_before(imported: httpx2.AsyncClient) -> None:
    response = await imported.get("/absensi", params={"tanggal": HARI})
    assert response.json() == {"tanggal": HARI, "data": [AHMAD, CITRA, BUDI]}
    unset = await imported.get("/absensi", params={"tanggal": HARI, "semua_anak": "false"})
    assert unset.json() == response.json()


async def test_semua_anak_on_a_day_without_records_lists_every_student(imported: httpx2.AsyncClient) -> None:
    body = (await imported.get("/absensi", params={"tanggal": "2026-10-07", "semua_anak": "1"})).json()
    assert [(r["id_anak"], r["status"]) for r in body["data"]] == [
        ("A001", "belum_dicatat"),
        ("A003", "belum_dicatat"),
        ("N001", "belum_dicatat"),
        ("A002", "belum_dicatat"),
    ]
    assert not any("keterangan" in r for r in body["data"])


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"kelas": "7a"}, ["A001", "A003", "N001"]),
        ({"kamar": "aisyah 2"}, ["A003"]),
        ({"status": "hadir"}, ["A001", "A002"]),
        ({"status": "belum_dicatat"}, ["N001"]),
        ({"kelas": "8B", "status": "belum_dicatat"}, []),
    ],
)
async def test_semua_anak_filters_by_class_room_and_status(
    imported: httpx2.AsyncClient, params: dict[str, str], expected: list[str]
) -> None:
    response = await imported.get("/absensi", params={"tanggal": HARI, "semua_anak": "true", **params})
    assert [r["id_anak"] for r in response.json()["data"]] == expected


async def test_status_belum_dicatat_implies_semua_anak(imported: httpx2.AsyncClient) -> None:
    response = await imported.get("/absensi", params={"tanggal": HARI, "status": "belum_dicatat"})
    assert response.json() == {"tanggal": HARI, "data": [DEWI], "semua_anak": True}


@pytest.mark.parametrize("value", ["maybe", "2", ""])
async def test_semua_anak_must_be_a_boolean(imported: httpx2.AsyncClient, value: str) -> None:
    response = await imported.get("/absensi", params={"tanggal": HARI, "semua_anak": value})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "semua_anak"]


# --- GET /absensi/rekap ----------------------------------------------------------------------------------------


def _day(tanggal: str, id_anak: str, status: str, keterangan: str | None = None) -> dict[str, Any]:
    return {"tanggal": date.fromisoformat(tanggal), "id_anak": id_anak, "status": status, "keterangan": keterangan}


RECORDS = [
    _day("2026-10-04", "A001", "alpa"),  # before the range below
    _day("2026-10-05", "A001", "hadir"),
    _day("2026-10-06", "A001", "hadir"),
    _day("2026-10-07", "A001", "alpa"),
    _day("2026-10-08", "A001", "hadir"),
    _day("2026-10-05", "A002", "sakit", "Demam"),
    _day("2026-10-06", "A002", "hadir"),
    _day("2026-10-07", "A002", "sakit"),
    _day("2026-10-08", "A002", "izin"),
    _day("2026-10-05", "A003", "hadir"),
    _day("2026-10-06", "A003", "izin"),
    _day("2026-10-07", "A003", "hadir"),
    _day("2026-10-08", "A003", "hadir"),
    _day("2026-10-09", "A003", "alpa"),  # after it
]
REKAP = {"dari": "2026-10-05", "sampai": "2026-10-08"}
REKAP_BUDI = {
    "id_anak": "A002",
    "nama": "Budi Santoso",
    "kelas": "8B",
    "kamar": "Al-Fatih 1",
    "hadir": 1,
    "izin": 1,
    "sakit": 2,
    "alpa": 0,
    "tidak_hadir": 3,
}
REKAP_AHMAD = {
    "id_anak": "A001",
    "nama": "Ahmad Fauzi",
    "kelas": "7A",
    "kamar": "Al-Fatih 1",
    "hadir": 3,
    "izin": 0,
    "sakit": 0,
    "alpa": 1,
    "tidak_hadir": 1,
}
REKAP_CITRA = {
    "id_anak": "A003",
    "nama": "Citra Lestari",
    "kelas": "7A",
    "kamar": "Aisyah 2",
    "hadir": 3,
    "izin": 1,
    "sakit": 0,
    "alpa": 0,
    "tidak_hadir": 1,
}


@pytest.fixture(scope="module", params=BACKENDS)
def minggu_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database(request.param, tmp_path_factory.mktemp("db")) as url:
        insert_rows(url, kamar=TUTORIAL_KAMAR, anak=TUTORIAL_ANAK, absensi=RECORDS)
        yield url


@pytest.fixture
async def minggu(minggu_db: str) -> AsyncIterator[httpx2.AsyncClient]:
    """The tutorial's students with six days of attendance (read only)."""
    async for client in serve_db(minggu_db):
        yield client


async def test_rekap_counts_per_status_overall_and_per_student_most_absent_first(
    minggu: httpx2.AsyncClient,
) -> None:
    response = await minggu.get("/absensi/rekap", params=REKAP)
    assert response.status_code == 200
    assert response.json() == {
        "dari": "2026-10-05",
        "sampai": "2026-10-08",
        "total": {"hadir": 7, "izin": 2, "sakit": 2, "alpa": 1},
        "jumlah_anak": 3,
        "per_anak": [REKAP_BUDI, REKAP_AHMAD, REKAP_CITRA],  # ties in absences by name
    }


async def test_rekap_bounds_are_inclusive(minggu: httpx2.AsyncClient) -> None:
    first = (await minggu.get("/absensi/rekap", params={"dari": "2026-10-04", "sampai": "2026-10-04"})).json()
    assert first["total"] == {"hadir": 0, "izin": 0, "sakit": 0, "alpa": 1}
    assert [r["id_anak"] for r in first["per_anak"]] == ["A001"]
    last = (await minggu.get("/absensi/rekap", params={"dari": "2026-10-09", "sampai": "2026-10-09"})).json()
    assert [(r["id_anak"], r["alpa"]) for r in last["per_anak"]] == [("A003", 1)]


async def test_rekap_limit_cuts_per_student_list_but_not_the_totals(minggu: httpx2.AsyncClient) -> None:
    response = await minggu.get("/absensi/rekap", params={**REKAP, "limit": 1})
    body = response.json()
    assert body["per_anak"] == [REKAP_BUDI]
    assert body["jumlah_anak"] == 3
    assert body["total"] == {"hadir": 7, "izin": 2, "sakit": 2, "alpa": 1}


@pytest.mark.parametrize(
    ("params", "expected", "total"),
    [
        ({"kelas": "7a"}, [REKAP_AHMAD, REKAP_CITRA], {"hadir": 6, "izin": 1, "sakit": 0, "alpa": 1}),
        ({"kamar": "AISYAH 2"}, [REKAP_CITRA], {"hadir": 3, "izin": 1, "sakit": 0, "alpa": 0}),
        ({"id_anak": "A002"}, [REKAP_BUDI], {"hadir": 1, "izin": 1, "sakit": 2, "alpa": 0}),
        ({"id_anak": "X999"}, [], {"hadir": 0, "izin": 0, "sakit": 0, "alpa": 0}),
    ],
)
async def test_rekap_filters_by_class_room_and_student(
    minggu: httpx2.AsyncClient, params: dict[str, str], expected: list[dict[str, Any]], total: dict[str, int]
) -> None:
    body = (await minggu.get("/absensi/rekap", params={**REKAP, **params})).json()
    assert body["per_anak"] == expected
    assert body["jumlah_anak"] == len(expected)
    assert body["total"] == total


async def test_rekap_of_a_range_without_records_is_zero(minggu: httpx2.AsyncClient) -> None:
    response = await minggu.get("/absensi/rekap", params={"dari": "2026-11-01", "sampai": "2026-11-30"})
    assert response.json() == {
        "dari": "2026-11-01",
        "sampai": "2026-11-30",
        "total": {"hadir": 0, "izin": 0, "sakit": 0, "alpa": 0},
        "jumlah_anak": 0,
        "per_anak": [],
    }


async def test_rekap_with_sampai_before_dari_is_422(minggu: httpx2.AsyncClient) -> None:
    response = await minggu.get("/absensi/rekap", params={"dari": "2026-10-08", "sampai": "2026-10-05"})
    assert response.status_code == 422
    assert response.json() == {"detail": "sampai harus sama dengan atau sesudah dari"}


async def test_rekap_over_more_than_366_days_is_422(minggu: httpx2.AsyncClient) -> None:
    response = await minggu.get("/absensi/rekap", params={"dari": "2024-01-01", "sampai": "2025-01-01"})
    assert response.status_code == 422
    assert response.json() == {"detail": "rentang paling panjang 366 hari"}
    wide = await minggu.get("/absensi/rekap", params={"dari": "0001-01-01", "sampai": "9999-12-31"})
    assert wide.status_code == 422


async def test_rekap_over_a_whole_leap_year_is_allowed(minggu: httpx2.AsyncClient) -> None:
    response = await minggu.get("/absensi/rekap", params={"dari": "2024-01-01", "sampai": "2024-12-31"})
    assert response.status_code == 200


@pytest.mark.parametrize("param", ["dari", "sampai"])
@pytest.mark.parametrize("tanggal", IMPOSSIBLE_DATES)
async def test_rekap_with_impossible_date_is_422(minggu: httpx2.AsyncClient, param: str, tanggal: str) -> None:
    response = await minggu.get("/absensi/rekap", params={**REKAP, param: tanggal})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", param]


@pytest.mark.parametrize("params", [{"dari": "2026-10-05"}, {"sampai": "2026-10-08"}, {"limit": "0"}])
async def test_rekap_with_missing_range_or_bad_limit_is_422(minggu: httpx2.AsyncClient, params: dict[str, str]) -> None:
    response = await minggu.get("/absensi/rekap", params=params if "limit" not in params else {**REKAP, **params})
    assert response.status_code == 422


# --- PUT /absensi/{tanggal}/{id_anak} -------------------------------------------------------------------------


async def test_put_records_a_new_day_and_returns_it(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    response = await service.put("/absensi/2026-10-07/A001", json={"status": "sakit", "keterangan": "Demam"})
    assert response.status_code == 200
    recorded = {**AHMAD, "status": "sakit", "keterangan": "Demam"}
    assert response.json() == recorded
    day = await service.get("/absensi", params={"tanggal": "2026-10-07"})
    assert day.json()["data"] == [recorded]
    assert rows_stored(tutorial_db, "2026-10-07", "A001") == [("sakit", "Demam")]
    everyone = (await service.get("/absensi", params={"tanggal": "2026-10-07", "semua_anak": "true"})).json()
    assert [(r["id_anak"], r["status"]) for r in everyone["data"]] == [
        ("A001", "sakit"),
        ("A003", "belum_dicatat"),
        ("A002", "belum_dicatat"),
    ]


async def test_put_twice_is_idempotent(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    body = {"status": "alpa", "keterangan": "Tidak ada kabar"}
    first = await service.put("/absensi/2026-10-07/A002", json=body)
    before = (await service.get("/absensi", params={"tanggal": "2026-10-07"})).json()
    second = await service.put("/absensi/2026-10-07/A002", json=body)
    after = (await service.get("/absensi", params={"tanggal": "2026-10-07"})).json()
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert before == after
    assert rows_stored(tutorial_db, "2026-10-07", "A002") == [("alpa", "Tidak ada kabar")]
    assert count_stored(tutorial_db) == 4


async def test_put_on_a_recorded_day_changes_the_status(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    response = await service.put(f"/absensi/{HARI}/A001", json={"status": "izin", "keterangan": "Ke dokter gigi"})
    assert response.status_code == 200
    day = (await service.get("/absensi", params={"tanggal": HARI})).json()["data"]
    assert {r["id_anak"]: r for r in day}["A001"] == {**AHMAD, "status": "izin", "keterangan": "Ke dokter gigi"}
    assert count_stored(tutorial_db) == 3


async def test_put_replaces_the_record_so_an_omitted_keterangan_is_cleared(
    service: httpx2.AsyncClient, tutorial_db: str
) -> None:
    response = await service.put(f"/absensi/{HARI}/A003", json={"status": "hadir"})
    assert response.json() == {**{k: v for k, v in CITRA.items() if k != "keterangan"}, "status": "hadir"}
    assert rows_stored(tutorial_db, HARI, "A003") == [("hadir", None)]


@pytest.mark.parametrize("keterangan", ["", "   "])
async def test_put_with_blank_keterangan_stores_none(
    service: httpx2.AsyncClient, tutorial_db: str, keterangan: str
) -> None:
    response = await service.put("/absensi/2026-10-07/A001", json={"status": "hadir", "keterangan": keterangan})
    assert response.status_code == 200
    assert "keterangan" not in response.json()
    day = (await service.get("/absensi", params={"tanggal": "2026-10-07"})).json()["data"]
    assert "keterangan" not in day[0]
    assert rows_stored(tutorial_db, "2026-10-07", "A001") == [("hadir", None)]


async def test_put_for_unknown_student_is_404_and_writes_nothing(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    response = await service.put("/absensi/2026-10-07/X999", json={"status": "hadir"})
    assert response.status_code == 404
    assert response.json() == {"detail": "Anak tidak ditemukan"}
    assert count_stored(tutorial_db) == 3


@pytest.mark.parametrize(
    "body",
    [
        {"status": "terlambat"},
        {"status": "aktif"},
        {"status": "belum_dicatat"},
        {"status": ""},
        {"status": None},
        {"status": 1},
        {"keterangan": "tanpa status"},
        {"status": "hadir", "catatan": "field tambahan"},
        {"status": "hadir", "keterangan": "x" * 501},
        {"status": "hadir", "keterangan": "a\x00b"},
        {"status": "hadir", "keterangan": 5},
        [],
        "hadir",
        None,
    ],
)
async def test_put_with_invalid_body_is_422_and_changes_nothing(
    service: httpx2.AsyncClient, tutorial_db: str, body: Any
) -> None:
    response = await service.put(f"/absensi/{HARI}/A003", json=body)
    assert response.status_code == 422
    assert rows_stored(tutorial_db, HARI, "A003") == [("izin", "Pulang, acara keluarga")]


async def test_put_with_malformed_json_is_422(service: httpx2.AsyncClient) -> None:
    response = await service.put(
        f"/absensi/{HARI}/A001", content=b'{"status": "hadir"', headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422


@pytest.mark.parametrize("tanggal", IMPOSSIBLE_DATES)
async def test_put_with_impossible_date_is_422(service: httpx2.AsyncClient, tutorial_db: str, tanggal: str) -> None:
    response = await service.put(f"/absensi/{tanggal}/A001", json={"status": "hadir"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["path", "tanggal"]
    assert count_stored(tutorial_db) == 3


async def test_put_without_token_is_401_and_writes_nothing(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    response = await service.put(
        "/absensi/2026-10-07/A001", json={"status": "hadir"}, headers={"Authorization": "Bearer salah"}
    )
    assert response.status_code == 401
    assert response.json() == {"detail": "Token tidak valid"}
    assert count_stored(tutorial_db) == 3


async def test_recorded_days_appear_in_the_rekap(service: httpx2.AsyncClient) -> None:
    for tanggal, status in (("2026-10-07", "alpa"), ("2026-10-08", "sakit"), ("2026-10-08", "alpa")):
        assert (await service.put(f"/absensi/{tanggal}/A002", json={"status": status})).status_code == 200
    body = (
        await service.get("/absensi/rekap", params={"dari": HARI, "sampai": "2026-10-08", "id_anak": "A002"})
    ).json()
    assert body["per_anak"] == [{**REKAP_BUDI, "hadir": 1, "izin": 0, "sakit": 0, "alpa": 2, "tidak_hadir": 2}]
