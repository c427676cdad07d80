"""Repeated `kelas`/`kamar` query parameters ("any of these") on every student-filtered list and summary of the
data service, on SQLite and PostgreSQL, and the header that tells a client the service honours them."""

from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx2
import pytest
from sqlalchemy import insert

from mcp_asrama.contract import FITUR, FITUR_HEADER
from mcp_asrama.service.db import init_schema, make_engine, make_sessionmaker
from mcp_asrama.service.models import Absensi, Anak, Hafalan, Izin, Kamar, KunjunganKlinik, Pelanggaran
from mcp_asrama.service.routes.common import MAX_FILTER_VALUES
from tests.conftest import BACKENDS, fresh_database, serve_db

pytestmark = pytest.mark.anyio

HARI = date(2026, 10, 6)
DARI, SAMPAI = (HARI - timedelta(days=3)).isoformat(), (HARI + timedelta(days=3)).isoformat()
DIBUAT = datetime(2026, 10, 6, 7, 0, tzinfo=UTC)
# Three rooms, one of them typed in other cases by other tools; three classes; names shared across rooms so that
# the order by name then id shows.
ROOMS = ["Al-Fatih 1", "Aisyah 2", "Umar 3"]
STORED_ROOM = ["Al-Fatih 1", "al-fatih 1", "Aisyah 2", "AISYAH 2", "Umar 3"]
CLASSES = ["7A", "8B", "9C"]
NAMES = ["Ahmad", "Budi", "Citra", "Dewi", "Ahmad", "Eko", "Budi"]
STUDENTS = [
    {
        "id": f"S{i:02d}",
        "nama": f"{NAMES[i % len(NAMES)]} {i % 3}",
        "kelas": CLASSES[i % 3],
        "kamar": STORED_ROOM[i % len(STORED_ROOM)],
        "status": "aktif",
    }
    for i in range(21)
]


def _records(i: int, s: dict[str, Any]) -> dict[Any, list[dict[str, Any]]]:
    """Student `i`'s records in every domain (some students have none of a kind)."""
    sid = s["id"]
    return {
        Absensi: [{"tanggal": HARI, "id_anak": sid, "status": ("hadir", "izin", "sakit", "alpa")[i % 4]}],
        Izin: [{"id": f"iz{sid}", "id_anak": sid, "dari": HARI, "sampai": HARI, "jenis": "pulang", "dibuat": DIBUAT}]
        if i % 2
        else [],
        Pelanggaran: [
            {
                "id": f"pl{sid}{n}",
                "id_anak": sid,
                "tanggal": HARI - timedelta(days=n),
                "kategori": "ringan",
                "jenis": "terlambat_sholat",
                "poin": 5 + n,
                "dibuat": DIBUAT,
            }
            for n in range(i % 3)
        ],
        Hafalan: [
            {
                "id": f"hf{sid}",
                "id_anak": sid,
                "tanggal": HARI,
                "jenis": "ziyadah",
                "surah": 114,
                "ayat_mulai": 1,
                "ayat_selesai": 1 + i % 6,
                "dibuat": DIBUAT,
            }
        ],
        KunjunganKlinik: [
            {
                "id": f"kk{sid}",
                "id_anak": sid,
                "tanggal": HARI,
                "keluhan": "pusing",
                "kategori": ("demam", "batuk-pilek", "kulit")[i % 3],
                "dibuat": DIBUAT,
            }
        ]
        if i % 4 != 3
        else [],
    }


@pytest.fixture(scope="module", params=BACKENDS)
def asrama_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Stored once per backend: this module's tests only read it."""
    with fresh_database(request.param, tmp_path_factory.mktemp("db")) as url:
        engine = make_engine(url)
        init_schema(engine)
        rows: dict[Any, list[dict[str, Any]]] = {Kamar: [], Anak: STUDENTS}
        rows[Kamar] = [{"nama": r, "gedung": "Putra", "kapasitas": 8, "musyrif": None} for r in ROOMS]
        for i, s in enumerate(STUDENTS):
            for table, records in _records(i, s).items():
                rows.setdefault(table, []).extend(records)
        with make_sessionmaker(engine)() as session, session.begin():
            for table, records in rows.items():
                if records:
                    session.execute(insert(table), records)
        engine.dispose()
        yield url


@pytest.fixture
async def asrama(asrama_db: str) -> AsyncIterator[httpx2.AsyncClient]:
    async for client in serve_db(asrama_db):
        yield client


def _ids(key: str) -> Callable[[dict[str, Any]], list[Any]]:
    return lambda body: [tuple(sorted((k, str(v)) for k, v in row.items())) for row in body[key]]


def _per_kategori(body: dict[str, Any]) -> dict[str, int]:
    return {f"{k['kategori']}.{n}": k[n] for k in body["per_kategori"] for n in ("kunjungan", "anak")}


# Each route: its path and other parameters, its rows (a union of filters is the multiset union of their rows) and
# its counts (which add up over disjoint filters).
ROUTES: dict[str, tuple[dict[str, Any], Callable[[dict[str, Any]], list[Any]], Callable[[dict[str, Any]], Any]]] = {
    "/anak": ({"limit": 100}, _ids("data"), lambda b: {"total": b["total"]}),
    "/absensi": ({"tanggal": HARI.isoformat()}, _ids("data"), lambda b: {"jumlah": len(b["data"])}),
    "/absensi/semua": (
        {"tanggal": HARI.isoformat(), "semua_anak": "true"},
        _ids("data"),
        lambda b: {"jumlah": len(b["data"])},
    ),
    "/absensi/rekap": (
        {"dari": DARI, "sampai": SAMPAI},
        _ids("per_anak"),
        lambda b: {**b["total"], "jumlah_anak": b["jumlah_anak"]},
    ),
    "/izin": ({"limit": 500}, _ids("data"), lambda b: {"total": b["total"]}),
    "/pelanggaran": ({"limit": 500}, _ids("data"), lambda b: {"total": b["total"]}),
    "/pelanggaran/rekap": (
        {"dari": DARI, "sampai": SAMPAI},
        _ids("per_anak"),
        lambda b: {**b["total"], "jumlah_anak": b["jumlah_anak"]},
    ),
    "/hafalan": ({"limit": 500}, _ids("data"), lambda b: {"total": b["total"]}),
    "/hafalan/progres": ({}, _ids("data"), lambda b: {"jumlah_anak": b["jumlah_anak"]}),
    "/kesehatan": ({"limit": 500}, _ids("data"), lambda b: {"total": b["total"]}),
    "/kesehatan/rekap": (
        {"dari": DARI, "sampai": SAMPAI},
        lambda b: [],
        lambda b: {"kunjungan": b["kunjungan"], "anak": b["anak"], **_per_kategori(b)},
    ),
}


async def _get(client: httpx2.AsyncClient, route: str, filters: list[tuple[str, str]]) -> dict[str, Any]:
    extra, _, _ = ROUTES[route]
    path = "/absensi" if route == "/absensi/semua" else route
    response = await client.get(path, params=[*extra.items(), *filters])
    assert response.status_code == 200, response.text
    assert response.headers[FITUR_HEADER] == FITUR
    body: dict[str, Any] = response.json()
    return body


async def _union_matches_singles(
    client: httpx2.AsyncClient, route: str, together: list[tuple[str, str]], apart: list[list[tuple[str, str]]]
) -> None:
    """The answer to the filters `together` holds exactly the rows of the answers to each of `apart`, and its
    counts are their sums."""
    _, rows, counts = ROUTES[route]
    union = await _get(client, route, together)
    singles = [await _get(client, route, filters) for filters in apart]
    assert Counter(rows(union)) == sum((Counter(rows(s)) for s in singles), Counter())
    summed: Counter[str] = Counter()
    for s in singles:
        summed.update(counts(s))
    assert Counter(counts(union)) == summed
    assert sum(counts(union).values()) > 0, "the filters match something: the comparison shows a difference"


@pytest.mark.parametrize("route", ROUTES)
async def test_two_rooms_are_the_two_single_rooms_together(asrama: httpx2.AsyncClient, route: str) -> None:
    together = [("kamar", "Al-Fatih 1"), ("kamar", "Umar 3")]
    await _union_matches_singles(asrama, route, together, [[("kamar", "Al-Fatih 1")], [("kamar", "Umar 3")]])


@pytest.mark.parametrize("route", ROUTES)
async def test_two_classes_are_the_two_single_classes_together(asrama: httpx2.AsyncClient, route: str) -> None:
    together = [("kelas", "7a"), ("kelas", "9C")]
    await _union_matches_singles(asrama, route, together, [[("kelas", "7A")], [("kelas", "9c")]])


@pytest.mark.parametrize("route", ROUTES)
async def test_classes_and_rooms_together_are_both_filters(asrama: httpx2.AsyncClient, route: str) -> None:
    together = [("kelas", "7A"), ("kelas", "8B"), ("kamar", "AISYAH 2"), ("kamar", "umar 3")]
    apart = [[("kelas", k), ("kamar", r)] for k in ("7A", "8B") for r in ("Aisyah 2", "Umar 3")]
    await _union_matches_singles(asrama, route, together, apart)


async def test_rooms_match_whatever_case_they_were_stored_in(asrama: httpx2.AsyncClient) -> None:
    body = await _get(asrama, "/anak", [("kamar", "AL-FATIH 1"), ("kamar", "aisyah 2")])
    expected = {s["id"] for s in STUDENTS if s["kamar"].lower() in ("al-fatih 1", "aisyah 2")}
    assert {a["id"] for a in body["data"]} == expected
    assert body["total"] == len(expected) == 17


async def test_classes_and_rooms_select_the_students_of_both(asrama: httpx2.AsyncClient) -> None:
    body = await _get(asrama, "/anak", [("kelas", "7A"), ("kelas", "9C"), ("kamar", "Umar 3")])
    expected = {s["id"] for s in STUDENTS if s["kelas"] in ("7A", "9C") and s["kamar"] == "Umar 3"}
    assert {a["id"] for a in body["data"]} == expected
    assert body["total"] == len(expected) == 2


async def test_pages_over_two_rooms_are_ordered_by_name_then_id(asrama: httpx2.AsyncClient) -> None:
    rooms = [("kamar", "Aisyah 2"), ("kamar", "Umar 3")]
    pages: list[dict[str, Any]] = []
    for offset in range(0, 15, 4):
        body = await _get(asrama, "/anak", [*rooms, ("limit", "4"), ("offset", str(offset))])
        assert body["total"] == 12
        pages.extend(body["data"])
    expected = sorted(
        (s for s in STUDENTS if s["kamar"].lower() in ("aisyah 2", "umar 3")), key=lambda s: (s["nama"], s["id"])
    )
    assert [a["id"] for a in pages] == [s["id"] for s in expected]
    assert len({a["nama"] for a in pages}) < len(pages), "names repeat: the id decides their order"


async def test_a_repeated_value_counts_once(asrama: httpx2.AsyncClient) -> None:
    once = await _get(asrama, "/pelanggaran/rekap", [("kamar", "Umar 3")])
    twice = await _get(asrama, "/pelanggaran/rekap", [("kamar", "Umar 3"), ("kamar", "UMAR 3")])
    assert twice == once


async def test_an_empty_value_among_others_is_ignored(asrama: httpx2.AsyncClient) -> None:
    one = await _get(asrama, "/anak", [("kamar", "Umar 3")])
    assert await _get(asrama, "/anak", [("kamar", ""), ("kamar", "Umar 3")]) == one
    assert one["total"] == 4


@pytest.mark.parametrize("name", ["kelas", "kamar"])
@pytest.mark.parametrize("route", ROUTES)
async def test_more_than_fifty_values_are_refused(asrama: httpx2.AsyncClient, route: str, name: str) -> None:
    extra, _, _ = ROUTES[route]
    path = "/absensi" if route == "/absensi/semua" else route
    values = [(name, f"K{i}") for i in range(MAX_FILTER_VALUES)]
    assert (await asrama.get(path, params=[*extra.items(), *values])).status_code == 200
    response = await asrama.get(path, params=[*extra.items(), *values, (name, "Umar 3")])
    assert response.status_code == 422
    assert response.headers[FITUR_HEADER] == FITUR
    [error] = response.json()["detail"]
    assert error["loc"] == ["query", name]
    assert "at most 50" in error["msg"]


async def test_each_value_is_checked_like_a_single_one(asrama: httpx2.AsyncClient) -> None:
    response = await asrama.get("/anak", params=[("kamar", "Umar 3"), ("kamar", "x" * 201)])
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "kamar", 1]
    nul = await asrama.get("/izin", params=[("kelas", "7A"), ("kelas", "7\x00A")])
    assert nul.status_code == 422


async def test_every_answer_names_the_feature(asrama: httpx2.AsyncClient) -> None:
    found = await asrama.get("/anak/S01")
    missing = await asrama.get("/anak/X99")
    bad = await asrama.get("/absensi", params={"tanggal": "6-10-2026"})
    unauthorized = await asrama.get("/anak", headers={"Authorization": "Bearer salah"})
    refused = await asrama.get("/anak", headers={"Host": "evil.example"})
    health = await asrama.get("/healthz")
    statuses = [r.status_code for r in (found, missing, bad, unauthorized, refused, health)]
    assert statuses == [200, 404, 422, 401, 421, 200]
    for response in (found, missing, bad, unauthorized, refused, health):
        assert response.headers[FITUR_HEADER] == FITUR


async def test_the_openapi_document_shows_the_filters_as_arrays(asrama: httpx2.AsyncClient) -> None:
    document = (await asrama.get("/openapi.json")).json()
    paths = {r.removesuffix("/semua") for r in ROUTES}
    seen = 0
    for path in paths:
        for parameter in document["paths"][path]["get"]["parameters"]:
            if parameter["name"] in ("kelas", "kamar"):
                array = next(s for s in parameter["schema"]["anyOf"] if s.get("type") == "array")
                assert array["maxItems"] == MAX_FILTER_VALUES
                assert array["items"] == {"type": "string", "maxLength": 200}
                seen += 1
            if parameter["name"] == "id_anak" and path != "/absensi":
                assert {s.get("type") for s in parameter["schema"]["anyOf"]} == {"string", "null"}
    assert seen == 2 * len(paths)
