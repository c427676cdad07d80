"""`/pengurus`, the staff list: stored by case-folded email and found in any case, created then replaced by PUT
(the same body again changes nothing), listed by role and activity, deactivated; the password's hash never in any
answer; the CSV import with lists, booleans and updates, a bad row refusing the whole file; both dialects."""

from pathlib import Path
from typing import Any

import httpx2
import pytest
from argon2 import PasswordHasher
from sqlalchemy import select

from mcp_asrama.service.crud import pengurus as crud
from mcp_asrama.service.db import make_engine, make_sessionmaker
from mcp_asrama.service.import_files import ImportRejected
from mcp_asrama.service.importer import import_file
from mcp_asrama.service.models.pengurus import Pengurus
from mcp_asrama.service.models.perubahan import Perubahan
from tests.conftest import insert_rows, serve_db

pytestmark = pytest.mark.anyio

RIDWAN = {
    "email": "Ridwan@Pesantren.SCH.id",
    "nama": "Ust. Ridwan",
    "peran": ["musyrif", "wali_kelas"],
    "kamar": ["Al-Fatih  1"],
    "kelas": ["7A"],
    "menulis": True,
}
ROOMS = [{"nama": nama, "gedung": "Putra", "kapasitas": 6, "musyrif": None} for nama in ("Al-Fatih 1", "Al-Fatih 2")]


@pytest.fixture
async def service(db_url: str) -> Any:
    """The service on the rooms a staff member may be musyrif of (and no students)."""
    insert_rows(db_url, kamar=ROOMS, anak=[], absensi=[])
    async for client in serve_db(db_url):
        yield client


def stored(url: str) -> dict[str, Pengurus]:
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session:
            return {p.email: p for p in session.scalars(select(Pengurus))}
    finally:
        engine.dispose()


def set_password(url: str, email: str, sandi: str) -> bool:
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session, session.begin():
            return crud.set_sandi(session, email, sandi)
    finally:
        engine.dispose()


async def test_put_creates_then_replaces_and_the_email_is_case_folded(service: httpx2.AsyncClient, db_url: str) -> None:
    created = await service.put("/pengurus/RIDWAN@pesantren.sch.id", json=RIDWAN)
    assert created.status_code == 201, created.text
    expected = {**RIDWAN, "email": "ridwan@pesantren.sch.id", "kamar": ["Al-Fatih 1"], "aktif": True}
    assert created.json() == expected
    again = await service.put("/pengurus/ridwan@pesantren.sch.id", json=RIDWAN)
    assert (again.status_code, again.json()) == (200, expected)
    moved = await service.put("/pengurus/ridwan@pesantren.sch.id", json={**RIDWAN, "kamar": ["Al-Fatih 2"]})
    assert moved.json()["kamar"] == ["Al-Fatih 2"]
    assert list(stored(db_url)) == ["ridwan@pesantren.sch.id"]
    assert (await service.get("/pengurus/RIDWAN@PESANTREN.SCH.ID")).json()["kamar"] == ["Al-Fatih 2"]


async def test_put_refuses_another_email_in_the_body_and_bad_fields(service: httpx2.AsyncClient) -> None:
    other = await service.put("/pengurus/lain@pesantren.sch.id", json=RIDWAN)
    assert other.status_code == 422
    for bad in ({"peran": ["guru"]}, {"peran": []}, {"email": "bukan-email"}, {"sandi": "x"}):
        response = await service.put("/pengurus/ridwan@pesantren.sch.id", json={**RIDWAN, **bad})
        assert response.status_code == 422, bad
    unknown = await service.put("/pengurus/ridwan@pesantren.sch.id", json={**RIDWAN, "kamar": ["al-fatih 2", "Gudang"]})
    assert (unknown.status_code, unknown.json()["detail"]) == (422, "kamar tidak ada di daftar kamar: Gudang")
    assert (await service.get("/pengurus")).json() == {"data": []}


async def test_unknown_is_404_and_every_route_needs_the_token(service: httpx2.AsyncClient) -> None:
    assert (await service.get("/pengurus/siapa@pesantren.sch.id")).status_code == 404
    assert (await service.post("/pengurus/siapa@pesantren.sch.id/nonaktif")).status_code == 404
    for method, path in (("GET", "/pengurus"), ("PUT", "/pengurus/a@b.id"), ("POST", "/pengurus/a@b.id/nonaktif")):
        response = await service.request(method, path, json=RIDWAN, headers={"Authorization": "Bearer salah"})
        assert response.status_code == 401, path


async def test_list_filters_by_role_and_activity_and_deactivating_twice_is_once(service: httpx2.AsyncClient) -> None:
    await service.put("/pengurus/ridwan@pesantren.sch.id", json=RIDWAN)
    klinik = {"email": "siti@pesantren.sch.id", "nama": "Siti", "peran": ["kesehatan"]}
    await service.put("/pengurus/siti@pesantren.sch.id", json=klinik)

    async def emails(**params: Any) -> list[str]:
        return [p["email"] for p in (await service.get("/pengurus", params=params)).json()["data"]]

    assert await emails() == ["ridwan@pesantren.sch.id", "siti@pesantren.sch.id"]
    assert await emails(peran="kesehatan") == ["siti@pesantren.sch.id"]
    assert await emails(peran=["bk", "wali_kelas"]) == ["ridwan@pesantren.sch.id"]
    for _ in range(2):
        off = await service.post("/pengurus/Siti@pesantren.sch.id/nonaktif")
        assert (off.status_code, off.json()["aktif"]) == (200, False)
    assert await emails(aktif="true") == ["ridwan@pesantren.sch.id"]
    assert await emails(aktif="false") == ["siti@pesantren.sch.id"]
    assert (await service.get("/pengurus", params={"peran": "guru"})).status_code == 422


async def test_the_password_hash_never_leaves_the_service(service: httpx2.AsyncClient, db_url: str) -> None:
    await service.put("/pengurus/ridwan@pesantren.sch.id", json=RIDWAN)
    assert set_password(db_url, "RIDWAN@pesantren.sch.id", "kata sandi yang panjang")
    assert not set_password(db_url, "siapa@pesantren.sch.id", "x")
    hashed = stored(db_url)["ridwan@pesantren.sch.id"].sandi
    assert hashed is not None and hashed.startswith("$argon2id$")
    assert PasswordHasher().verify(hashed, "kata sandi yang panjang")
    answers = [
        await service.get("/pengurus"),
        await service.get("/pengurus/ridwan@pesantren.sch.id"),
        await service.put("/pengurus/ridwan@pesantren.sch.id", json=RIDWAN),
        await service.post("/pengurus/ridwan@pesantren.sch.id/nonaktif"),
    ]
    for answer in answers:
        assert answer.status_code in (200, 201)
        assert "argon2" not in answer.text and "sandi" not in answer.text and "gagal" not in answer.text
    assert stored(db_url)["ridwan@pesantren.sch.id"].sandi == hashed  # a PUT keeps the password


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_import_reads_lists_and_booleans_and_updates_by_email(db_url: str, tmp_path: Path) -> None:
    insert_rows(db_url, kamar=ROOMS, anak=[], absensi=[])
    engine = make_engine(db_url)
    sessions = make_sessionmaker(engine)
    first = write(
        tmp_path / "pengurus.csv",
        "email,nama,peran,kamar,kelas,menulis,aktif\n"
        "Ridwan@Pesantren.sch.id,Ust. Ridwan,musyrif;wali_kelas,Al-Fatih 1; Al-Fatih 2,7A,ya,true\n"
        "siti@pesantren.sch.id,Siti,kesehatan,,,tidak,\n",
    )
    try:
        report = import_file(sessions, "pengurus", first)
        assert (report.added, report.updated) == (2, 0)
        assert set_password(db_url, "ridwan@pesantren.sch.id", "rahasia sekali")
        second = write(
            tmp_path / "lagi.csv", "email,nama,peran,menulis\nRIDWAN@pesantren.sch.id,Ust. Ridwan,musyrif,False\n"
        )
        report = import_file(sessions, "pengurus", second)
        assert (report.added, report.updated) == (0, 1)
        bad = write(
            tmp_path / "salah.csv",
            "email,nama,peran,menulis,kamar\nbaru@pesantren.sch.id,Baru,kantor,ya,\nx@y.id,X,guru;kantor,mungkin,\n"
            "a@pesantren.sch.id,A,bk,ya,\nA@Pesantren.sch.id,A,bk,ya,\n"
            "m@pesantren.sch.id,M,musyrif,ya,Al-Fatih 1;Khadijah 9\n",
        )
        with pytest.raises(ImportRejected) as rejected:
            import_file(sessions, "pengurus", bad)
    finally:
        engine.dispose()
    assert rejected.value.errors == [
        "row 3: peran: one of kantor, musyrif, wali_kelas, kesehatan, bk, admin",
        "row 3: menulis: true or false (also ya or tidak)",
        "row 5: email: the same as in row 4",
        "row 6: kamar: kamar tidak ada di daftar kamar: Khadijah 9",
    ]
    staff = stored(db_url)
    assert sorted(staff) == ["ridwan@pesantren.sch.id", "siti@pesantren.sch.id"]  # nothing of the refused file
    ridwan, siti = staff["ridwan@pesantren.sch.id"], staff["siti@pesantren.sch.id"]
    assert (ridwan.peran, ridwan.kamar, ridwan.kelas, ridwan.menulis, ridwan.aktif) == (
        ["musyrif"],
        ["Al-Fatih 1", "Al-Fatih 2"],  # a column the file leaves out keeps what is stored
        ["7A"],
        False,
        True,
    )
    assert ridwan.sandi is not None  # an import never touches the password
    assert (siti.peran, siti.kamar, siti.kelas, siti.menulis, siti.aktif) == (["kesehatan"], [], [], False, True)


def test_the_import_help_tells_the_staff_columns() -> None:
    from mcp_asrama.service.importer import columns_help

    text = columns_help().split("columns of 'import pengurus'")[1].split("columns of")[0]
    assert "peran           required  roles, separated by ';': one of kantor, musyrif, wali_kelas" in text
    assert "kamar           optional  the rooms they are musyrif of: room names separated by ';'\n" in text
    assert "menulis         optional  may record" in text and "(also ya or tidak) (default False)" in text
    assert "Undefined" not in columns_help()


def room_list_changes(url: str) -> int:
    """The change feed's events of the room list (`kamar`, any room: no keys)."""
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as session:
            return len(session.scalars(select(Perubahan).where(Perubahan.jenis == "kamar")).all())
    finally:
        engine.dispose()


async def test_every_staff_change_is_a_change_of_the_room_list(
    service: httpx2.AsyncClient, db_url: str, tmp_path: Path
) -> None:
    """`GET /kamar` names each room's musyrif from the staff list: its listeners must hear of a staff change."""
    before = room_list_changes(db_url)
    assert (await service.put("/pengurus/ridwan@pesantren.sch.id", json=RIDWAN)).status_code == 201
    assert room_list_changes(db_url) == before + 1
    assert (await service.post("/pengurus/ridwan@pesantren.sch.id/nonaktif")).status_code == 200
    assert room_list_changes(db_url) == before + 2
    assert (await service.post("/pengurus/ridwan@pesantren.sch.id/nonaktif")).status_code == 200  # nothing new
    assert room_list_changes(db_url) == before + 2
    engine = make_engine(db_url)
    try:
        staff = write(tmp_path / "staf.csv", "email,nama,peran,kamar\nsiti@pesantren.sch.id,Siti,musyrif,Al-Fatih 2\n")
        import_file(make_sessionmaker(engine), "pengurus", staff)
    finally:
        engine.dispose()
    assert room_list_changes(db_url) == before + 3
