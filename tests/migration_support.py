"""A database left at an earlier schema revision, holding the tutorial's rooms and students: what a school upgrades."""

from collections.abc import Iterator
from contextlib import contextmanager

from alembic import command
from sqlalchemy import Engine, insert

from mcp_asrama.service.db import make_engine
from mcp_asrama.service.migrations import config, locked
from mcp_asrama.service.models import Anak, Kamar
from tests.conftest import TUTORIAL_ANAK, TUTORIAL_KAMAR


@contextmanager
def school_at(db_url: str, revision: str) -> Iterator[Engine]:
    """`db_url` migrated to `revision` only, with the tutorial's rooms and students."""
    engine = make_engine(db_url)
    with engine.connect() as conn, locked(conn):
        command.upgrade(config(conn), revision)
    with engine.begin() as conn:
        conn.execute(insert(Kamar), TUTORIAL_KAMAR)
        conn.execute(insert(Anak), TUTORIAL_ANAK)
    try:
        yield engine
    finally:
        engine.dispose()
