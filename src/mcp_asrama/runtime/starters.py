"""The commands that start a server on a database: `service` (or only `service --upgrade`) and `demo`. Each failure
of the database is one line on stderr and an exit code, never a traceback, a password or a driver's own message."""

import argparse
import sys
from collections.abc import Callable

from mcp_asrama.config import ServiceSettings, data_dir
from mcp_asrama.ops.database import cannot_open, database_url, require_database, schema_too_new

OLD_DEMO_DB = "demo.db"  # where `demo` kept its data in the data folder before it used the default database


def start_service(args: argparse.Namespace, run: Callable[[ServiceSettings], None]) -> int:
    """Settings from the flags and the environment, with the service's token, then `run` them (until Ctrl+C)."""
    from sqlalchemy.exc import SQLAlchemyError

    from mcp_asrama.service.db import check_connection
    from mcp_asrama.service.migrations import SchemaTooNew

    overrides = {k: v for k, v in {"host": args.host, "port": args.port, "db_url": args.db}.items() if v is not None}
    settings = ServiceSettings(**overrides)
    require_database(settings.db_url, buat=args.buat)
    try:
        check_connection(settings.db_url)  # before its token is kept
        moved = settings.move_old_token()
        if moved is not None:
            print(f"service token: moved from {moved} to {settings.token_path()} (the same token)", file=sys.stderr)
        run(settings.with_token())
    except SchemaTooNew as exc:
        print(schema_too_new(settings.db_url, exc), file=sys.stderr)
        return 1
    except (OSError, SQLAlchemyError) as exc:
        print(cannot_open(settings.db_url, exc), file=sys.stderr)
        return 1
    return 0


def upgrade_only(args: argparse.Namespace) -> int:
    """Bring the database's schema to this version's, say what was done, and exit (no token, no port)."""
    from sqlalchemy.exc import SQLAlchemyError

    from mcp_asrama.service.db import describe, make_engine
    from mcp_asrama.service.migrations import SchemaTooNew, upgrade

    db_url = database_url(args.db, buat=args.buat)
    try:
        engine = make_engine(db_url)
        try:
            done = upgrade(engine)
        finally:
            engine.dispose()
    except SchemaTooNew as exc:
        print(schema_too_new(db_url, exc), file=sys.stderr)
        return 1
    except (OSError, SQLAlchemyError) as exc:
        print(f"{cannot_open(db_url, exc)}; nothing was changed", file=sys.stderr)
        return 1
    print(f"database {describe(db_url)}: {done}")
    return 0


def cmd_service(args: argparse.Namespace) -> int:
    """Run the data service (its database upgraded first), or with --upgrade only upgrade the database."""
    if args.upgrade:
        if args.demo:
            print("service: --upgrade only upgrades the database and exits: leave out --demo", file=sys.stderr)
            return 2
        return upgrade_only(args)
    from mcp_asrama.runtime.launch import run_service

    return start_service(args, lambda settings: run_service(settings, demo=args.demo))


def old_demo_note(db_url: str) -> None:
    """Say that the demo's file of an earlier version is left alone, and how to open it again."""
    from mcp_asrama.runtime.invocation import shown
    from mcp_asrama.service.db import describe

    old = data_dir() / OLD_DEMO_DB
    if old.is_file() and describe(db_url) != str(old.resolve()):
        print(
            f"note: {old} is the demo database of an earlier version and is no longer used (the demo now uses the "
            f"same database as service and import); to open it again: {shown()} demo --db {old}",
            file=sys.stderr,
        )


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the data service on the default database (demo data added while it is empty) and the MCP server over
    HTTP beside it."""
    from mcp_asrama.runtime.launch import run_demo
    from mcp_asrama.server.settings import ServerSettings

    def run(service: ServiceSettings) -> None:
        server = ServerSettings(
            api_url=f"http://{service.host}:{service.port}",
            api_token=service.token,
            transport="http",
            mcp_host=service.host,
            mcp_port=args.mcp_port,
        )
        old_demo_note(service.db_url)
        run_demo(service, server)

    return start_service(args, run)
