"""Opening a database from the command line: which one (`database_url`), the one-line reasons it cannot be used,
and the `import` command. Each failure of the database is one line on stderr and an exit code, never a traceback,
a password or a driver's own message (the starters, `service` and `demo`, are `runtime.starters`)."""

import argparse
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from mcp_asrama.config import DatabaseSettings, default_db_url


class MissingDatabase(Exception):
    """A SQLite file named by `--db` or ASRAMA_DB_URL that does not exist: a typo must not become a new database
    (`cli.main` says it in one line, exit code 2)."""


def named_database(flag: str | None) -> str:
    """The database of `--db`, else ASRAMA_DB_URL, else the default file, not checked (`restore` makes it)."""
    return (DatabaseSettings(db_url=flag) if flag is not None else DatabaseSettings()).db_url


def database_url(flag: str | None, *, buat: bool = False) -> str:
    """`named_database`, refused by `require_database` when it is a SQLite file that does not exist."""
    db_url = named_database(flag)
    require_database(db_url, buat=buat)
    return db_url


def require_database(db_url: str, *, buat: bool) -> None:
    """MissingDatabase unless the SQLite file of `db_url` exists, or `buat` and its folder exists (the file is then
    created on opening; a folder never is). The default file is created on first use; PostgreSQL is not checked."""
    from sqlalchemy.engine import make_url

    url = make_url(db_url)
    if db_url == default_db_url() or url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return
    path = Path(url.database).absolute()
    if path.exists():
        return
    if not buat:
        raise MissingDatabase(f"no database at {path}: check the path, or add --buat to create a new empty one")
    if not path.parent.exists():
        raise MissingDatabase(f"no folder {path.parent} for a new database: check the path (folders are not created)")


def cannot_open(db_url: str, exc: Exception) -> str:
    """One line for a database that cannot be used: a path the system refuses, a server that does not answer
    (never the password, never the driver's own message)."""
    from mcp_asrama.service.db import describe

    if isinstance(exc, OSError):
        return f"cannot use {exc.filename or 'the database'}: {exc.strerror or type(exc).__name__}"
    return f"database {describe(db_url)}: cannot open it ({type(exc).__name__}); check --db or ASRAMA_DB_URL"


def schema_too_new(db_url: str, exc: Exception) -> str:
    from mcp_asrama.service.db import describe

    return f"database {describe(db_url)}: {exc}; nothing was changed"


@contextmanager
def rows_bar(name: str) -> Iterator[Callable[[int, int], None]]:
    """A progress bar of the rows checked, on stderr and only when stderr is a terminal (never in logs or CI)."""
    from tqdm import tqdm

    bar: tqdm[NoReturn] | None = None

    def update(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(desc=f"{name}: checking", total=total, unit="row", file=sys.stderr, disable=None)
        bar.update(done - bar.n)

    try:
        yield update
    finally:
        if bar is not None:
            bar.close()


def cmd_import(args: argparse.Namespace) -> int:
    """Import students or rooms from a CSV or XLSX file into the database (all rows or none)."""
    from sqlalchemy.exc import SQLAlchemyError

    from mcp_asrama.service.db import describe, init_schema, make_engine, make_sessionmaker
    from mcp_asrama.service.import_files import FileRefused, ImportRejected
    from mcp_asrama.service.importer import import_file
    from mcp_asrama.service.migrations import SchemaTooNew

    if args.buat_kamar and args.kind != "anak":
        print("import: --buat-kamar creates the rooms that students name: use it with import anak", file=sys.stderr)
        return 2
    db_url = database_url(args.db, buat=args.buat)
    try:
        engine = make_engine(db_url)
        try:
            init_schema(engine)
            with rows_bar(Path(args.file).name) as progress:
                report = import_file(
                    make_sessionmaker(engine),
                    args.kind,
                    Path(args.file),
                    create_rooms=args.buat_kamar,
                    progress=progress,
                    strict=args.ketat,
                    warn=lambda line: print(line, file=sys.stderr),
                )
        finally:
            engine.dispose()
    except SchemaTooNew as exc:
        print(schema_too_new(db_url, exc), file=sys.stderr)
        return 1
    except FileRefused as refused:
        print(f"{args.file}: {refused.reason}; nothing was imported into {describe(db_url)}", file=sys.stderr)
        return 1
    except ImportRejected as rejected:
        for line in rejected.errors:
            print(line, file=sys.stderr)
        print(f"{args.file}: {rejected} into {describe(db_url)}", file=sys.stderr)
        return 1
    except (OSError, SQLAlchemyError) as exc:
        print(f"{cannot_open(db_url, exc)}; nothing was imported", file=sys.stderr)
        return 1
    print(f"{args.file}: {report.added} added, {report.updated} updated ({args.kind}) in {describe(db_url)}")
    if report.rooms_created:
        print(
            f"created {len(report.rooms_created)} room(s) the file names: {', '.join(report.rooms_created)} "
            "(building from the students' jenis_kelamin, as many beds as students; set them with import kamar)"
        )
    return 0
