"""Engine, sessions and schema for SQLite (default) and PostgreSQL, with a fast substring index on names.

SQLite gets an FTS5 trigram table kept in step by triggers; PostgreSQL a pg_trgm GIN index on lower(nama).
Both make `nama` substring search independent of the number of students.
"""

import logging
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, inspect, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.schema import CreateIndex

from mcp_asrama.private_files import create_private, open_to_others
from mcp_asrama.service.models import Base

log = logging.getLogger(__name__)

NAME_INDEX = "anak_nama_fts"

_SQLITE_NAME_INDEX = [
    "CREATE VIRTUAL TABLE IF NOT EXISTS anak_nama_fts USING fts5("
    "nama, content='anak', content_rowid='no', tokenize='trigram')",
    "CREATE TRIGGER IF NOT EXISTS anak_fts_insert AFTER INSERT ON anak BEGIN "
    "INSERT INTO anak_nama_fts(rowid, nama) VALUES (new.no, new.nama); END",
    "CREATE TRIGGER IF NOT EXISTS anak_fts_delete AFTER DELETE ON anak BEGIN "
    "INSERT INTO anak_nama_fts(anak_nama_fts, rowid, nama) VALUES ('delete', old.no, old.nama); END",
    "CREATE TRIGGER IF NOT EXISTS anak_fts_update AFTER UPDATE OF nama ON anak BEGIN "
    "INSERT INTO anak_nama_fts(anak_nama_fts, rowid, nama) VALUES ('delete', old.no, old.nama); "
    "INSERT INTO anak_nama_fts(rowid, nama) VALUES (new.no, new.nama); END",
]
_SQLITE_REBUILD_NAME_INDEX = "INSERT INTO anak_nama_fts(anak_nama_fts) VALUES ('rebuild')"

# Indexes an earlier schema had and a declared one now replaces (dropped on start).
_SUPERSEDED_INDEXES = ["ix_absensi_anak_tanggal"]

_POSTGRES_NAME_INDEX = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX IF NOT EXISTS ix_anak_nama_trgm ON anak USING gin (lower(nama) gin_trgm_ops)",
]


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=5000")
    # Up to 32 MiB of pages per connection (default 2 MiB), allocated as read: at 100,000 students the
    # rows behind a common name and one class's attendance stay cached. Sorts and groupings stay in memory.
    cursor.execute("PRAGMA cache_size=-32768")
    cursor.execute("PRAGMA temp_store=MEMORY")
    cursor.close()


def _private_sqlite_file(path: Path) -> None:
    """Create the database file 0600 in a 0700 folder before SQLite opens it (SQLite gives its -wal and -shm files
    the database file's mode); warn when an existing one is open to other users."""
    if create_private(path):
        return
    if open_to_others(path):
        log.warning(
            "the database file can be read by other users of this machine: chmod 600 it (and its -wal/-shm files)",
            extra={"path": str(path)},
        )


def make_engine(url: str) -> Engine:
    """An engine for `url`; a SQLite file is created private, and WAL and foreign keys switched on."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:" and not parsed.database.startswith("file:"):
            _private_sqlite_file(Path(parsed.database).expanduser())
        engine = create_engine(url, connect_args={"check_same_thread": False})
        event.listen(engine, "connect", _sqlite_pragmas)
        return engine
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)


def init_schema(engine: Engine) -> None:
    """Create missing tables and indexes (also on tables of an earlier schema); safe to call on every start."""
    had_tables = inspect(engine).has_table("anak")
    Base.metadata.create_all(engine)
    with engine.begin() as conn:
        for name in _SUPERSEDED_INDEXES:
            conn.execute(text(f"DROP INDEX IF EXISTS {name}"))
        for table in Base.metadata.sorted_tables:
            for index in table.indexes:
                conn.execute(CreateIndex(index, if_not_exists=True))
    dialect = engine.dialect.name
    if dialect == "sqlite":
        with engine.begin() as conn:
            fresh_index = not inspect(conn).has_table(NAME_INDEX)
            for statement in _SQLITE_NAME_INDEX:
                conn.execute(text(statement))
            if fresh_index and had_tables:
                conn.execute(text(_SQLITE_REBUILD_NAME_INDEX))
    elif dialect == "postgresql":
        try:
            with engine.begin() as conn:
                for statement in _POSTGRES_NAME_INDEX:
                    conn.execute(text(statement))
        except DBAPIError:
            log.warning("pg_trgm is not available: name search will scan the table")


def check_connection(url: str) -> None:
    """Open and close one connection to `url` (a SQLite file is created, private); raises what the driver raises."""
    engine = make_engine(url)
    try:
        with engine.connect():
            pass
    finally:
        engine.dispose()


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Sessions that keep loaded objects usable after commit."""
    return sessionmaker(engine, expire_on_commit=False)


def describe(url: str) -> str:
    """Which database `url` names, for messages: a SQLite file's absolute path, else the URL without its password."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            return "SQLite in memory (gone when the process stops)"
        return str(Path(parsed.database).expanduser().resolve())
    return parsed.render_as_string(hide_password=True)
