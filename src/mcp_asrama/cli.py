"""The `mcp-asrama` command: one subcommand per job; parses flags, builds settings, calls factories."""

import argparse
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from pydantic import ValidationError

from mcp_asrama import __version__
from mcp_asrama.config import DatabaseSettings, ServiceSettings, default_db_url
from mcp_asrama.logs import configure_logging


def _service_settings(args: argparse.Namespace) -> ServiceSettings:
    overrides = {k: v for k, v in {"host": args.host, "port": args.port, "db_url": args.db}.items() if v is not None}
    return ServiceSettings(**overrides)


def _serve(settings: ServiceSettings, demo: bool) -> int:
    import uvicorn

    from mcp_asrama.service.app import create_app
    from mcp_asrama.service.db import describe
    from mcp_asrama.service.demo import seed_demo

    app = create_app(settings)
    print(f"database: {describe(settings.db_url)}", file=sys.stderr)
    if demo:
        filled = seed_demo(app.state.sessions, date.today())
        print(
            "demo data: " + ("created" if filled else "database already has data, left as it is"),
            file=sys.stderr,
        )
    if settings.token is None:
        print(
            "no ASRAMA_SERVICE_TOKEN set: the service accepts requests without a token (loopback only)",
            file=sys.stderr,
        )
    print(f"service: http://{settings.host}:{settings.port} (API docs at /docs)", file=sys.stderr)
    uvicorn.run(app, host=settings.host, port=settings.port, log_config=None)
    return 0


def cmd_service(args: argparse.Namespace) -> int:
    """Run the data service."""
    return _serve(_service_settings(args), demo=args.demo)


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the data service on a demo SQLite database, filled on first start."""
    if args.db is None:
        args.db = default_db_url("demo.db")
    return _serve(_service_settings(args), demo=True)


def cmd_import(args: argparse.Namespace) -> int:
    """Import students or rooms from a CSV or XLSX file."""
    from sqlalchemy.exc import SQLAlchemyError

    from mcp_asrama.service.db import describe, init_schema, make_engine, make_sessionmaker
    from mcp_asrama.service.importer import ImportRejected, import_file

    db_url = args.db or DatabaseSettings().db_url
    engine = make_engine(db_url)
    try:
        init_schema(engine)
        report = import_file(make_sessionmaker(engine), args.kind, Path(args.file))
    except ImportRejected as rejected:
        for line in rejected.errors:
            print(line, file=sys.stderr)
        print(f"{args.file}: {rejected}", file=sys.stderr)
        return 1
    except SQLAlchemyError as exc:
        print(f"database {describe(db_url)}: {type(exc).__name__}; nothing was imported", file=sys.stderr)
        return 1
    finally:
        engine.dispose()
    print(f"{args.file}: {report.added} added, {report.updated} updated ({args.kind}) in {describe(db_url)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="mcp-asrama", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--log-level",
        default="INFO",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="DEBUG, INFO, WARNING or ERROR (default INFO)",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    def db_flag(p: argparse.ArgumentParser) -> None:
        p.add_argument("--db", help="database URL (default: ASRAMA_DB_URL or a SQLite file in the data folder)")

    service = commands.add_parser("service", help="run the REST data service")
    service.add_argument("--host", help="address to bind (default 127.0.0.1)")
    service.add_argument("--port", type=int, help="port (default 8000)")
    db_flag(service)
    service.add_argument("--demo", action="store_true", help="fill an empty database with demo data first")
    service.set_defaults(func=cmd_service)

    demo = commands.add_parser("demo", help="run the data service with demo data on SQLite")
    demo.add_argument("--host", help="address to bind (default 127.0.0.1)")
    demo.add_argument("--port", type=int, help="port (default 8000)")
    db_flag(demo)
    demo.set_defaults(func=cmd_demo)

    importer = commands.add_parser("import", help="import students (anak) or rooms (kamar) from CSV or XLSX")
    importer.add_argument("kind", choices=["anak", "kamar"])
    importer.add_argument("file", help="a .csv (comma or semicolon, UTF-8) or .xlsx file with a header row")
    db_flag(importer)
    importer.set_defaults(func=cmd_import)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level)
    try:
        return int(args.func(args))
    except ValidationError as exc:
        for error in exc.errors():
            setting = ".".join(str(p) for p in error["loc"])
            message = str(error["msg"]).removeprefix("Value error, ")
            print(f"configuration error: {setting + ': ' if setting else ''}{message}", file=sys.stderr)
        return 2
