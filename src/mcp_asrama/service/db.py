"""Engine, sessions and schema for SQLite (default) and PostgreSQL, with a fast substring index on names.

The schema comes from versioned migrations (`migrations/`, Alembic), run by `init_schema` on every start.
SQLite gets an FTS5 trigram table kept in step by triggers; PostgreSQL a pg_trgm GIN index on lower(nama).
Both make `nama` substring search independent of the number of students.

SQLite's query planner chooses join orders from the statistics that `ANALYZE` stores (PostgreSQL's autovacuum
keeps its own): a bulk fill refreshes them (`refresh_statistics`), a start analyses the tables that hold rows but
have none (`analyse_if_needed`), and the pool runs `PRAGMA optimize` on a connection it takes back at most once per
`SQLITE_OPTIMIZE_EVERY_S` and on each of its connections as it is disposed (shutdown): SQLite's advice for
long-lived connections, which the pool's are.
"""

import contextlib
import logging
import sqlite3
import time
from pathlib import Path
from typing import Any, cast

from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.engine.default import DefaultDialect
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import QueuePool

from mcp_asrama.private_files import create_private, open_to_others
from mcp_asrama.service.crud import perubahan
from mcp_asrama.service.crud.perubahan import Retention
from mcp_asrama.service.models import Base

log = logging.getLogger(__name__)

NAME_INDEX = "anak_nama_fts"  # SQLite's FTS5 table of names (created by the baseline revision)
SQLITE_BUSY_TIMEOUT_MS = 5000  # how long a SQLite connection waits for another one's write lock
# Memory (issue 13): each connection keeps only a small private page cache and reads through a memory map of the
# file: those pages live once in the OS page cache, shared by all connections and dropped by the OS under pressure
# (VmRSS counts them once per connection's mapping, as RssFile: bench/memory.py).
SQLITE_CACHE_KIB = 2048
SQLITE_MMAP_BYTES = 1 << 30
# CPU (issue 24): opening a connection costs its PRAGMAs and a new memory map, so the pool keeps open as many as the
# service serves at once in the common case (the MCP server's calls at the evening roll call: bench/lean.py measures
# c = 1 and 8; with 2 kept, c = 8 opened a connection every other request). Up to 32 more open for a burst, closing
# after it (their caches and maps with them): 40 in all, anyio's worker threads that run the sync routes. A route
# holds its connection until its answer is serialized, in another worker thread: 80 requests at once (40 + 15 = 55
# with 2 + 13) can leave every connection waiting for a thread and every thread for a connection, until the pool's
# timeout (tests/service/test_lean_service.py).
SQLITE_POOL_SIZE, SQLITE_OVERFLOW = 8, 32
SQLITE_OPTIMIZE_EVERY_S = 3600.0  # PRAGMA optimize on a connection taken back at most this often (SQLite: hourly)
# Every ANALYZE reads about this many rows per index (SQLite advises 100-1000): ~20 ms at 100,000 students, where a
# whole one takes ~1.5 s and, measured there (bench/service_reads.py), also turned a class's violations and clinic
# visits from the class's covering index to a scan of them all with a lookup of each student (1.4-1.6x slower).
SQLITE_ANALYSIS_LIMIT = 1000


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    # Reads come from the shared memory map (the first 1 GiB of the file): at 100,000 students the rows behind a
    # common name and one class's attendance stay in the OS page cache without a private copy per connection; the
    # 2 MiB page cache holds what is written and what lies beyond the map. Sorts and groupings stay in memory.
    cursor.execute(f"PRAGMA cache_size=-{SQLITE_CACHE_KIB}")
    cursor.execute(f"PRAGMA mmap_size={SQLITE_MMAP_BYTES}")
    cursor.execute("PRAGMA temp_store=MEMORY")
    cursor.execute(f"PRAGMA analysis_limit={SQLITE_ANALYSIS_LIMIT}")
    cursor.close()


def _optimize(dbapi_connection: Any) -> None:
    """`PRAGMA optimize`: in 3.40 it analyses only the tables this connection's queries used that have unanalysed
    indexes or have grown 25-fold since; it gives up at once rather than wait for another connection's write lock."""
    try:
        dbapi_connection.execute("PRAGMA busy_timeout=0")
        dbapi_connection.execute("PRAGMA optimize")
    except sqlite3.Error as exc:  # busy, read-only or gone: the next turn tries again
        log.debug("PRAGMA optimize skipped: %s", type(exc).__name__)
    finally:
        with contextlib.suppress(sqlite3.Error):
            dbapi_connection.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")


class SqlitePool(QueuePool):
    """SQLAlchemy's QueuePool that knows when it is being disposed (the engine's `dispose()`: the service's end)."""

    _sqla_logger_namespace = "sqlalchemy.pool.SqlitePool"  # quiet like SQLAlchemy's own (WARNING unless echo_pool)
    disposing = False

    def dispose(self) -> None:
        self.disposing = True
        super().dispose()


class Optimizer:
    """`PRAGMA optimize` on an engine's SQLite connections: on one the pool takes back once `every` seconds have
    passed since the last run (or since the engine began), and on each as the pool is disposed; never as a burst's
    extra connection closes."""

    def __init__(self, engine: Engine, every: float) -> None:
        self.engine = engine
        self.every = every
        self.last = time.monotonic()

    def on_checkin(self, dbapi_connection: Any, _record: Any) -> None:
        now = time.monotonic()
        if dbapi_connection is not None and now - self.last >= self.every:
            self.last = now  # first, so that other threads returning connections meanwhile do not run it too
            _optimize(dbapi_connection)

    def on_close(self, dbapi_connection: Any, _record: Any) -> None:
        if getattr(self.engine.pool, "disposing", False):
            _optimize(dbapi_connection)


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


def make_engine(url: str, *, optimize_every: float = SQLITE_OPTIMIZE_EVERY_S) -> Engine:
    """An engine for `url`; a SQLite file is created private, WAL and foreign keys switched on, its connections
    pooled (`SQLITE_POOL_SIZE`) and optimized at most once per `optimize_every` seconds and at disposal."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:" and not parsed.database.startswith("file:"):
            _private_sqlite_file(Path(parsed.database).expanduser())
        # A database in memory keeps SQLAlchemy's pool for it (one connection per thread, no overflow), unoptimized:
        # it is gone when it closes.
        dialect = cast(type[DefaultDialect], parsed.get_dialect())
        queued = issubclass(dialect.get_pool_class(parsed), QueuePool)
        pool = {"poolclass": SqlitePool, "pool_size": SQLITE_POOL_SIZE, "max_overflow": SQLITE_OVERFLOW}
        engine = create_engine(url, connect_args={"check_same_thread": False}, **(pool if queued else {}))
        event.listen(engine, "connect", _sqlite_pragmas)
        if queued:
            optimizer = Optimizer(engine, optimize_every)
            event.listen(engine, "checkin", optimizer.on_checkin)
            event.listen(engine, "close", optimizer.on_close)
        return engine
    engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)
    event.listen(engine, "connect", _postgresql_settings)
    return engine


def _postgresql_settings(dbapi_connection: Any, _record: Any) -> None:
    """Each new PostgreSQL connection, once: JIT compilation off. PostgreSQL compiles a plan whose estimated cost is
    high, which a whole school's rekap is (its correlated fall-backs are costed as if each ran), and the compiling
    takes 0.1–0.8 s of a read that runs in 0.3 s without it (bench/scale.py, 100,000 students). Set outside a
    transaction (a SET in one is undone by its rollback)."""
    autocommit = dbapi_connection.autocommit
    dbapi_connection.autocommit = True
    try:
        with contextlib.closing(dbapi_connection.cursor()) as cursor:
            cursor.execute("SET jit = off")
    finally:
        dbapi_connection.autocommit = autocommit


def init_schema(engine: Engine) -> None:
    """Bring the database to this version's schema by its versioned migrations; safe to call on every start.

    An empty database is created, one of a release before versioned migrations adopted (what it lacks is added),
    one at an earlier revision upgraded, one at this version's left alone; processes starting at once migrate it
    once. Raises `SchemaTooNew` when a newer release has upgraded it (see `mcp_asrama.service.migrations`).
    """
    from mcp_asrama.service.migrations import upgrade

    try:
        upgrade(engine)
    except BaseException:
        engine.dispose()  # no pooled connection left open by a start that fails (create_app never returns the engine)
        raise


def refresh_statistics(session: Session) -> None:
    """After a bulk fill (the demo school, an import) of SQLite: `ANALYZE` (within the analysis limit) and commit,
    so the planner sees the new sizes; PostgreSQL's autovacuum does its own."""
    if session.get_bind().dialect.name == "sqlite":
        session.execute(text("ANALYZE"))
        session.commit()


def analyse_if_needed(engine: Engine) -> list[str]:
    """On SQLite, `ANALYZE` each of our tables that holds rows but has no statistics (a database filled before
    statistics were kept, or since it was analysed empty); returns their names. Without statistics the planner
    guesses: it drove a class's izin page from the class's 5,556 students instead of the school's two izin. An
    empty database (every test's) costs a few queries; PostgreSQL is left to its autovacuum."""
    if engine.dialect.name != "sqlite":
        return []
    with engine.connect() as conn:
        have_stats = conn.scalar(text("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_stat1'")) is not None
        analysed = set(conn.scalars(text("SELECT DISTINCT tbl FROM sqlite_stat1"))) if have_stats else set()
        wanted = [
            name
            for name in Base.metadata.tables
            if name not in analysed and conn.scalar(text(f'SELECT 1 FROM "{name}" LIMIT 1')) is not None  # noqa: S608
        ]
        for name in wanted:
            conn.execute(text(f'ANALYZE "{name}"'))
        conn.commit()
    if wanted:
        log.info("analysed tables without statistics", extra={"tables": wanted})
    return wanted


def check_connection(url: str) -> None:
    """Open and close one connection to `url` (a SQLite file is created, private); raises what the driver raises."""
    engine = make_engine(url)
    try:
        with engine.connect():
            pass
    finally:
        engine.dispose()


def make_sessionmaker(engine: Engine, retention: Retention | None = None) -> sessionmaker[Session]:
    """Sessions that keep loaded objects usable after commit and store the changes they queue for the change feed
    with each commit (pruning old ones by `retention` when given)."""
    sessions = sessionmaker(engine, expire_on_commit=False)
    perubahan.listen(sessions, retention)
    return sessions


def describe(url: str) -> str:
    """Which database `url` names, for messages: a SQLite file's absolute path, else the URL without its password."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            return "SQLite in memory (gone when the process stops)"
        return str(Path(parsed.database).expanduser().resolve())
    return parsed.render_as_string(hide_password=True)
