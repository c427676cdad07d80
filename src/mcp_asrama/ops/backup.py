"""`mcp-asrama backup FILE` and `mcp-asrama restore FILE` on the database of `--db` (else ASRAMA_DB_URL, else the
default file), found as `import` finds it; neither asks anything, so both run from a script.

SQLite: a backup is SQLite's online backup API in one step (one read transaction: a consistent copy while a service
writes), into a new file 0600 in rollback-journal mode (one file, nothing beside it). A restore first checks that
the file is a SQLite database of ours (SQLite's `quick_check`, our tables, a revision this version knows: an older
one is upgraded when a service next starts), then takes the database's exclusive lock without waiting. A service or
demo holds a shared lock on its database for as long as it runs (its pooled connections, in WAL mode), so a database
in use is refused. Holding that lock, it keeps the database it replaces as `<db>.sebelum-restore-<UTC time>` (0600)
and copies the file in.

PostgreSQL: `pg_dump --format=custom` and `pg_restore --clean --if-exists --single-transaction` when they are on PATH
(the password through PGPASSWORD, never on a command line); without them, one line naming the command to run by
hand. A restore refuses a database other sessions are connected to and keeps a dump of the one it replaces beside
FILE.

Failures are one line on stderr: exit 2 for what was asked wrongly, 1 for what was refused, as `import` does.
"""

import argparse
import logging
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp_asrama.ops.database import database_url, named_database
from mcp_asrama.ops.pengurus import Stop
from mcp_asrama.private_files import create_private, private_folder

KEPT = ".sebelum-restore-"  # <db>.sebelum-restore-<UTC time>: the database a restore replaced
OUR_TABLES = ("alembic_version", "anak", "kamar")  # in every revision's schema (perubahan came with 0003)
READ_WAIT_MS = 5000  # how long a backup waits for a writer that is recovering the WAL
_PG_TABLE = re.compile(r"^\d+; \d+ \d+ TABLE \S+ (\S+) ", re.MULTILINE)


def _stamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")


def _connect(path: Path, mode: str) -> sqlite3.Connection:
    """An existing SQLite file, read-only (`ro`) or read-write (`rw`): never created by opening it."""
    return sqlite3.connect(f"{path.as_uri()}?mode={mode}", uri=True, isolation_level=None, timeout=0)


def _revision(conn: sqlite3.Connection, name: Path) -> str | None:
    """The schema revision of a SQLite database that passes `quick_check` (None: it has no alembic_version)."""
    try:
        verdict = conn.execute("PRAGMA quick_check").fetchone()[0]
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if verdict != "ok":
            raise Stop(f"{name}: damaged (it fails SQLite's quick_check); nothing was changed")
        if "alembic_version" not in tables:
            return None
        return ",".join(row[0] for row in conn.execute("SELECT version_num FROM alembic_version"))
    except sqlite3.DatabaseError as exc:
        raise Stop(f"{name}: not a SQLite database ({type(exc).__name__}); nothing was changed") from exc


def _known(revision: str | None, name: object) -> str:
    """`revision` when this version knows it; else why `name` cannot be restored."""
    from mcp_asrama.service.migrations import SchemaTooNew, head, scripts

    alembic = logging.getLogger("alembic")  # its INFO lines as it loads its plugins: not ours to print
    if alembic.level == logging.NOTSET:
        alembic.setLevel(logging.WARNING)
    if revision is None:
        raise Stop(f"{name}: not a database of mcp-asrama (no alembic_version); nothing was changed")
    if revision not in {script.revision for script in scripts().walk_revisions()}:
        raise Stop(f"{name}: {SchemaTooNew(revision, head())}; nothing was changed")
    return revision


def _ours(conn: sqlite3.Connection, name: Path) -> str:
    """The revision of a SQLite database of ours, checked; else a `Stop` saying what it is not."""
    revision = _revision(conn, name)
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = [table for table in OUR_TABLES if table not in tables]
    if missing:
        raise Stop(f"{name}: not a database of mcp-asrama (no table {', '.join(missing)}); nothing was changed")
    return _known(revision, name)


def _students(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM anak").fetchone()[0])


def sqlite_file(db_url: str) -> Path | None:
    """The file of a SQLite database URL (None: not SQLite)."""
    from sqlalchemy.engine import make_url

    parsed = make_url(db_url)
    if parsed.get_backend_name() != "sqlite":
        return None
    if parsed.database in (None, "", ":memory:"):
        raise Stop("a SQLite database in memory has nothing to back up or restore: give --db a file", 2)
    return Path(parsed.database).expanduser().resolve()


def _new_file(file: Path, database: Path | None) -> None:
    if database is not None and file.resolve() == database:
        raise Stop(f"{file} is the database itself: give another file", 2)
    if file.exists() or file.is_symlink():
        raise Stop(f"{file} already exists: give a new file (e.g. with the date in its name); nothing was written")
    if not file.parent.is_dir():  # a typo in the folder creates nothing
        raise Stop(f"{file.parent}: no such folder; nothing was written")


def backup_sqlite(database: Path, file: Path) -> str:
    """Copy the SQLite `database` (a service may be writing) into the new file `file`, 0600; what was done."""
    _new_file(file, database)
    if not database.is_file():
        raise Stop(f"database {database}: no such file; nothing was backed up")
    partial = file.with_name(f".{file.name}.{os.getpid()}.partial")
    create_private(partial)
    try:
        source = _connect(database, "rw")  # rw: a WAL database's reader may have to write its -shm
        try:
            source.execute(f"PRAGMA busy_timeout={READ_WAIT_MS}")
            copy = sqlite3.connect(partial, isolation_level=None)
            try:
                source.backup(copy)  # pages=-1: every page in one step, so one read transaction, one moment
                copy.execute("PRAGMA journal_mode=DELETE")  # one file, no -wal beside it
                revision, students = _revision(copy, database), _students(copy)
            finally:
                copy.close()
        finally:
            source.close()
        os.replace(partial, file)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    schema = f"revision {revision}" if revision else "no alembic_version"
    return f"backed up {database} to {file}: {schema}, {students} students, {file.stat().st_size} bytes"


def _lock(target: sqlite3.Connection, database: Path) -> None:
    """Hold `database`'s exclusive lock until `target` closes; refused at once while anything else has it open."""
    target.execute("PRAGMA busy_timeout=0")
    target.execute("PRAGMA locking_mode=EXCLUSIVE")
    try:
        target.execute("BEGIN EXCLUSIVE")
        target.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        raise Stop(
            f"database {database}: in use (a service or demo runs on it?): stop it, then restore; nothing was changed"
        ) from exc
    except sqlite3.DatabaseError as exc:
        raise Stop(f"database {database}: not a SQLite database: move it away, then restore") from exc


def restore_sqlite(database: Path, file: Path) -> str:
    """Replace the SQLite `database` (no one using it) with the backup `file`, keeping the one it replaces."""
    from mcp_asrama.service.migrations import head

    if file.resolve() == database:
        raise Stop(f"{file} is the database itself: give a backup file", 2)
    if not file.is_file():
        raise Stop(f"{file}: no such file; nothing was changed")
    source = _connect(file, "ro")
    try:
        revision = _ours(source, file)
        private_folder(database.parent)
        existed = not create_private(database)
        target = sqlite3.connect(database, isolation_level=None, timeout=0)
        try:
            _lock(target, database)
            kept = database.with_name(f"{database.name}{KEPT}{_stamp()}") if existed else None
            if kept is not None:
                if not create_private(kept):
                    raise Stop(f"{kept} already exists: try again in a second; nothing was changed")
                keep = sqlite3.connect(kept, isolation_level=None)
                try:
                    target.backup(keep)
                    keep.execute("PRAGMA journal_mode=DELETE")
                finally:
                    keep.close()
            source.backup(target)
            _ours(target, database)
            students = _students(target)
        finally:
            target.close()
    finally:
        source.close()
    said = f"restored {file} into {database}: revision {revision}, {students} students"
    said += f"; the database it replaced is kept as {kept}" if kept else ""
    return said + ("" if revision == head() else "; a service brings its schema up to date as it starts")


def _libpq(db_url: str) -> tuple[str, dict[str, str]]:
    """The URL libpq's tools take (no driver, no password) and the environment that gives them the password."""
    from sqlalchemy.engine import make_url

    parsed = make_url(db_url)
    password = {"PGPASSWORD": parsed.password} if parsed.password else {}
    plain = parsed._replace(drivername="postgresql", password=None)  # set() leaves a None as it was
    return plain.render_as_string(hide_password=False), password


def _tool(name: str, by_hand: list[str]) -> str:
    found = shutil.which(name)
    if found is None:
        raise Stop(f"{name} is not on PATH (Debian: apt install postgresql-client); run by hand: {shlex.join(by_hand)}")
    return found


def _run(command: list[str], password: dict[str, str]) -> str:
    environment = {**os.environ, **password}
    # our own arguments to a tool found on PATH, as a list: no shell
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=False)  # noqa: S603
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise Stop(f"{Path(command[0]).name} failed: {last}")
    return done.stdout


def backup_postgres(db_url: str, file: Path) -> str:
    """`pg_dump --format=custom` of the database into the new file `file`, 0600."""
    from mcp_asrama.service.db import describe

    _new_file(file, None)
    url, password = _libpq(db_url)
    arguments = ["--format=custom", "--file", str(file), "--dbname", url]
    tool = _tool("pg_dump", ["pg_dump", *arguments])
    create_private(file)
    try:
        _run([tool, *arguments], password)
    except BaseException:
        file.unlink(missing_ok=True)
        raise
    return f"backed up {describe(db_url)} to {file}: {file.stat().st_size} bytes (pg_dump, custom format)"


def _pg_others(db_url: str) -> int:
    """How many other clients are connected to the database."""
    from sqlalchemy import text

    from mcp_asrama.service.db import make_engine

    engine = make_engine(db_url)
    try:
        with engine.connect() as conn:
            query = (
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() "
                "AND backend_type = 'client backend'"  # not autovacuum, which works on any database
            )
            return int(conn.execute(text(query)).scalar_one())
    finally:
        engine.dispose()


def restore_postgres(db_url: str, file: Path) -> str:
    """`pg_restore` of the dump `file` over the database (no one else connected), keeping a dump of it first."""
    from mcp_asrama.service.db import describe

    if not file.is_file():
        raise Stop(f"{file}: no such file; nothing was changed")
    url, password = _libpq(db_url)
    arguments = ["--clean", "--if-exists", "--no-owner", "--single-transaction", "--exit-on-error", "--dbname", url]
    tool = _tool("pg_restore", ["pg_restore", *arguments, str(file)])
    listing = _run([tool, "--list", str(file)], {})
    missing = [table for table in OUR_TABLES if table not in set(_PG_TABLE.findall(listing))]
    if missing:
        raise Stop(f"{file}: not a dump of mcp-asrama (no table {', '.join(missing)}); nothing was changed")
    data = _run([tool, "--data-only", "--table=alembic_version", "--file=-", str(file)], {})
    rows = data.split("FROM stdin;\n", 1)[-1].split("\n\\.", 1)[0].split() if "FROM stdin;" in data else []
    revision = _known(",".join(rows) or None, file)
    others = _pg_others(db_url)
    if others:
        raise Stop(
            f"database {describe(db_url)}: in use ({others} other session(s): a service or demo?): stop them, "
            "then restore; nothing was changed"
        )
    name = url.rsplit("/", 1)[-1].split("?", 1)[0] or "asrama"
    kept = file.resolve().with_name(f"{name}{KEPT}{_stamp()}.dump")
    backup_postgres(db_url, kept)
    _run([tool, *arguments, str(file)], password)
    return f"restored {file} into {describe(db_url)}: revision {revision}; the database it replaced is kept as {kept}"


def _command(action: Callable[[str, Path], str], what: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        from sqlalchemy.exc import SQLAlchemyError

        from mcp_asrama.ops.database import cannot_open

        db_url = named_database(args.db) if what == "restore" else database_url(args.db, buat=args.buat)
        try:
            print(action(db_url, Path(args.file)))
        except Stop as stop:
            print(f"{what}: {stop}", file=sys.stderr)
            return stop.code
        except (OSError, SQLAlchemyError, sqlite3.Error) as exc:
            reason = f"SQLite: {exc}" if isinstance(exc, sqlite3.Error) else cannot_open(db_url, exc)
            print(f"{what}: {reason}; nothing was changed", file=sys.stderr)
            return 1
        return 0

    return run


def backup(db_url: str, file: Path) -> str:
    """Back the database of `db_url` up into the new file `file` (0600); what was done, in one line."""
    database = sqlite_file(db_url)
    return backup_postgres(db_url, file) if database is None else backup_sqlite(database, file)


def restore(db_url: str, file: Path) -> str:
    """Replace the database of `db_url` (no one using it) with the backup `file`; what was done, in one line."""
    database = sqlite_file(db_url)
    return restore_postgres(db_url, file) if database is None else restore_sqlite(database, file)


def add_parser(commands: Any, db_flag: Callable[[argparse.ArgumentParser], None]) -> None:
    """The `backup` and `restore` subcommands."""
    taken = commands.add_parser(
        "backup",
        help="copy the database into a new FILE (consistent while a service runs; readable by you only)",
        description="Copy the database into a new FILE, readable by you only, while services may keep writing: "
        "SQLite's online backup (one consistent moment), or pg_dump's custom format for PostgreSQL.",
    )
    taken.add_argument("file", help="the new backup file (an existing one is never overwritten)")
    db_flag(taken)
    taken.set_defaults(func=_command(backup, "backup"))
    back = commands.add_parser(
        "restore",
        help="replace the database with a backup FILE (refused while a service runs on it; the replaced one kept)",
        description="Replace the database with a backup FILE made by mcp-asrama backup. Refused while a service or "
        "demo runs on it; the database it replaces is kept (SQLite: <db>.sebelum-restore-<time>; PostgreSQL: a dump "
        "beside FILE). Asks nothing.",
    )
    back.add_argument("file", help="a backup made by mcp-asrama backup")
    db_flag(back)
    back.set_defaults(func=_command(restore, "restore"))
