"""`GET /kamar`: the tutorial's rooms, `terisi` computed from the students' rooms, the musyrif from the staff list
when it names one; `GET /kelas`: the classes."""

from collections import Counter
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2
import pytest

from mcp_asrama.names import fold
from tests.conftest import TUTORIAL_ANAK, fresh_database, insert_rows, serve_db

pytestmark = pytest.mark.anyio


def anak(id_: str, kamar: str | None) -> dict[str, Any]:
    return {
        "id": id_,
        "nama": f"Santri {id_}",
        "kelas": "7A",
        "kamar": kamar,
        "status": "aktif",
        "jenis_kelamin": None,
        "nama_wali": None,
        "nik": None,
        "no_hp_wali": None,
        "alamat": None,
        "tanggal_lahir": None,
    }


async def test_rooms_have_tutorial_shape_with_terisi_computed(service: httpx2.AsyncClient) -> None:
    response = await service.get("/kamar")
    assert response.status_code == 200
    assert response.json() == {
        "data": [
            {"nama": "Al-Fatih 1", "gedung": "Putra", "kapasitas": 6, "musyrif": "Ust. Ridwan", "terisi": 2},
            {"nama": "Aisyah 2", "gedung": "Putri", "kapasitas": 6, "musyrif": "Ustz. Halimah", "terisi": 1},
        ]
    }


ROOMS = [
    {"nama": "Kosong", "gedung": "Putra", "kapasitas": 4, "musyrif": None},
    {"nama": "Al-Fatih 1", "gedung": "Putra", "kapasitas": 6, "musyrif": "Ust. Ridwan"},
    {"nama": "Ümmü Salamah 1", "gedung": "Putri", "kapasitas": 2, "musyrif": "Ustz. Halimah"},
    {"nama": "Aisyah 2", "gedung": "Putri", "kapasitas": 6, "musyrif": "Ustz. Aminah"},
]
STUDENTS = [
    anak("B1", "Al-Fatih 1"),
    anak("B2", "al-fatih 1"),  # typed differently by another tool: still the same room
    anak("B3", "AL-FATIH 1"),
    anak("G1", "Ümmü Salamah 1"),
    anak("G2", "Ümmü Salamah 1"),
    anak("G3", "Ümmü Salamah 1"),  # over capacity: counted as it is, not capped
    anak("X1", None),  # no room yet
    anak("X2", "Gudang"),  # a room the table does not know
]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def asrama_db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Stored once per backend: this module's tests only read it."""
    with fresh_database(request.param, tmp_path_factory.mktemp("db")) as url:
        insert_rows(url, kamar=ROOMS, anak=STUDENTS, absensi=[])
        yield url


@pytest.fixture
async def asrama(asrama_db: str) -> AsyncIterator[httpx2.AsyncClient]:
    async for client in serve_db(asrama_db):
        yield client


async def _terisi(client: httpx2.AsyncClient) -> dict[str, int]:
    response = await client.get("/kamar")
    assert response.status_code == 200
    return {k["nama"]: k["terisi"] for k in response.json()["data"]}


async def test_terisi_counts_students_whose_room_matches_case_insensitively(asrama: httpx2.AsyncClient) -> None:
    assert (await _terisi(asrama))["Al-Fatih 1"] == 3


async def test_terisi_counts_non_ascii_room_names(asrama: httpx2.AsyncClient) -> None:
    assert (await _terisi(asrama))["Ümmü Salamah 1"] == 3


async def test_room_without_students_has_terisi_zero(asrama: httpx2.AsyncClient) -> None:
    assert (await _terisi(asrama))["Kosong"] == 0
    assert (await _terisi(asrama))["Aisyah 2"] == 0


async def test_only_stored_rooms_are_listed(asrama: httpx2.AsyncClient) -> None:
    rooms = await _terisi(asrama)
    assert "Gudang" not in rooms
    assert sum(rooms.values()) == 6  # students without a room, or in an unknown one, are not counted


async def test_rooms_are_ordered_by_building_then_name(asrama: httpx2.AsyncClient) -> None:
    response = await asrama.get("/kamar")
    assert [(k["gedung"], k["nama"]) for k in response.json()["data"]] == [
        ("Putra", "Al-Fatih 1"),
        ("Putra", "Kosong"),
        ("Putri", "Aisyah 2"),
        ("Putri", "Ümmü Salamah 1"),
    ]


async def test_room_without_musyrif_keeps_the_field_as_null(asrama: httpx2.AsyncClient) -> None:
    response = await asrama.get("/kamar")
    kosong = next(k for k in response.json()["data"] if k["nama"] == "Kosong")
    assert kosong == {"nama": "Kosong", "gedung": "Putra", "kapasitas": 4, "musyrif": None, "terisi": 0}


async def test_empty_database_lists_no_rooms(db_url: str) -> None:
    insert_rows(db_url, kamar=[], anak=[], absensi=[])
    async for client in serve_db(db_url):
        response = await client.get("/kamar")
        assert response.status_code == 200
        assert response.json() == {"data": []}


async def test_query_parameters_are_ignored_not_errors(service: httpx2.AsyncClient) -> None:
    response = await service.get("/kamar", params={"gedung": "Putri", "limit": "x"})
    assert response.status_code == 200
    assert len(response.json()["data"]) == 2


async def test_classes_are_listed_with_their_students_once_per_fold(tutorial_db: str) -> None:
    insert_rows(tutorial_db, kamar=[], anak=[anak("X1", None) | {"kelas": "7a"}], absensi=[])
    async for client in serve_db(tutorial_db):
        listed = (await client.get("/kelas")).json()["data"]
        refused = await client.get("/kelas", headers={"Authorization": "Bearer salah"})
    counts = {fold(row["kelas"]): row["jumlah_anak"] for row in listed}
    expected = Counter(fold(a["kelas"]) for a in TUTORIAL_ANAK)
    expected["7a"] += 1  # "7a" is the class 7A
    assert counts == dict(expected) and len(listed) == len(expected) and refused.status_code == 401


async def test_a_rooms_musyrif_is_the_active_musyrif_of_the_staff_list_else_the_stored_one(
    service: httpx2.AsyncClient,
) -> None:
    async def musyrif() -> dict[str, str | None]:
        return {k["nama"]: k["musyrif"] for k in (await service.get("/kamar")).json()["data"]}

    def staff(email: str, nama: str, peran: list[str], kamar: list[str]) -> dict[str, Any]:
        return {"email": email, "nama": nama, "peran": peran, "kamar": kamar}

    for record in (
        staff("zaid@pesantren.sch.id", "Ust. Zaid", ["musyrif"], ["Al-Fatih 1"]),
        staff("hasan@pesantren.sch.id", "Ust. Hasan", ["wali_kelas", "musyrif"], ["al-fatih  1"]),  # by the fold
        staff("umar@pesantren.sch.id", "Ust. Umar", ["wali_kelas"], ["Aisyah 2"]),  # not a musyrif
        staff("aminah@pesantren.sch.id", "Ustz. Aminah", ["musyrif"], ["Aisyah 2"]),
    ):
        assert (await service.put(f"/pengurus/{record['email']}", json=record)).status_code == 201
    assert await musyrif() == {"Al-Fatih 1": "Ust. Hasan", "Aisyah 2": "Ustz. Aminah"}  # the first by email
    await service.post("/pengurus/aminah@pesantren.sch.id/nonaktif")
    await service.post("/pengurus/hasan@pesantren.sch.id/nonaktif")
    assert await musyrif() == {"Al-Fatih 1": "Ust. Zaid", "Aisyah 2": "Ustz. Halimah"}  # the stored column again


async def test_a_class_names_its_wali_kelas_from_the_staff_list(service: httpx2.AsyncClient) -> None:
    async def wali() -> dict[str, str | None]:
        return {k["kelas"]: k["wali_kelas"] for k in (await service.get("/kelas")).json()["data"]}

    assert set((await wali()).values()) == {None}  # nobody named yet
    for email, nama, peran, kelas in (
        ("rahmat@pesantren.sch.id", "Ust. Rahmat", ["wali_kelas"], ["7a"]),  # by the fold
        ("salma@pesantren.sch.id", "Ustz. Salma", ["musyrif"], ["7B"]),  # not a wali kelas
    ):
        body = {"email": email, "nama": nama, "peran": peran, "kelas": kelas}
        assert (await service.put(f"/pengurus/{email}", json=body)).status_code == 201
    named = await wali()
    assert named["7A"] == "Ust. Rahmat" and [k for k, v in named.items() if v] == ["7A"]
    await service.post("/pengurus/rahmat@pesantren.sch.id/nonaktif")
    assert set((await wali()).values()) == {None}
