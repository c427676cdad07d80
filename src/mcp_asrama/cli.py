"""The `mcp-asrama` command: one subcommand per job; parses flags, builds settings, calls factories."""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mcp_asrama import __version__
from mcp_asrama.config import TOKEN_FILE, DatabaseSettings, data_dir, read_token, service_token_file
from mcp_asrama.contract import IMPORT_KINDS
from mcp_asrama.ops import backup, pengurus
from mcp_asrama.ops.database import MissingDatabase, cmd_import
from mcp_asrama.runtime.logs import configure_logging
from mcp_asrama.runtime.starters import cmd_demo, cmd_service

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"  # in a source checkout (make run)


SERVE_FLAGS = {  # flag destination -> ServerSettings field (the env name is ASRAMA_ + the field, upper case)
    "transport": "transport",
    "host": "mcp_host",
    "port": "mcp_port",
    "auth": "auth",
    "public_url": "public_url",
    "auth_issuer": "auth_issuer",
    "auth_jwks_url": "auth_jwks_url",
    "auth_public_key_file": "auth_public_key_file",
    "auth_scope_claim": "auth_scope_claim",
    "allowed_origins": "allowed_origins",
}


def cmd_serve(args: argparse.Namespace) -> int:
    """Run the MCP server over stdio (default) or Streamable HTTP."""
    from mcp_asrama.server.guard.audit_seal import AuditConfigError
    from mcp_asrama.server.guard.auth import AuthConfigError
    from mcp_asrama.server.run import UnsafeBind, serve
    from mcp_asrama.server.settings import ServerSettings

    overrides = {field: getattr(args, flag) for flag, field in SERVE_FLAGS.items()}
    try:
        serve(ServerSettings(**{k: v for k, v in overrides.items() if v is not None}))
    except (UnsafeBind, AuthConfigError, AuditConfigError) as exc:
        print(f"configuration error: {exc}", file=sys.stderr)
        return 2
    return 0


def cmd_probe(args: argparse.Namespace) -> int:
    """Print the raw JSON-RPC of a short session with any stdio MCP server."""
    import json

    import anyio

    from mcp_asrama.ops.probe import run_probe

    command = [c for c in args.server_command if c != "--"]
    if not command:
        print("probe: give the server command after --, e.g. mcp-asrama probe -- mcp-asrama serve", file=sys.stderr)
        return 2
    calls = []
    for name, raw in args.call or []:
        try:
            arguments = json.loads(raw)
        except json.JSONDecodeError as exc:
            print(f"probe: --call {name}: arguments are not JSON ({exc.msg})", file=sys.stderr)
            return 2
        if not isinstance(arguments, dict):
            print(f"probe: --call {name}: arguments must be a JSON object", file=sys.stderr)
            return 2
        calls.append((name, arguments))
    return anyio.run(
        lambda: run_probe(
            command,
            legacy=args.legacy,
            calls=calls,
            out=sys.stdout,
            compact=args.compact,
            server_log=args.server_log,
            tanya="ask" if args.tanya is True else args.tanya,
        )
    )


def cmd_claude_config(args: argparse.Namespace) -> int:
    """Print the claude_desktop_config.json block for this installation, or for mcp-remote in front of a remote
    endpoint; exit 2 on flags or a URL the block must not carry."""
    from mcp_asrama.ops.claude_config import RemoteConfigError, config_location, render, render_remote

    token_file = None
    try:
        if args.remote is None:
            if args.token_env is not None:
                raise RemoteConfigError("--token-env goes with --remote (a local server takes --with-token)")
            if args.db is not None:
                if args.with_token:
                    raise RemoteConfigError("--db and --with-token both give the token: choose one")
                chosen = service_token_file(DatabaseSettings(db_url=args.db).db_url)
                token_file = None if chosen == data_dir() / TOKEN_FILE else chosen  # the server finds that one
            text = with_token_file(render(args.name, args.api_url, args.with_token, args.writes), token_file)
        else:
            given = {"--api-url": args.api_url, "--with-token": args.with_token, "--writes": args.writes}
            given["--db"] = args.db is not None
            local = [flag for flag, value in given.items() if value]
            if local:
                raise RemoteConfigError(f"--remote takes no {', '.join(local)}: those configure a local server")
            text = render_remote(args.name, args.remote, args.token_env)
    except RemoteConfigError as exc:
        print(f"claude-config: {exc}", file=sys.stderr)
        return 2
    print(text)
    if token_file is not None and read_token(token_file) is None:
        print(f"note: no token in {token_file} yet: start the service on this database first", file=sys.stderr)
    print(
        f"paste into {config_location()} (merge with any existing mcpServers), then restart Claude Desktop",
        file=sys.stderr,
    )
    if args.remote:
        print("note: the block runs mcp-remote with npx: this computer needs Node.js 22 or newer", file=sys.stderr)
    return 0


def with_token_file(text: str, token_file: Path | None) -> str:
    """The block's JSON with its server reading the token from `token_file` (ASRAMA_API_TOKEN_FILE), if given."""
    if token_file is None:
        return text
    import json

    block = json.loads(text)
    for server in block["mcpServers"].values():
        server["env"].pop("ASRAMA_API_TOKEN", None)  # a placeholder: --db and --with-token do not go together
        server["env"]["ASRAMA_API_TOKEN_FILE"] = str(token_file)
    return json.dumps(block, indent=2, ensure_ascii=False)


def cmd_audit(args: argparse.Namespace) -> int:
    """Check audit files' chains (with their key, against anchors), or list who received or changed a student's
    data across them."""
    import json
    from functools import cache

    from mcp_asrama.server.guard import audit_check
    from mcp_asrama.server.guard.audit_seal import load_key
    from mcp_asrama.server.settings import ServerSettings

    settings = cache(ServerSettings)  # read only for a default the flags leave open
    named = [Path(file) for file in args.file] or [path for path in [settings().audit_log] if path is not None]
    if not named:
        print("audit: give the audit file, or set ASRAMA_AUDIT_LOG", file=sys.stderr)
        return 2
    try:
        files = audit_check.audit_files(named)
    except ValueError as exc:  # a path that does not exist, a folder without audit files
        print(f"audit: {exc}", file=sys.stderr)
        return 2
    if args.audit_command in ("who-saw", "who-changed"):
        lookup = audit_check.who_saw if args.audit_command == "who-saw" else audit_check.who_changed
        for entry in audit_check.merged(lookup, files, args.id_anak):
            print(json.dumps(entry, ensure_ascii=False))
        return 0
    if len(files) > 1 and (args.expect_head or args.since):
        print("audit: --expect-head and --since anchor one chain: give a single file", file=sys.stderr)
        return 2
    key_file = Path(args.key) if args.key else settings().audit_key
    try:
        head = audit_check.Anchor.parse(args.expect_head, head=True) if args.expect_head else None
        since = [audit_check.Anchor.parse(anchor) for anchor in args.since]
        key = load_key(key_file) if key_file else None
    except ValueError as exc:  # an anchor that is not SEQ:HASH, an unusable key file
        print(f"audit: {exc}", file=sys.stderr)
        return 2
    broken = 0
    for path in files:  # each replica's file is a chain of its own
        intact, verdict = audit_check.verify(path, key=key, expect_head=head, since=since)
        print(verdict if len(files) == 1 else f"{path}: {verdict}", file=sys.stdout if intact else sys.stderr)
        broken += not intact
    return 1 if broken else 0


_KIND_HELP = {
    "anak": "students",
    "kamar": "rooms",
    "jenis_pelanggaran": "the kinds of violation (by kode)",
    "pengurus": "the staff (by email)",
}
"""What a kind of `IMPORT_KINDS` holds, where it is not a dated domain's records (each row a new record)."""


class _HelpWithColumns(argparse.Action):
    """`import -h`: the usual help, then the columns of each kind of file (read from the importer only when asked)."""

    def __init__(self, option_strings: list[str], dest: str, **_: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show this help and the columns of each file, then exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from mcp_asrama.service.importer import columns_help

        examples = f"\nExample files: {EXAMPLES / 'kamar.csv'} and {EXAMPLES / 'siswa.csv'}"
        parser.epilog = columns_help() + (examples if EXAMPLES.is_dir() else "")
        parser.print_help()
        parser.exit()


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
        p.add_argument(
            "--db",
            metavar="PATH|URL",
            help="a SQLite file (e.g. ./asrama.db) or a URL such as postgresql+psycopg://USER:PASSWORD@HOST/DBNAME "
            f"(default: ASRAMA_DB_URL, else {data_dir() / 'asrama.db'}: the same for service, demo and import)",
        )
        p.add_argument(
            "--buat",
            action="store_true",
            help="create a new empty SQLite database if --db or ASRAMA_DB_URL names a file that does not exist "
            "(its folder must exist); without it such a file is refused, so a typo never becomes a new database",
        )

    service = commands.add_parser(
        "service",
        help="run the REST data service",
        description="Run the REST data service. On every start it first brings its database to this version's "
        "schema (versioned migrations; a database of an earlier release is upgraded in place, once, however many "
        "services start on it at the same time); a database a newer release has upgraded is refused.",
    )
    service.add_argument("--host", help="address to bind (default 127.0.0.1)")
    service.add_argument("--port", type=int, help="port (default 8000)")
    db_flag(service)
    service.add_argument("--demo", action="store_true", help="fill an empty database with demo data first")
    service.add_argument(
        "--upgrade",
        action="store_true",
        help="only upgrade the database's schema (as every start does), say what was done, and exit: "
        "e.g. right after taking a backup, before starting the new version's services",
    )
    service.set_defaults(func=cmd_service)

    demo = commands.add_parser(
        "demo", help="run the data service (demo data while its database is empty) and the MCP server over HTTP"
    )
    demo.add_argument("--host", help="address to bind (default 127.0.0.1)")
    demo.add_argument("--port", type=int, help="data service port (default 8000)")
    demo.add_argument("--mcp-port", type=int, default=8001, help="MCP server port (default 8001)")
    db_flag(demo)
    demo.set_defaults(func=cmd_demo)

    serve = commands.add_parser("serve", help="run the MCP server (stdio by default, or Streamable HTTP)")
    serve.add_argument("--transport", choices=["stdio", "http"], help="stdio (default) or http")
    serve.add_argument("--host", help="HTTP: address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="HTTP: port (default 8001)")
    serve.add_argument(
        "--auth",
        choices=["sekolah", "jwt", "none"],
        help="HTTP: be the school's own sign-in (sekolah), require an external identity provider's JWTs (jwt), "
        "or neither (none: loopback only)",
    )
    serve.add_argument("--public-url", help="HTTP: this server's public URL, e.g. https://asrama.example.sch.id/mcp")
    serve.add_argument("--auth-issuer", help="HTTP: the identity provider's issuer (the tokens' iss)")
    serve.add_argument("--auth-jwks-url", help="HTTP: the identity provider's JWKS URL (signing keys)")
    serve.add_argument("--auth-public-key-file", help="HTTP: a PEM public key or certificate instead of a JWKS URL")
    serve.add_argument("--auth-scope-claim", help="HTTP: the token claim listing what its holder may see")
    serve.add_argument("--allowed-origins", help="HTTP: comma-separated browser origins allowed to call us")
    serve.set_defaults(func=cmd_serve)

    probe = commands.add_parser("probe", help="show the raw JSON-RPC of a session with a stdio MCP server")
    probe.add_argument("--legacy", action="store_true", help="open with initialize instead of server/discover")
    probe.add_argument("--call", nargs=2, action="append", metavar=("NAME", "JSON"), help="call a tool (repeatable)")
    probe.add_argument("--compact", action="store_true", help="one line per message")
    probe.add_argument("--server-log", action="store_true", help="show the server's stderr")
    probe.add_argument(
        "--tanya",
        nargs="?",
        const=True,
        choices=("y", "n"),
        metavar="y|n",
        help="answer the server's confirmations: ask on stderr and read y/N from stdin, or answer y or n for every one",
    )
    probe.add_argument("server_command", nargs=argparse.REMAINDER, help="-- COMMAND [ARGS...] of the server")
    probe.set_defaults(func=cmd_probe)

    claude = commands.add_parser("claude-config", help="print a claude_desktop_config.json block for this install")
    claude.add_argument("--name", default="asrama", help="server name in the config (default asrama)")
    claude.add_argument("--api-url", help="data service URL (default ASRAMA_API_URL or http://localhost:8000)")
    claude.add_argument("--with-token", action="store_true", help="include ASRAMA_API_TOKEN from the environment")
    claude.add_argument(
        "--writes", action="store_true", help="let the assistant record too (ASRAMA_WRITES=on; each write confirmed)"
    )
    claude.add_argument(
        "--db",
        metavar="PATH|URL",
        help="the database the data service serves, when not the default one: the server then reads that service's "
        "token from its file in the data folder (ASRAMA_API_TOKEN_FILE; the token itself is not in the block)",
    )
    claude.add_argument(
        "--remote",
        metavar="URL",
        help="instead, run the mcp-remote bridge (npx) in front of this HTTP MCP endpoint, sending a bearer token "
        "(https, or http to this machine only)",
    )
    claude.add_argument(
        "--token-env",
        metavar="VAR",
        help="with --remote: put the access token held in environment variable VAR into the block (default: a "
        "placeholder to fill in, so no secret is printed)",
    )
    claude.set_defaults(func=cmd_claude_config)

    importer = commands.add_parser(
        "import",
        help="import one kind of records (students, rooms, staff, violations, ...) from CSV or XLSX",
        description="Import one kind of records (the KIND below) into the database: every row is checked first,\n"
        "then all are written or none. A service or demo running on the same database shows them at once.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
    )
    importer.add_argument("-h", "--help", action=_HelpWithColumns)
    importer.add_argument(
        "kind",
        choices=IMPORT_KINDS,
        help="; ".join(f"{k}: {_KIND_HELP.get(k, 'its records (each row a new record)')}" for k in IMPORT_KINDS),
    )
    importer.add_argument("file", help="a .csv (comma, semicolon or tab; UTF-8) or .xlsx file with a header row")
    db_flag(importer)
    importer.add_argument(
        "--buat-kamar",
        action="store_true",
        help="anak: create the rooms the file names that do not exist, instead of refusing those rows",
    )
    importer.add_argument(
        "--ketat",
        action="store_true",
        help="refuse a file with columns that are not of the kind (default: ignore them with one warning)",
    )
    importer.set_defaults(func=cmd_import)
    pengurus.add_parser(commands, db_flag)
    backup.add_parser(commands, db_flag)

    files_help = "audit files, or folders meaning every *.jsonl in them (default ASRAMA_AUDIT_LOG)"
    audit = commands.add_parser("audit", help="check the disclosure audit log, or see who received a student's data")
    audit_commands = audit.add_subparsers(dest="audit_command", required=True)
    verify = audit_commands.add_parser(
        "verify", help="check each file's chain (and one file's anchors); names the first break"
    )
    verify.add_argument("file", nargs="*", help=files_help)
    verify.add_argument("--key", metavar="FILE", help="the key of a keyed (HMAC) log (default ASRAMA_AUDIT_KEY)")
    verify.add_argument(
        "--expect-head", metavar="SEQ:HASH", help="a head kept earlier: it must still be the last entry"
    )
    verify.add_argument(
        "--since", metavar="SEQ:HASH", action="append", default=[], help="an entry kept earlier must still be there"
    )
    who = audit_commands.add_parser("who-saw", help="who received a student's data, and when (JSON lines)")
    changed = audit_commands.add_parser(
        "who-changed", help="who changed a student's records, how it was confirmed, old → new (JSON lines)"
    )
    for lookup in (who, changed):
        lookup.add_argument("id_anak")
        lookup.add_argument("file", nargs="*", help=files_help)
    audit.set_defaults(func=cmd_audit)
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
    except MissingDatabase as exc:
        print(exc, file=sys.stderr)
        return 2
