"""Revision 0004: a database at 0003, with its students, upgrades in place to indexes that give a class's or a
room's students in name order, so that a page of one class is read from the index, not sorted; downgrade restores
the indexes it replaced."""

from collections.abc import Iterator

import pytest
from alembic import command
from sqlalchemy import Engine, select, text

from mcp_asrama.service.migrations import config, head, locked, scripts, upgrade
from mcp_asrama.service.models import Anak
from tests.conftest import TUTORIAL_ANAK
from tests.migration_support import school_at

NEW = {"ix_anak_kelas_nama", "ix_anak_kamar_nama"}
OLD = {"ix_anak_kelas_ci", "ix_anak_kamar_ci"}


@pytest.fixture
def at_0003(db_url: str) -> Iterator[Engine]:
    with school_at(db_url, "0003") as engine:
        yield engine


def _indexes(engine: Engine) -> set[str]:
    """The names of `anak`'s indexes, from the catalogue (SQLAlchemy's reflection skips expression indexes)."""
    query = (
        "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'anak'"
        if engine.dialect.name == "sqlite"
        else "SELECT indexname FROM pg_indexes WHERE tablename = 'anak'"
    )
    with engine.connect() as conn:
        return set(conn.scalars(text(query)))


def test_0004_follows_0003() -> None:
    revision = scripts().get_revision("0004")
    assert revision is not None and revision.down_revision == "0003"


def test_a_0003_database_gains_the_ordered_indexes_and_keeps_its_students(at_0003: Engine) -> None:
    assert _indexes(at_0003) >= OLD and not NEW & _indexes(at_0003)
    with at_0003.connect() as conn, locked(conn):  # to 0004 only: 0005 replaces these indexes in turn
        command.upgrade(config(conn), "0004")
    assert _indexes(at_0003) >= NEW and not OLD & _indexes(at_0003)
    with at_0003.connect() as conn:
        assert len(conn.scalars(select(Anak.id)).all()) == len(TUTORIAL_ANAK)
        if at_0003.dialect.name == "sqlite":  # the page of one class comes from the index, unsorted
            page = "SELECT * FROM anak WHERE lower(kelas) = lower('7A') ORDER BY nama, id LIMIT 20"
            plan = " ".join(str(row[-1]) for row in conn.execute(text(f"EXPLAIN QUERY PLAN {page}")))
            assert "ix_anak_kelas_nama" in plan and "TEMP B-TREE" not in plan


def test_downgrade_to_0003_restores_the_indexes_it_replaced(at_0003: Engine) -> None:
    done = upgrade(at_0003)
    assert (done.before, done.after) == ("0003", head())
    with at_0003.connect() as conn, locked(conn):
        command.downgrade(config(conn), "0003")
    assert _indexes(at_0003) >= OLD and not NEW & _indexes(at_0003)
