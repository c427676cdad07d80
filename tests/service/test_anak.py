"""`GET /anak` and `GET /anak/{id}`: the tutorial's requests, search semantics, paging, limits."""

import random
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest
from sqlalchemy import delete, update

from mcp_asrama.service.db import make_engine, make_sessionmaker
from mcp_asrama.service.models import Anak
from tests.conftest import (
    BACKENDS,
    TUTORIAL_KAMAR,
    fresh_database,
    insert_rows,
    serve_db,
)

pytestmark = pytest.mark.anyio

ANAK_FIELDS = {
    "id",
    "nama",
    "kelas",
    "kamar",
    "status",
    "jenis_kelamin",
    "nama_wali",
    "nik",
    "no_hp_wali",
    "alamat",
    "tanggal_lahir",
}

A001 = {
    "id": "A001",
    "nama": "Ahmad Fauzi",
    "kelas": "7A",
    "kamar": "Al-Fatih 1",
    "status": "aktif",
    "jenis_kelamin": "L",
    "nama_wali": "Bapak Hasan",
    "nik": "3171000000000001",
    "no_hp_wali": "081200000001",
    "alamat": "Jl. Melati No. 1, Bogor",
    "tanggal_lahir": "2013-01-05",
}


def anak(id_: str, nama: str, **fields: Any) -> dict[str, Any]:
    """A student row with every column present (bulk inserts need the same keys in every row)."""
    row: dict[str, Any] = dict.fromkeys(ANAK_FIELDS)
    row.update(id=id_, nama=nama, kelas="7A", status="aktif")
    row.update(fields)
    return row


def ids(response: httpx2.Response) -> list[str]:
    assert response.status_code == 200, response.text
    return [a["id"] for a in response.json()["data"]]


# --- the tutorial's own requests -----------------------------------------------------------------------------


async def test_search_by_class_gives_tutorial_total_and_students(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/anak", params={"kelas": "7A"})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"total", "data"}
    assert body["total"] == 2
    assert [(a["id"], a["nama"]) for a in body["data"]] == [("A001", "Ahmad Fauzi"), ("A003", "Citra Lestari")]


async def test_search_returns_every_declared_field_of_a_student(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/anak", params={"nama": "ahmad"})
    assert response.json() == {"total": 1, "data": [A001]}


async def test_detail_returns_the_whole_student(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/anak/A001")
    assert response.status_code == 200
    assert response.json() == A001


async def test_detail_unknown_id_is_404_with_tutorial_detail(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/anak/X999")
    assert response.status_code == 404
    assert response.json() == {"detail": "Anak tidak ditemukan"}


async def test_detail_id_is_case_sensitive(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/anak/a001")
    assert response.status_code == 404


async def test_search_without_filters_lists_everyone_ordered_by_name(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/anak")
    assert response.json()["total"] == 3
    assert ids(response) == ["A001", "A002", "A003"]


# --- nama: case-insensitive substring --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("Ahmad Fauzi", ["A001"]),
        ("fauzi", ["A001"]),
        ("FAUZI", ["A001"]),
        ("hmad f", ["A001"]),
        ("san", ["A002"]),
        ("ci", ["A003"]),  # two characters: below the trigram index's reach
        ("CI", ["A003"]),
        ("z", ["A001"]),  # one character
        ("B", ["A002"]),
        ("a", ["A001", "A002", "A003"]),
        ("  fauzi  ", ["A001"]),  # surrounding blanks are not part of the term
        ("fauzi ahmad", []),
        ("xyz", []),
    ],
)
async def test_name_search_is_case_insensitive_substring(
    reader: httpx2.AsyncClient, term: str, expected: list[str]
) -> None:
    response = await reader.get("/anak", params={"nama": term})
    assert ids(response) == expected
    assert response.json()["total"] == len(expected)


async def test_blank_name_term_is_no_filter(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/anak", params={"nama": "   "})
    assert response.json()["total"] == 3


SPECIAL = [
    anak("W1", "Persen 100% Hafal"),
    anak("W2", "Persen 1000 Hafal"),
    anak("W3", "Garis_Bawah"),
    anak("W4", "GarisXBawah"),
    anak("W5", 'Kutip "Ganda"'),
    anak("W6", "Kutip 'Tunggal' O'Neil"),
    anak("W7", "Miring \\ Balik"),
    anak("W8", "Élan Ümit"),
]


@pytest.fixture(scope="module", params=BACKENDS)
def special_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with fresh_database(request.param, tmp_path_factory.mktemp("db")) as url:
        insert_rows(url, kamar=[], anak=SPECIAL, absensi=[])
        yield url


@pytest.fixture
async def special(special_db: str) -> AsyncIterator[httpx2.AsyncClient]:
    """Students whose names hold SQL wildcards, quotes, a backslash and non-ASCII letters."""
    async for client in serve_db(special_db):
        yield client


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("%", ["W1"]),
        ("0%", ["W1"]),
        ("00% h", ["W1"]),
        ("%%", []),
        ("_", ["W3"]),
        ("s_", ["W3"]),
        ("S_B", ["W3"]),
        ("s_bawah", ["W3"]),
        ('"', ["W5"]),
        ('"g', ["W5"]),
        ('"ganda"', ["W5"]),
        ('" OR "', []),
        ("'", ["W6"]),
        ("'t", ["W6"]),
        ("o'neil", ["W6"]),
        ("\\", ["W7"]),
        ("\\ ", ["W7"]),
        ("g \\ b", ["W7"]),
        ("*", []),
        ("Hafal*", []),
        ("NEAR(persen hafal)", []),
        ("persen OR garis", []),
    ],
)
async def test_name_search_takes_wildcards_and_quotes_literally(
    special: httpx2.AsyncClient, term: str, expected: list[str]
) -> None:
    response = await special.get("/anak", params={"nama": term})
    assert sorted(ids(response)) == expected


@pytest.mark.parametrize("term", ["é", "É", "ü", "él", "ÉL", "ÜM", "élan", "ÉLAN", "ümit", "ÜMIT", "n Ü"])
async def test_name_search_folds_case_of_non_ascii_letters_for_every_term_length(
    special: httpx2.AsyncClient, term: str
) -> None:
    response = await special.get("/anak", params={"nama": term})
    assert ids(response) == ["W8"]


# --- kelas, kamar, status: exact, by the names' fold ------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"kelas": "7A"}, ["A001", "A003"]),
        ({"kelas": "7a"}, ["A001", "A003"]),
        ({"kelas": "7"}, []),  # exact, not a prefix
        ({"kelas": " 7A "}, ["A001", "A003"]),  # spacing folded away, as the MCP server's scope check does
        ({"kamar": "al-fatih\t 1"}, ["A001", "A002"]),
        ({"kelas": "9C"}, []),
        ({"kamar": "Al-Fatih 1"}, ["A001", "A002"]),
        ({"kamar": "AL-FATIH 1"}, ["A001", "A002"]),
        ({"kamar": "Al-Fatih"}, []),
        ({"kamar": "aisyah 2"}, ["A003"]),
        ({"status": "izin"}, ["A003"]),
        ({"status": "aktif"}, ["A001", "A002"]),
        ({"status": "pulang"}, []),
        ({"kelas": "7A", "status": "aktif"}, ["A001"]),
        ({"kelas": "7A", "kamar": "Al-Fatih 1"}, ["A001"]),
        ({"nama": "i", "kamar": "aisyah 2", "kelas": "7a", "status": "izin"}, ["A003"]),
        ({"nama": "budi", "kelas": "7A"}, []),
    ],
)
async def test_filters_are_exact_case_insensitive_and_combine(
    reader: httpx2.AsyncClient, params: dict[str, str], expected: list[str]
) -> None:
    response = await reader.get("/anak", params=params)
    assert ids(response) == expected
    assert response.json()["total"] == len(expected)


@pytest.mark.parametrize("status", ["Aktif", "hadir", "keluar", ""])
async def test_unknown_student_status_is_422(reader: httpx2.AsyncClient, status: str) -> None:
    response = await reader.get("/anak", params={"status": status})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "status"]


@pytest.fixture
async def unicode_rooms(db_url: str) -> AsyncIterator[httpx2.AsyncClient]:
    rooms = [{"nama": "Ümmü Salamah 1", "gedung": "Putri", "kapasitas": 4, "musyrif": None}]
    students = [anak("U1", "Siti", kamar="Ümmü Salamah 1", kelas="Ç1"), anak("U2", "Rina", kamar="Aisyah 2")]
    insert_rows(db_url, kamar=rooms, anak=students, absensi=[])
    async for client in serve_db(db_url):
        yield client


async def test_room_and_class_filters_match_non_ascii_names_spelled_as_stored(
    unicode_rooms: httpx2.AsyncClient,
) -> None:
    assert ids(await unicode_rooms.get("/anak", params={"kamar": "Ümmü Salamah 1"})) == ["U1"]
    assert ids(await unicode_rooms.get("/anak", params={"kamar": "Ümmü SALAMAH 1"})) == ["U1"]
    assert ids(await unicode_rooms.get("/anak", params={"kelas": "Ç1"})) == ["U1"]


async def test_room_filter_folds_case_of_non_ascii_letters(unicode_rooms: httpx2.AsyncClient) -> None:
    assert ids(await unicode_rooms.get("/anak", params={"kamar": "ümmü salamah 1"})) == ["U1"]
    assert ids(await unicode_rooms.get("/anak", params={"kelas": "ç1"})) == ["U1"]


# --- limit, offset, ordering -----------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", ["0", "101", "-1", "abc", "1.5", "1e2", ""])
async def test_limit_outside_1_to_100_is_422(reader: httpx2.AsyncClient, limit: str) -> None:
    response = await reader.get("/anak", params={"limit": limit})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "limit"]


@pytest.mark.parametrize("offset", ["-1", "abc", "1000001"])
async def test_invalid_offset_is_422(reader: httpx2.AsyncClient, offset: str) -> None:
    response = await reader.get("/anak", params={"offset": offset})
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["query", "offset"]


async def test_limit_cuts_the_page_but_total_counts_every_match(reader: httpx2.AsyncClient) -> None:
    response = await reader.get("/anak", params={"limit": 1})
    assert response.json()["total"] == 3
    assert ids(response) == ["A001"]


CROWD_NAMES = [f"Santri {n:02d}" for n in range(1, 26)]


@pytest.fixture(scope="module", params=BACKENDS)
def crowd_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    rows = [anak(f"S{n:02d}", name, kelas="8B") for n, name in enumerate(CROWD_NAMES, start=1)]
    rows += [anak("T2", "Santri 13", kelas="8B"), anak("T1", "Santri 13", kelas="8B")]
    random.Random(7).shuffle(rows)
    with fresh_database(request.param, tmp_path_factory.mktemp("db")) as url:
        insert_rows(url, kamar=TUTORIAL_KAMAR, anak=rows, absensi=[])
        yield url


@pytest.fixture
async def crowd(crowd_db: str) -> AsyncIterator[httpx2.AsyncClient]:
    """25 students stored in shuffled order, plus two namesakes told apart by id."""
    async for client in serve_db(crowd_db):
        yield client


async def test_limit_defaults_to_20(crowd: httpx2.AsyncClient) -> None:
    response = await crowd.get("/anak")
    assert response.json()["total"] == 27
    assert len(response.json()["data"]) == 20


async def test_limit_100_is_accepted(crowd: httpx2.AsyncClient) -> None:
    response = await crowd.get("/anak", params={"limit": 100})
    assert len(ids(response)) == 27


async def test_offset_pages_are_disjoint_and_follow_name_then_id(crowd: httpx2.AsyncClient) -> None:
    pages = []
    for offset in (0, 10, 20):
        response = await crowd.get("/anak", params={"limit": 10, "offset": offset})
        assert response.json()["total"] == 27
        pages.append([(a["nama"], a["id"]) for a in response.json()["data"]])
    assert [len(p) for p in pages] == [10, 10, 7]
    everyone = pages[0] + pages[1] + pages[2]
    stored = [(name, f"S{n:02d}") for n, name in enumerate(CROWD_NAMES, 1)] + [("Santri 13", "T2")]
    assert everyone == sorted([*stored, ("Santri 13", "T1")])
    assert everyone[12:15] == [("Santri 13", "S13"), ("Santri 13", "T1"), ("Santri 13", "T2")]


async def test_offset_past_the_end_gives_empty_page_with_total(crowd: httpx2.AsyncClient) -> None:
    response = await crowd.get("/anak", params={"offset": 27})
    assert response.json() == {"total": 27, "data": []}


async def test_paging_applies_after_filters(crowd: httpx2.AsyncClient) -> None:
    response = await crowd.get("/anak", params={"nama": "santri 1", "limit": 3, "offset": 3})
    body = response.json()
    assert body["total"] == 12  # Santri 10..19 and the two namesakes of Santri 13
    assert [a["nama"] for a in body["data"]] == ["Santri 13", "Santri 13", "Santri 13"]


async def test_name_search_totals_follow_renames_and_deletions(service: httpx2.AsyncClient, tutorial_db: str) -> None:
    engine = make_engine(tutorial_db)
    with make_sessionmaker(engine)() as session, session.begin():
        session.execute(update(Anak).where(Anak.id == "A001").values(nama="Zainal Fauzan"))
        session.execute(delete(Anak).where(Anak.id == "A002"))
    engine.dispose()
    for term, ids in [("fauz", ["A001"]), ("ahmad", []), ("santoso", []), ("zainal", ["A001"]), ("citra", ["A003"])]:
        body = (await service.get("/anak", params={"nama": term})).json()
        assert (body["total"], [a["id"] for a in body["data"]]) == (len(ids), ids), term
