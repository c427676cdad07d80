"""Serving the MCP server: stdio (the host starts us as a subprocess) or stateless Streamable HTTP at /mcp."""

import logging

import anyio
import uvicorn
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, JSONRPCNotification
from mcp_types.methods import SPEC_CLIENT_METHODS
from pydantic import ValidationError
from starlette.applications import Starlette

from mcp_asrama.server.core import AsramaServer

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"


def _rejection(problem: Exception | None) -> SessionMessage:
    """-32700 for a line that is not JSON, -32600 for JSON that is not a valid request."""
    if isinstance(problem, ValidationError) and any(e["type"] == "json_invalid" for e in problem.errors()):
        error = ErrorData(code=PARSE_ERROR, message="Parse error")
    else:
        error = ErrorData(code=INVALID_REQUEST, message="Invalid Request")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error))


async def serve_stdio(server: AsramaServer) -> None:
    """Serve on stdin/stdout until stdin closes; malformed lines are answered instead of silently dropped.

    The SDK drops such lines without a reply, and offers no hook for it: a relay between its stdio transport
    and its low-level server answers them (the low-level server is reached through a private attribute).
    """
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read_stream, write_stream):
        relay_send, relay_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay() -> None:
            async with relay_send:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        log.info("answered a malformed stdin line", extra={"problem": type(item).__name__})
                        await write_stream.send(_rejection(item))
                    elif isinstance(item.message, JSONRPCNotification) and item.message.method in SPEC_CLIENT_METHODS:
                        # A request without a usable id ("id": null) parses as a notification: answer it.
                        await write_stream.send(_rejection(None))
                    else:
                        await relay_send.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(relay)
            await lowlevel.run(relay_receive, write_stream, lowlevel.create_initialization_options())


def http_app(server: AsramaServer, host: str) -> Starlette:
    """The stateless Streamable HTTP app (JSON responses), with Host and Origin checked for loopback use."""
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
    return server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=security,
        host=host,
    )


def serve_http(server: AsramaServer, host: str, port: int) -> None:
    """Serve Streamable HTTP with uvicorn until interrupted."""
    uvicorn.run(http_app(server, host), host=host, port=port, log_config=None)
