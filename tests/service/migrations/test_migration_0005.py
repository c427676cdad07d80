"""Revision 0005: a database at 0004 gains the names' keys, filled from what it stores, and the indexes on them; rooms
whose names already fold together do not stop the upgrade: both are kept and counted in the log (never named);
downgrade restores the lower() indexes."""

import logging
from collections.abc import Iterator

import pytest
from alembic import command
from sqlalchemy import Engine, column, insert, table, text

from mcp_asrama.service.migrations import config, head, locked, scripts, upgrade
from tests.conftest import serve_db
from tests.migration_support import school_at

pytestmark = pytest.mark.anyio

NEW = {"ix_anak_kelas_kunci", "ix_anak_kamar_kunci"}
OLD = {"ix_anak_kelas_nama", "ix_anak_kamar_nama"}
# Stored by another tool before this revision: two rooms that fold together, students spelled every way.
ROOMS = [{"nama": n, "gedung": "Putra", "kapasitas": 4} for n in ("Straße 1", "STRASSE  1", "Umar 2")]
STUDENTS = [
    {"id": i, "nama": f"Santri {i}", "kelas": k, "kamar": r, "status": "aktif"}
    for i, k, r in (("S1", "9c", "strasse 1"), ("S2", "9C ", "Straße 1"), ("U1", "9 C", "UMAR  2"))
]


@pytest.fixture
def at_0004(db_url: str) -> Iterator[Engine]:
    with school_at(db_url, "0004") as engine:
        with engine.begin() as conn:
            for name, rows in (("kamar", ROOMS), ("anak", STUDENTS)):
                conn.execute(insert(table(name, *(column(c) for c in rows[0]))), rows)
        yield engine


def _indexes(engine: Engine) -> set[str]:
    query = (
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'anak'"
        if engine.dialect.name == "sqlite"
        else "SELECT indexname FROM pg_indexes WHERE tablename = 'anak'"
    )
    with engine.connect() as conn:
        return set(conn.scalars(text(query)))


def test_0005_follows_0004() -> None:
    revision = scripts().get_revision("0005")
    assert revision is not None and revision.down_revision == "0004"


async def test_a_0004_database_gains_the_keys_of_what_it_stores(
    at_0004: Engine, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp_asrama.service.db"):
        done = upgrade(at_0004)
    assert (done.before, done.after) == ("0004", head())
    assert _indexes(at_0004) >= NEW and not OLD & _indexes(at_0004)
    with at_0004.connect() as conn:
        keys = {r.nama: r.kunci for r in conn.execute(text("SELECT nama, kunci FROM kamar"))}
        assert keys["STRASSE  1"] == keys["Straße 1"] == "strasse 1"
        students = {r.id: (r.kelas_kunci, r.kamar_kunci) for r in conn.execute(text("SELECT * FROM anak"))}
        assert students["S1"] == students["S2"] == ("9c", "strasse 1")
        assert students["U1"] == ("9 c", "umar 2")
        assert students["A001"] == ("7a", "al-fatih 1")
        if at_0004.dialect.name == "sqlite":  # a page of one class still comes from an index, unsorted
            page = "SELECT * FROM anak WHERE kelas_kunci = '7a' ORDER BY nama, id LIMIT 20"
            plan = " ".join(str(row[-1]) for row in conn.execute(text(f"EXPLAIN QUERY PLAN {page}")))
            assert "ix_anak_kelas_kunci" in plan and "TEMP B-TREE" not in plan
    logged = [r.getMessage() for r in caplog.records]
    assert logged == ["2 room names fold onto another room's name (case or spacing only): kept, matched as one room"]
    async for client in serve_db(db_url):  # both rooms kept; every spelling of their students found by either
        rooms = {r["nama"]: r["terisi"] for r in (await client.get("/kamar")).json()["data"]}
        assert (rooms["Straße 1"], rooms["STRASSE  1"], rooms["Umar 2"]) == (2, 2, 1)
        found = (await client.get("/anak", params={"kamar": "STRASSE 1", "kelas": "9C"})).json()
        assert sorted(a["id"] for a in found["data"]) == ["S1", "S2"]


def test_downgrade_to_0004_restores_the_indexes_and_drops_the_keys(at_0004: Engine) -> None:
    upgrade(at_0004)
    with at_0004.connect() as conn, locked(conn):
        command.downgrade(config(conn), "0004")
    assert _indexes(at_0004) >= OLD and not NEW & _indexes(at_0004)
    with at_0004.connect() as conn:
        columns = conn.execute(text("SELECT * FROM anak")).keys()
        assert "kamar_kunci" not in columns and "kelas_kunci" not in columns
        assert conn.scalar(text("SELECT count(*) FROM anak")) == 3 + 3
