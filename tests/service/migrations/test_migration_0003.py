"""Revision 0003 (the change feed): a database at 0002, with its students, upgrades in place on start to an empty
`perubahan` table, whose first write gets id 1 and is served by the feed; downgrade drops only that table."""

from collections.abc import Iterator

import pytest
from alembic import command
from sqlalchemy import Engine, func, inspect, select

from mcp_asrama.service.migrations import config, head, locked, scripts, upgrade
from mcp_asrama.service.models import Anak, Perubahan
from tests.conftest import TUTORIAL_ANAK, serve_db
from tests.migration_support import school_at

pytestmark = pytest.mark.anyio


@pytest.fixture
def at_0002(db_url: str) -> Iterator[Engine]:
    """`db_url` migrated to revision 0002, holding the tutorial's rooms and students."""
    with school_at(db_url, "0002") as engine:
        yield engine


def test_0003_follows_0002() -> None:
    revision = scripts().get_revision("0003")
    assert revision is not None and revision.down_revision == "0002"


async def test_a_0002_database_gains_an_empty_feed_that_the_next_write_starts(db_url: str, at_0002: Engine) -> None:
    assert "perubahan" not in inspect(at_0002).get_table_names()
    done = upgrade(at_0002)
    assert (done.before, done.after) == ("0002", head())
    with at_0002.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(Perubahan)) == 0
        assert conn.scalar(select(func.count()).select_from(Anak)) == len(TUTORIAL_ANAK)
    async for client in serve_db(db_url):
        response = await client.put("/absensi/2026-10-06/A001", json={"status": "hadir"})
        assert response.status_code == 200
    with at_0002.connect() as conn:
        stored = conn.execute(select(Perubahan.id, Perubahan.jenis, Perubahan.id_anak)).all()
    assert [tuple(r) for r in stored] == [(1, "absensi", "A001")]


def test_downgrade_to_0002_drops_only_the_feed(at_0002: Engine) -> None:
    upgrade(at_0002)
    with at_0002.connect() as conn, locked(conn):
        command.downgrade(config(conn), "0002")
    tables = set(inspect(at_0002).get_table_names())
    assert "perubahan" not in tables and {"anak", "pelanggaran", "hafalan"} <= tables
    with at_0002.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(Anak)) == len(TUTORIAL_ANAK)
