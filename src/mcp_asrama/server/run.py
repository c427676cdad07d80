"""Starting the MCP server: over stdio, over HTTP, or beside the data service for the demo. Our uvicorn serving
(`serving`: its protocols and limits) is imported only for HTTP, so a stdio start never loads it."""

import logging
from typing import TYPE_CHECKING

import anyio

from mcp_asrama.config import is_loopback
from mcp_asrama.runtime import logs
from mcp_asrama.runtime.stack import Stack
from mcp_asrama.server.app import build_server
from mcp_asrama.server.asrama_server import AsramaServer
from mcp_asrama.server.guard.chain import HEALTH_PATHS
from mcp_asrama.server.guard.limits_storage import MEMORY
from mcp_asrama.server.settings import ServerSettings
from mcp_asrama.server.transport import MCP_PATH, http_app, serve_stdio

if TYPE_CHECKING:
    import uvicorn

log = logging.getLogger(__name__)


class UnsafeBind(ValueError):
    """Serving children's data beyond this machine needs authentication, which this configuration lacks."""


def check_bind(settings: ServerSettings) -> None:
    """Refuse an HTTP bind that other machines could reach unless bearer tokens are required (ServerSettings
    refuses it too; this guards settings built without validation)."""
    if settings.transport == "http" and settings.auth == "none" and not is_loopback(settings.mcp_host):
        raise UnsafeBind(
            f"refusing to serve MCP over HTTP on {settings.mcp_host} without authentication: set ASRAMA_AUTH=sekolah "
            "(--auth sekolah) or ASRAMA_AUTH=jwt (--auth jwt), or bind 127.0.0.1"
        )


def warn_unshared_claims(settings: ServerSettings) -> None:
    """One warning when ASRAMA_STATE_KEYS is set (shared keys mean replicas finishing each other's confirmations)
    but confirmations are claimed in this process's memory: each could then be used once per replica."""
    if settings.state_keys and settings.confirm_storage == MEMORY:
        log.warning(
            "ASRAMA_STATE_KEYS is set but confirmations are claimed in memory: with several replicas each "
            "confirmation can be used once per replica; set ASRAMA_CONFIRM_STORAGE to a Redis they all share",
            extra={"confirm_storage": MEMORY},
        )


def name_resources_in_logs(server: AsramaServer) -> None:
    """The SDK's log records show the server's resource URIs and URI templates, never a concrete URI's values."""

    async def listed() -> list[str]:
        static = [str(resource.uri) for resource in await server.list_resources()]
        return static + [template.uri_template for template in await server.list_resource_templates()]

    logs.name_uri_templates(anyio.run(listed))


def http_server(server: AsramaServer, settings: ServerSettings, stack: Stack | None = None) -> "uvicorn.Server":
    """The Streamable HTTP app under uvicorn with the connection limits of `settings`, on the HTTP parser of
    `stack` (default: from the environment)."""
    from mcp_asrama.runtime import serving

    name_resources_in_logs(server)
    app = http_app(server, settings)
    return serving.make_server(
        app,
        settings.mcp_host,
        settings.mcp_port,
        settings,
        plain_paths=HEALTH_PATHS,
        closing=server.close_listens,
        stack=stack,
    )


def serve(settings: ServerSettings) -> None:
    """Serve until stdin closes (stdio) or until interrupted (HTTP)."""
    check_bind(settings)
    stack = Stack()  # ASRAMA_HTTP, ASRAMA_LOOP: refused before anything starts
    server = build_server(settings)
    warn_unshared_claims(settings)
    log.info("mcp server starting", extra={"transport": settings.transport, "api_url": settings.base_url})
    if settings.transport == "stdio":
        name_resources_in_logs(server)
        anyio.run(serve_stdio, server, backend_options=stack.backend_options())
        return
    from mcp_asrama.runtime import serving

    url = f"http://{settings.mcp_host}:{settings.mcp_port}{MCP_PATH}"
    serving.run(
        http_server(server, settings, stack),
        ready=lambda: log.info("mcp endpoint", extra={"url": url, "auth": settings.auth}),
        stack=stack,
    )
