"""A database left at an earlier schema revision, holding the tutorial's rooms and students: what a school upgrades."""

from collections.abc import Iterator
from contextlib import contextmanager

from alembic import command
from sqlalchemy import Engine, column, insert, table

from mcp_asrama.service.db import make_engine
from mcp_asrama.service.migrations import config, locked
from tests.conftest import TUTORIAL_ANAK, TUTORIAL_KAMAR


@contextmanager
def school_at(db_url: str, revision: str) -> Iterator[Engine]:
    """`db_url` migrated to `revision` only, with the tutorial's rooms and students."""
    engine = make_engine(db_url)
    with engine.connect() as conn, locked(conn):
        command.upgrade(config(conn), revision)
    with engine.begin() as conn:  # into the tables as that revision made them (the models describe the last one)
        for name, rows in (("kamar", TUTORIAL_KAMAR), ("anak", TUTORIAL_ANAK)):
            conn.execute(insert(table(name, *(column(c) for c in rows[0]))), rows)
    try:
        yield engine
    finally:
        engine.dispose()
