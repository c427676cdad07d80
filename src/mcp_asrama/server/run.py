"""Starting the MCP server: over stdio, over HTTP, or beside the data service for the demo."""

import logging
from typing import Any

import anyio
import uvicorn

from mcp_asrama.config import is_loopback
from mcp_asrama.server.app import build_server
from mcp_asrama.server.settings import ServerSettings
from mcp_asrama.server.transport import MCP_PATH, http_app, serve_stdio

log = logging.getLogger(__name__)


class UnsafeBind(ValueError):
    """Serving children's data beyond this machine needs authentication, which this configuration lacks."""


def check_bind(settings: ServerSettings) -> None:
    """Refuse an HTTP bind that other machines could reach unless bearer tokens are required (ServerSettings
    refuses it too; this guards settings built without validation)."""
    if settings.transport == "http" and settings.auth == "none" and not is_loopback(settings.mcp_host):
        raise UnsafeBind(
            f"refusing to serve MCP over HTTP on {settings.mcp_host} without authentication: set ASRAMA_AUTH=jwt "
            "(--auth jwt) or bind 127.0.0.1"
        )


def serve(settings: ServerSettings) -> None:
    """Serve until stdin closes (stdio) or until interrupted (HTTP)."""
    check_bind(settings)
    server = build_server(settings)
    log.info("mcp server starting", extra={"transport": settings.transport, "api_url": settings.base_url})
    if settings.transport == "stdio":
        anyio.run(serve_stdio, server)
        return
    log.info(
        "mcp endpoint",
        extra={"url": f"http://{settings.mcp_host}:{settings.mcp_port}{MCP_PATH}", "auth": settings.auth},
    )
    uvicorn.run(http_app(server, settings), host=settings.mcp_host, port=settings.mcp_port, log_config=None)


async def serve_together(*apps: tuple[Any, str, int]) -> None:
    """Run several ASGI apps on their own ports in one event loop, until interrupted."""
    servers = [uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_config=None)) for app, host, port in apps]
    async with anyio.create_task_group() as tasks:
        for server in servers:
            tasks.start_soon(server.serve)
