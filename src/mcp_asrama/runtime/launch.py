"""Starting the product's processes: the data service alone, or the demo (service + MCP server over HTTP).

The MCP server's modules (the SDK, rate limits, auth) are imported only by the demo: the data service alone does
not carry them (about 30 MiB of its memory, bench/memory.py).
"""

import shlex
import sys
from datetime import date
from typing import TYPE_CHECKING

from fastapi import FastAPI

from mcp_asrama.config import TOKEN_FILE, DatabaseSettings, ServiceSettings, data_dir, sqlite_file
from mcp_asrama.runtime import serving
from mcp_asrama.runtime.invocation import shown
from mcp_asrama.runtime.stack import Stack
from mcp_asrama.service.app import create_app
from mcp_asrama.service.db import describe
from mcp_asrama.service.demo import seed_demo

if TYPE_CHECKING:
    from mcp_asrama.server.settings import ServerSettings


def _note(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def prepare_service(settings: ServiceSettings, demo: bool, banner: bool = False) -> FastAPI:
    """The service app on its database (demo data added to an empty one when asked), with start-up notes (how an
    MCP server gets its token: unless the `banner` printed once it is up says it)."""
    app = create_app(settings)
    _note(f"database: {describe(settings.db_url)}")
    if demo:
        filled = seed_demo(app.state.sessions, date.today())
        _note(
            "demo data: "
            + (
                "created (a fictional school; what you import goes into this same database, "
                "start on a new --db to serve only your own)"
                if filled
                else "database already has data, left as it is"
            )
        )
    if settings.service_token_file is not None:
        kept = f"service token: kept in {settings.service_token_file} (readable by you only); "
        _, flags = token_access(settings)
        if not flags:
            _note(kept + "your MCP servers on this machine use it by themselves")
        elif banner:
            _note(kept + "the lines below say how an MCP server on this machine reads it")
        else:
            claude = f"{shown()} claude-config --api-url {service_url(settings)}{flags}"
            _note(kept + f"an MCP server here reads it from ASRAMA_API_TOKEN_FILE (Claude Desktop: {claude})")
    return app


def service_url(settings: ServiceSettings) -> str:
    """The data service's URL on this machine."""
    host = f"[{settings.host}]" if ":" in settings.host else settings.host
    return f"http://{host}:{settings.port}"


def shown_database(db_url: str) -> str:
    """`db_url` as typed after --db: a SQLite file's path, else the URL without its password (quoted for a shell)."""
    from sqlalchemy.engine import make_url

    path = sqlite_file(db_url)
    text = str(path) if path is not None else make_url(db_url).set(password=None).render_as_string(False)
    return shlex.quote(text)


def database_flag(db_url: str) -> str:
    """` --db …` for a command typed here to use `db_url`; empty when it uses that database without it."""
    default = DatabaseSettings().db_url  # ASRAMA_DB_URL, else the default file
    path = sqlite_file(db_url)
    same = db_url == default or (path is not None and path == sqlite_file(default))
    return "" if same else f" --db {shown_database(db_url)}"


def token_access(settings: ServiceSettings) -> tuple[str, str]:
    """How an MCP server typed here gets the service's token: the environment in front of the command (a
    server's, `probe`'s or `claude-config`'s) and claude-config's flags. Nothing for the default database's."""
    file = settings.service_token_file
    if file is None:  # ASRAMA_SERVICE_TOKEN
        return 'ASRAMA_API_TOKEN="$ASRAMA_SERVICE_TOKEN" ', " --with-token"
    if file == data_dir() / TOKEN_FILE:
        return "", ""
    return f"ASRAMA_API_TOKEN_FILE={shlex.quote(str(file))} ", f" --db {shown_database(settings.db_url)}"


def _service_running(settings: ServiceSettings) -> None:
    _note(f"service: {service_url(settings)} (API docs at /docs: any user name, the token as password)")


def run_service(settings: ServiceSettings, demo: bool) -> None:
    """Serve the data service until interrupted."""
    stack = Stack()  # ASRAMA_HTTP, ASRAMA_LOOP: refused before the database is opened
    app = prepare_service(settings, demo)
    server = serving.make_server(app, settings.host, settings.port, settings, stack=stack)
    serving.run(server, ready=lambda: _service_running(settings), stack=stack, data_service=True)


def connect_help(service: ServiceSettings, server: "ServerSettings", mcp_url: str) -> str:
    """How to reach the demo: every command as it is typed from here (`mcp-asrama` may not be on PATH), for the
    database it serves (its --db, its token) and saying whether writes are on."""
    from mcp_asrama.server.transport import MCP_PATH

    command = shown()
    service_url = server.base_url
    inspector = f'make inspector ARGS="--cli {mcp_url} --transport http'
    health = mcp_url.removesuffix(MCP_PATH) + "/healthz"
    prefix, flags = token_access(service)
    with_prefix = prefix if flags == " --with-token" else ""  # claude-config reads ASRAMA_API_TOKEN itself
    claude = f"{with_prefix}{command} claude-config --api-url {service_url}{flags}"
    if server.writes:
        writes = "on (ASRAMA_WRITES=on): the assistant may also record, each write confirmed by a person first"
        claude += " --writes"
    else:
        writes = (
            "off: the assistant only reads. To let it record (each write confirmed by a person first), start the "
            "demo with ASRAMA_WRITES=on in front of it, and add --writes to claude-config"
        )
    db = database_flag(service.db_url)
    return f"""
mcp-asrama demo is running (protocol 2026-07-28, and 2024-11-05 to 2025-11-25 for hosts that send initialize)
  data service : {service_url}  (check: {service_url}/healthz; API docs: {service_url}/docs)
  MCP server   : {mcp_url}  (Streamable HTTP, stateless; no token needed on this machine; check: {health})
  database     : {describe(service.db_url)}
  writes       : {writes}

MCP Inspector, from the project folder (installs Node and the Inspector on first use):
  {inspector} --method tools/list"
  {inspector} --method tools/call --tool-name cari_anak --tool-arg kelas=7A"
Claude Desktop (stdio; the host starts the server itself): paste the output of
  {claude}
into claude_desktop_config.json, then restart Claude Desktop.
Raw JSON-RPC of a session:
  {prefix}ASRAMA_API_URL={service_url} {command} probe -- {command} serve
Your own students (CSV or XLSX; the columns: {command} import --help):
  {command} import anak siswa.csv{db}
Press Ctrl+C to stop.
"""


def run_demo(service: ServiceSettings, server: "ServerSettings") -> None:
    """The data service with demo data and the MCP server over HTTP, in one process, until interrupted."""
    from mcp_asrama.server.app import build_server
    from mcp_asrama.server.run import check_bind, http_server
    from mcp_asrama.server.transport import MCP_PATH

    check_bind(server)
    stack = Stack()
    app = prepare_service(service, demo=True, banner=True)
    mcp = build_server(server)

    def ready() -> None:
        _service_running(service)
        print(connect_help(service, server, f"http://{server.mcp_host}:{server.mcp_port}{MCP_PATH}"), flush=True)

    service_server = serving.make_server(app, service.host, service.port, service, stack=stack)
    serving.run(service_server, http_server(mcp, server, stack), ready=ready, stack=stack, data_service=True)
