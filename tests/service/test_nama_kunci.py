"""Room and class names compared by one fold (`mcp_asrama.names`), as the MCP server's scope check compares: case
(Unicode, so `Straße 1` is `STRASSE 1`) and spacing do not make two rooms, at every filter, in the rooms' occupancy
and on import; a new room whose name folds onto a stored one is refused."""

import logging
from collections.abc import AsyncIterator
from datetime import date
from pathlib import Path
from typing import Any

import httpx2
import pytest
from sqlalchemy import insert, select, text
from sqlalchemy.orm import Session, sessionmaker

from mcp_asrama.service.crud import common as crud_common
from mcp_asrama.service.crud.kamar import NameClash
from mcp_asrama.service.db import make_engine, make_sessionmaker
from mcp_asrama.service.importer import ImportRejected, import_file
from mcp_asrama.service.models import Anak, Kamar
from tests.conftest import insert_rows, serve_db

pytestmark = pytest.mark.anyio

KAMAR = [
    {"nama": "Al-Fatih 1", "gedung": "Putra", "kapasitas": 6, "musyrif": None},
    {"nama": "Straße 1", "gedung": "Putra", "kapasitas": 6, "musyrif": None},
]


def anak(id_: str, kelas: str, kamar: str | None) -> dict[str, Any]:
    return {"id": id_, "nama": f"Santri {id_}", "kelas": kelas, "kamar": kamar, "status": "aktif"}


# Spelled as other tools stored them: case, inner and outer spaces, ß and SS.
ANAK = [
    anak("F1", "7A", "Al-Fatih  1"),
    anak("F2", "7a", "al-fatih 1"),
    anak("F3", " 7A", "AL-FATIH 1 "),
    anak("S1", "8B", "Straße 1"),
    anak("S2", "8b", "STRASSE 1"),
    anak("X1", "8B", None),
]
DAY = date(2026, 10, 6)
ABSENSI = [{"tanggal": DAY, "id_anak": a["id"], "status": "hadir", "keterangan": None} for a in ANAK]


@pytest.fixture
def school(db_url: str) -> str:
    insert_rows(db_url, kamar=KAMAR, anak=ANAK, absensi=ABSENSI)
    return db_url


@pytest.fixture
async def service(school: str) -> AsyncIterator[httpx2.AsyncClient]:
    async for client in serve_db(school):
        yield client


@pytest.fixture
def sessions(school: str) -> Any:
    engine = make_engine(school)
    yield make_sessionmaker(engine)
    engine.dispose()


async def _ids(client: httpx2.AsyncClient, path: str, **params: Any) -> list[str]:
    response = await client.get(path, params={"limit": 100, **params})
    assert response.status_code == 200, response.text
    return sorted(r["id"] if path == "/anak" else r["id_anak"] for r in response.json()["data"])


@pytest.mark.parametrize("spelling", ["Al-Fatih 1", "al-fatih 1", "AL-FATIH 1", "Al-Fatih  1", " al-FATIH\t1 "])
async def test_every_spelling_of_a_room_is_the_same_room(service: httpx2.AsyncClient, spelling: str) -> None:
    assert await _ids(service, "/anak", kamar=spelling) == ["F1", "F2", "F3"]
    assert await _ids(service, "/absensi", tanggal=DAY.isoformat(), kamar=spelling) == ["F1", "F2", "F3"]


@pytest.mark.parametrize("spelling", ["Straße 1", "STRASSE 1", "strasse 1", "STRAẞE 1"])
async def test_sharp_s_and_ss_are_one_room(service: httpx2.AsyncClient, spelling: str) -> None:
    assert await _ids(service, "/anak", kamar=spelling) == ["S1", "S2"]
    assert await _ids(service, "/absensi", tanggal=DAY.isoformat(), kamar=spelling) == ["S1", "S2"]


async def test_classes_fold_the_same_way(service: httpx2.AsyncClient) -> None:
    assert await _ids(service, "/anak", kelas="7A") == ["F1", "F2", "F3"]
    assert await _ids(service, "/anak", kelas=["8B", "7a"]) == ["F1", "F2", "F3", "S1", "S2", "X1"]


async def test_occupancy_counts_every_spelling(service: httpx2.AsyncClient) -> None:
    rooms = (await service.get("/kamar")).json()["data"]
    assert {r["nama"]: r["terisi"] for r in rooms} == {"Al-Fatih 1": 3, "Straße 1": 2}


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


async def test_importing_a_student_into_a_differently_spelled_room_puts_them_in_it(
    school: str, sessions: sessionmaker[Session], service: httpx2.AsyncClient, tmp_path: Path
) -> None:
    report = import_file(sessions, "anak", _write(tmp_path / "a.csv", "id,nama,kelas,kamar\nN1,Nur,9C,STRASSE   1\n"))
    assert (report.added, report.rooms_created) == (1, ())
    assert await _ids(service, "/anak", kamar="Straße 1") == ["N1", "S1", "S2"]
    rooms = (await service.get("/kamar")).json()["data"]
    assert [r["nama"] for r in rooms] == ["Al-Fatih 1", "Straße 1"]
    with sessions() as session:  # stored tidy
        assert session.scalar(select(Anak.kamar).where(Anak.id == "N1")) == "STRASSE 1"


async def test_moving_a_student_by_import_moves_their_key_too(
    sessions: sessionmaker[Session], service: httpx2.AsyncClient, tmp_path: Path
) -> None:
    import_file(sessions, "anak", _write(tmp_path / "a.csv", "id,nama,kelas,kamar\nF1,Santri F1,8b,strasse 1\n"))
    assert await _ids(service, "/anak", kamar="Al-Fatih 1") == ["F2", "F3"]
    assert await _ids(service, "/anak", kamar="Straße 1") == ["F1", "S1", "S2"]
    assert await _ids(service, "/anak", kelas="8B") == ["F1", "S1", "S2", "X1"]
    import_file(sessions, "anak", _write(tmp_path / "b.csv", "id,nama,kelas\nF1,Santri F1,7A\n"))  # no kamar column
    assert await _ids(service, "/anak", kamar="STRASSE 1") == ["F1", "S1", "S2"]


@pytest.mark.parametrize("name", ["STRASSE 1", "al-fatih  1", "AL-FATIH 1"])
def test_a_new_room_folding_onto_a_stored_one_is_refused(
    sessions: sessionmaker[Session], tmp_path: Path, name: str
) -> None:
    with pytest.raises(ImportRejected) as rejected:
        import_file(
            sessions, "kamar", _write(tmp_path / "k.csv", f"nama,gedung,kapasitas\nUmar 1,Putra,4\n{name},Putra,8\n")
        )
    tidy = " ".join(name.split())
    assert rejected.value.errors == [
        f"room name(s) '{tidy}' differ only in case or spacing from another room: use the stored name"
    ]
    with sessions() as session:  # nothing imported
        assert sorted(session.scalars(select(Kamar.nama))) == ["Al-Fatih 1", "Straße 1"]


def test_a_stored_room_spelled_as_stored_up_to_outer_spaces_is_updated(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    import_file(sessions, "kamar", _write(tmp_path / "k.csv", "nama,gedung,kapasitas\n Straße 1 ,Putra,8\n"))
    with sessions() as session:
        assert session.execute(select(Kamar.nama, Kamar.kapasitas).order_by(Kamar.nama)).all() == [
            ("Al-Fatih 1", 6),
            ("Straße 1", 8),
        ]


def test_two_new_rooms_folding_together_are_refused(sessions: sessionmaker[Session]) -> None:
    rows = [{"nama": n, "gedung": "Putri", "kapasitas": 4, "musyrif": None} for n in ("Aisyah 9", "AISYAH 9")]
    with sessions() as session, session.begin(), pytest.raises(NameClash, match="'AISYAH 9', 'Aisyah 9'"):
        crud_common.upsert(session, Kamar, rows, key=("nama",))


def test_rooms_created_for_students_are_one_per_fold(sessions: sessionmaker[Session], tmp_path: Path) -> None:
    students = "id,nama,kelas,kamar\nN1,Nur,9C,Umar  9\nN2,Nia,9C,UMAR 9\nN3,Nia,9C,straße 1\n"
    report = import_file(sessions, "anak", _write(tmp_path / "a.csv", students), create_rooms=True)
    assert report.rooms_created == ("Umar 9",)


async def test_names_another_tool_wrote_without_their_key_are_keyed_at_start(
    school: str, caplog: pytest.LogCaptureFixture
) -> None:
    engine = make_engine(school)
    with engine.begin() as conn:  # plain SQL, as a school's own tool writes: no keys, or a key left from before
        conn.execute(text("INSERT INTO kamar (nama, gedung, kapasitas) VALUES ('Umar 5', 'Putra', 4)"))
        conn.execute(
            text("INSERT INTO anak (id, nama, kelas, kamar, status) VALUES ('T1', 'T', '9c', 'UMAR 5', 'aktif')")
        )
        conn.execute(text("UPDATE anak SET kamar = 'Straße 1', kelas = '9C' WHERE id = 'F1'"))
        conn.execute(text("UPDATE anak SET kamar = NULL WHERE id = 'F2'"))
    engine.dispose()
    with caplog.at_level(logging.WARNING, logger="mcp_asrama.service.crud.common"):
        async for client in serve_db(school):
            assert await _ids(client, "/anak", kamar="umar 5") == ["T1"]
            assert await _ids(client, "/anak", kamar="STRASSE 1") == ["F1", "S1", "S2"]
            assert await _ids(client, "/anak", kamar="Al-Fatih 1") == ["F3"]
            assert await _ids(client, "/anak", kelas="9C") == ["F1", "T1"]
            rooms = (await client.get("/kamar")).json()["data"]
            assert {r["nama"]: r["terisi"] for r in rooms} == {"Al-Fatih 1": 1, "Straße 1": 3, "Umar 5": 1}
    # kamar: Umar 5; anak.kelas: 9c, 9C; anak.kamar: UMAR 5, Straße 1, None
    assert [r.getMessage() for r in caplog.records] == [
        "6 room or class names had no key or a stale one (written by another tool): re-keyed"
    ]
    caplog.clear()
    async for _client in serve_db(school):  # keyed once: the next start writes nothing
        pass
    assert not caplog.records


def test_rooms_stored_twice_before_are_updated_by_their_exact_names(
    sessions: sessionmaker[Session], tmp_path: Path
) -> None:
    with sessions() as session, session.begin():  # a twin from before revision 0005, as the upgrade keeps it
        session.execute(insert(Kamar), [{"nama": "STRASSE 1", "gedung": "Putra", "kapasitas": 2}])
    import_file(sessions, "kamar", _write(tmp_path / "k.csv", "nama,gedung,kapasitas\nStraße 1,Putra,9\n"))
    import_file(sessions, "kamar", _write(tmp_path / "k.csv", "nama,gedung,kapasitas\nSTRASSE 1,Putri,3\n"))
    with pytest.raises(ImportRejected):
        import_file(sessions, "kamar", _write(tmp_path / "k.csv", "nama,gedung,kapasitas\nstrasse 1,Putra,9\n"))
    with sessions() as session:
        rooms = session.execute(select(Kamar.nama, Kamar.gedung, Kamar.kapasitas).order_by(Kamar.nama)).all()
    assert rooms == [("Al-Fatih 1", "Putra", 6), ("STRASSE 1", "Putri", 3), ("Straße 1", "Putra", 9)]
