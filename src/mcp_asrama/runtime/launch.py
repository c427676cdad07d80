"""Starting the product's processes: the data service alone, or the demo (service + MCP server over HTTP).

The MCP server's modules (the SDK, rate limits, auth) are imported only by the demo: the data service alone does
not carry them (about 30 MiB of its memory, bench/memory.py).
"""

import sys
from datetime import date
from typing import TYPE_CHECKING

from fastapi import FastAPI

from mcp_asrama.config import TOKEN_FILE, ServiceSettings, data_dir
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


def prepare_service(settings: ServiceSettings, demo: bool) -> FastAPI:
    """The service app on its database (demo data added to an empty one when asked), with start-up notes."""
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
        found = settings.service_token_file == data_dir() / TOKEN_FILE
        use = "your MCP servers on this machine use it by themselves" if found else "pass it as ASRAMA_API_TOKEN"
        _note(f"service token: kept in {settings.service_token_file} (readable by you only); {use}")
    return app


def _service_running(settings: ServiceSettings) -> None:
    _note(f"service: http://{settings.host}:{settings.port} (API docs at /docs: any user name, the token as password)")


def run_service(settings: ServiceSettings, demo: bool) -> None:
    """Serve the data service until interrupted."""
    stack = Stack()  # ASRAMA_HTTP, ASRAMA_LOOP: refused before the database is opened
    app = prepare_service(settings, demo)
    server = serving.make_server(app, settings.host, settings.port, settings, stack=stack)
    serving.run(server, ready=lambda: _service_running(settings), stack=stack, data_service=True)


def connect_help(service_url: str, mcp_url: str) -> str:
    """How to reach the demo: every command as it is typed from here (`mcp-asrama` may not be on PATH)."""
    from mcp_asrama.server.transport import MCP_PATH

    command = shown()
    inspector = f'make inspector ARGS="--cli {mcp_url} --transport http'
    health = mcp_url.removesuffix(MCP_PATH) + "/healthz"
    return f"""
mcp-asrama demo is running (protocol 2026-07-28, and 2024-11-05 to 2025-11-25 for hosts that send initialize)
  data service : {service_url}  (check: {service_url}/healthz; API docs: {service_url}/docs)
  MCP server   : {mcp_url}  (Streamable HTTP, stateless; no token needed on this machine; check: {health})

MCP Inspector, from the project folder (installs Node and the Inspector on first use):
  {inspector} --method tools/list"
  {inspector} --method tools/call --tool-name cari_anak --tool-arg kelas=7A"
Claude Desktop (stdio; the host starts the server itself): paste the output of
  {command} claude-config --api-url {service_url}
into claude_desktop_config.json, then restart Claude Desktop.
Raw JSON-RPC of a session:
  ASRAMA_API_URL={service_url} {command} probe -- {command} serve
Your own students (CSV or XLSX; the columns: {command} import --help):
  {command} import anak siswa.csv
Press Ctrl+C to stop.
"""


def run_demo(service: ServiceSettings, server: "ServerSettings") -> None:
    """The data service with demo data and the MCP server over HTTP, in one process, until interrupted."""
    from mcp_asrama.server.app import build_server
    from mcp_asrama.server.run import check_bind, http_server
    from mcp_asrama.server.transport import MCP_PATH

    check_bind(server)
    stack = Stack()
    app = prepare_service(service, demo=True)
    mcp = build_server(server)

    def ready() -> None:
        _service_running(service)
        print(connect_help(server.base_url, f"http://{server.mcp_host}:{server.mcp_port}{MCP_PATH}"), flush=True)

    service_server = serving.make_server(app, service.host, service.port, service, stack=stack)
    serving.run(service_server, http_server(mcp, server, stack), ready=ready, stack=stack, data_service=True)
