"""Versioned schema migrations (Alembic), shipped in the package and configured here in code (no alembic.ini).

`upgrade(engine)` brings a database to this version's schema: an empty one is created by the revisions, one that a
release before Alembic made (its tables, no `alembic_version`) is adopted by the baseline (which adds only what it
lacks) and upgraded, one at head is left alone, one at a revision this version does not know (a newer release
upgraded it) is refused with `SchemaTooNew`. It runs in one transaction under a lock, so processes starting on the
same database at once migrate it once: PostgreSQL takes a transaction-level advisory lock, SQLite `BEGIN IMMEDIATE`
(the database's single write lock). On SQLite foreign keys are off while revisions run (a batch ALTER copies a table
and drops the old one, and dropping `anak` with them on would cascade into every table that refers to it); a
revision that leaves rows without their parent is rolled back.

Developers: `python -m mcp_asrama.service.migrations revision -m "..."` (see __main__.py).
"""

import logging
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError

if TYPE_CHECKING:
    from alembic.config import Config
    from alembic.script import ScriptDirectory

log = logging.getLogger("mcp_asrama.service.db")

SCRIPTS = Path(__file__).resolve().parent
BASELINE = "0001"
# The key of the PostgreSQL advisory lock held while migrating (advisory locks are per database): "asrama" in ASCII.
LOCK_KEY = 0x617372616D61
# How long a process waits for another one's upgrade of the same SQLite file (its usual busy_timeout is 5 s).
SQLITE_LOCK_WAIT_MS = 600_000
# Objects outside the revisions' tables that autogenerate must not offer to drop: the name index (SQLite's FTS5
# table and its shadow tables, PostgreSQL's trigram index), which the revisions create in SQL of their own.
NAME_INDEX_OBJECTS = ("anak_nama_fts", "ix_anak_nama_trgm")
_POSTGRES_NAME_INDEX = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX IF NOT EXISTS ix_anak_nama_trgm ON anak USING gin (lower(nama) gin_trgm_ops)",
]


def include_object(obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any) -> bool:
    """For autogenerate: leave out the name index (FTS5 table and its shadow tables, trigram index), which the
    models do not declare and the revisions create in SQL of their own."""
    return not (reflected and compare_to is None and name is not None and name.startswith(NAME_INDEX_OBJECTS))


def ignore_unreflected_expression_indexes() -> None:
    """Within `warnings.catch_warnings()`: SQLite's expression indexes (lower(kelas), lower(kamar)) cannot be
    reflected, so autogenerate skips them with a warning each time; PostgreSQL compares them."""
    warnings.filterwarnings("ignore", "Skipped unsupported reflection of expression-based index")
    warnings.filterwarnings("ignore", "autogenerate skipping metadata-specified expression-based index")


# Alembic's `op` and `context` are module-level proxies: one migration at a time per process.
_ONE_AT_A_TIME = threading.Lock()


class SchemaTooNew(RuntimeError):
    """The database's schema is at a revision this version does not know: a newer release has upgraded it."""

    def __init__(self, revision: str, head: str) -> None:
        super().__init__(
            f"its schema is at revision {revision}, newer than this version of mcp-asrama knows (up to {head}): "
            "run the mcp-asrama that upgraded it, or a database backed up before that upgrade"
        )
        self.revision = revision
        self.head = head


@dataclass(frozen=True)
class Upgrade:
    """What `upgrade` did: the revision before (None: no alembic_version) and after; `adopted` when the database
    had tables of a release before Alembic."""

    before: str | None
    after: str
    adopted: bool = False

    def __str__(self) -> str:
        if self.before == self.after:
            return f"schema at revision {self.after}, left as it is"
        if self.adopted:
            return f"schema of a release before versioned migrations, adopted and upgraded to revision {self.after}"
        if self.before is None:
            return f"schema created at revision {self.after}"
        return f"schema upgraded from revision {self.before} to {self.after}"


def config(connection: Connection | None = None, location: Path = SCRIPTS) -> "Config":
    """Alembic's configuration for the scripts in `location` (the packaged ones); `connection` is the one env.py
    migrates (else env.py opens the database named by `-x db=URL` or the settings)."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(location))
    cfg.set_main_option("file_template", "%%(rev)s_%%(slug)s")
    cfg.set_main_option("truncate_slug_length", "40")
    cfg.attributes["connection"] = connection
    return cfg


@cache
def scripts(location: Path = SCRIPTS) -> "ScriptDirectory":
    """The revisions in `location`, those shipped with this version by default (read once per process)."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(config(location=location))


def head(location: Path = SCRIPTS) -> str:
    """The last revision (of this version's, by default): the schema its models describe."""
    revision = scripts(location).get_current_head()
    assert revision is not None, f"no revisions in {location}"
    return revision


@contextmanager
def locked(conn: Connection) -> Iterator[None]:
    """A transaction on `conn` that no other process migrating the same database runs beside; committed at the end
    (rolled back on an error). On SQLite, with foreign keys off until then."""
    dialect = conn.dialect.name
    usual_timeout = 0
    if dialect == "sqlite":
        usual_timeout = int(conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one())
        # foreign_keys cannot change inside a transaction: set before BEGIN (pysqlite starts none for a PRAGMA).
        conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
        conn.exec_driver_sql(f"PRAGMA busy_timeout={SQLITE_LOCK_WAIT_MS}")
        conn.exec_driver_sql("BEGIN IMMEDIATE")
    elif dialect == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": LOCK_KEY})
    try:
        yield
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    finally:
        if dialect == "sqlite":
            _restore_sqlite(conn, usual_timeout)


def _restore_sqlite(conn: Connection, busy_timeout: int) -> None:
    """Foreign keys on and the connection's usual busy timeout again, or it is not given back to the pool."""
    try:
        conn.exec_driver_sql("PRAGMA foreign_keys=ON")
        conn.exec_driver_sql(f"PRAGMA busy_timeout={busy_timeout}")
        conn.commit()
    except DBAPIError:
        conn.invalidate()


@contextmanager
def foreign_keys_checked(conn: Connection) -> Iterator[None]:
    """Around revisions run with SQLite's foreign keys off: refuse (so roll back) when they leave more rows without
    their parent than there were (a database may hold some from tools that never turned foreign keys on)."""
    if conn.dialect.name != "sqlite":
        yield
        return
    before = len(conn.exec_driver_sql("PRAGMA foreign_key_check").all())
    yield
    after = len(conn.exec_driver_sql("PRAGMA foreign_key_check").all())
    if after > before:
        raise RuntimeError(f"a revision left {after - before} row(s) without their parent row: rolled back")


def upgrade(engine: Engine, location: Path = SCRIPTS) -> Upgrade:
    """Bring the database of `engine` to the last revision in `location` (this version's), once however many
    processes start on it (see the module)."""
    _quiet_alembic()  # before alembic is imported: it logs as it loads its plugins
    from alembic import command
    from alembic.runtime.migration import MigrationContext

    last = head(location)
    with _ONE_AT_A_TIME, engine.connect() as conn:
        with locked(conn):
            current = MigrationContext.configure(conn).get_current_heads()
            known = {s.revision for s in scripts(location).walk_revisions()}
            for revision in current:
                if revision not in known:
                    raise SchemaTooNew(revision, last)
            before = current[0] if current else None
            if current == (last,):
                done = Upgrade(before, last)
            else:
                adopted = before is None and conn.dialect.has_table(conn, "anak")
                command.upgrade(config(conn, location), "head")
                done = Upgrade(before, last, adopted=adopted)
        if conn.dialect.name == "postgresql" and done.before == done.after:
            _postgres_name_index(conn)  # (an upgrade has just tried)
    if done.before != done.after and (done.before is not None or done.adopted):  # in place: worth a line
        log.info("database %s", done, extra={"revision": done.after})
    return done


def _quiet_alembic() -> None:
    """Alembic's own INFO lines (plugins, "Context impl", each step) would join the service's log on every start:
    our one line says what was done. Left as it is when someone has set its level."""
    logger = logging.getLogger("alembic")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.WARNING)


def _postgres_name_index(conn: Connection) -> None:
    """Build the trigram name index where the baseline could not (pg_trgm was not available then), as every start
    of the release before Alembic tried to; it is not part of any revision's schema, only of its speed."""
    found = conn.execute(
        text("SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'ix_anak_nama_trgm'")
    ).first()
    conn.commit()
    if found:
        return
    try:
        with conn.begin():
            for statement in _POSTGRES_NAME_INDEX:
                conn.execute(text(statement))
    except DBAPIError:
        log.warning("pg_trgm is not available: name search will scan the table")
