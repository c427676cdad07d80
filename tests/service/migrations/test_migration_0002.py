"""Revision 0002 (pelanggaran, hafalan, kesehatan): a database at the baseline, with its students, upgrades in place
on start to the new tables and the default kinds of violation, and the new routes serve it; downgrade undoes it."""

from collections.abc import Iterator
from datetime import date

import pytest
from alembic import command
from sqlalchemy import Engine, func, inspect, select, text

from mcp_asrama.service.crud.pelanggaran import DEFAULT_JENIS
from mcp_asrama.service.migrations import config, head, locked, scripts, upgrade
from mcp_asrama.service.models import Anak, JenisPelanggaran
from tests.conftest import TUTORIAL_ANAK, serve_db
from tests.migration_support import school_at

pytestmark = pytest.mark.anyio
NEW_TABLES = {"jenis_pelanggaran", "pelanggaran", "hafalan", "kunjungan_klinik"}


@pytest.fixture
def at_baseline(db_url: str) -> Iterator[Engine]:
    """`db_url` migrated to revision 0001 only, holding the tutorial's rooms and students."""
    with school_at(db_url, "0001") as engine:
        yield engine


def test_0002_follows_the_baseline() -> None:
    revision = scripts().get_revision("0002")
    assert revision is not None and revision.down_revision == "0001"


async def test_a_baseline_database_gains_the_tables_and_default_kinds_keeping_its_students(
    db_url: str, at_baseline: Engine
) -> None:
    assert not NEW_TABLES & set(inspect(at_baseline).get_table_names())
    done = upgrade(at_baseline)
    assert (done.before, done.after) == ("0001", head())
    assert set(inspect(at_baseline).get_table_names()) >= NEW_TABLES
    with at_baseline.connect() as conn:
        kinds = {
            tuple(r)
            for r in conn.execute(
                select(JenisPelanggaran.kode, JenisPelanggaran.nama, JenisPelanggaran.kategori, JenisPelanggaran.poin)
            )
        }
        assert kinds == set(DEFAULT_JENIS)
        assert conn.scalar(select(func.count()).select_from(Anak)) == len(TUTORIAL_ANAK)
    assert upgrade(at_baseline).before == head()  # left alone the second time: the kinds are not added again
    with at_baseline.connect() as conn:
        assert conn.scalar(select(func.count()).select_from(JenisPelanggaran)) == len(DEFAULT_JENIS)
    async for client in serve_db(db_url):
        body = {"id_anak": "A002", "tanggal": date.today().isoformat(), "jenis": "merokok"}
        response = await client.post("/pelanggaran", json=body)
        assert response.status_code == 201 and response.json()["poin"] == 75
        assert (await client.get("/hafalan/progres")).json()["jumlah_anak"] == len(TUTORIAL_ANAK)


def test_downgrade_to_the_baseline_drops_only_the_new_tables(at_baseline: Engine) -> None:
    upgrade(at_baseline)
    with at_baseline.connect() as conn, locked(conn):
        command.downgrade(config(conn), "0001")
    tables = set(inspect(at_baseline).get_table_names())
    assert not NEW_TABLES & tables and {"anak", "kamar", "izin"} <= tables
    with at_baseline.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one() == "0001"
        assert conn.scalar(select(func.count()).select_from(Anak)) == len(TUTORIAL_ANAK)
