"""Every reach into a private part of the MCP SDK or of uvicorn, each behind one small function.

The SDK offers no public hook for these; each function says what it relies on and the version it was checked on
(mcp 2.3.0, uvicorn 0.55.0), and `tests/test_sdk_seams.py` has a test per seam that fails when the SDK
changes it. `mcp` is pinned to the minor version checked here (pyproject.toml): moving on means checking each seam
again. Importing this module loads neither: a stdio server never loads uvicorn, the data service never loads `mcp`
(each seam imports what it reaches when it is used).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import uvicorn
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.server.connection import Connection
    from mcp.server.context import ServerMiddleware
    from mcp.server.lowlevel.server import Server
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.resolve import Resolve
    from mcp.server.request_state import RequestStateBoundary
    from mcp.server.session import ServerSession
    from mcp.shared.message import SessionMessage
    from mcp_types import InputRequiredResult

    Middleware = list[ServerMiddleware[Any]]


def _lowlevel(server: MCPServer[Any]) -> Server[Any]:
    """mcp 2.3.0: `MCPServer._lowlevel_server`, the low-level `Server` it builds in `__init__` and serves on."""
    return server._lowlevel_server


async def run_lowlevel(
    server: MCPServer[Any],
    read: MemoryObjectReceiveStream[SessionMessage | Exception],
    write: MemoryObjectSendStream[SessionMessage],
) -> None:
    """Serve `server` on a pair of streams, as `MCPServer.run_stdio_async` does on its own (mcp 2.3.0: its
    low-level `Server.run(read, write, create_initialization_options())`): lets a relay stand in front."""
    lowlevel = _lowlevel(server)
    await lowlevel.run(read, write, lowlevel.create_initialization_options())


def add_request_handler(server: MCPServer[Any], method: str, params_type: type[Any], handler: Any) -> None:
    """Serve a request method `MCPServer` does not (mcp 2.3.0: the low-level `Server.add_request_handler`, which also
    makes `initialize` advertise the capability the method belongs to, as `resources.subscribe`)."""
    _lowlevel(server).add_request_handler(method, params_type, handler)


def listen_closer(server: MCPServer[Any]) -> Callable[[], None] | None:
    """What ends every open `subscriptions/listen` stream gracefully (mcp 2.3.0: the `ListenHandler` the low-level
    server holds for that method, and its `close`), or None when listens are not served."""
    from mcp.server.subscriptions import ListenHandler

    entry = _lowlevel(server).get_request_handler("subscriptions/listen")
    return entry.handler.close if entry is not None and isinstance(entry.handler, ListenHandler) else None


def drop_output_validation(server: MCPServer[Any], name: str) -> None:
    """Stop validating tool `name`'s structuredContent against its output model, keeping its published outputSchema
    (mcp 2.3.0: `MCPServer._tool_manager.get_tool(name).fn_metadata.output_model`; `FuncMetadata` reads both the
    model and the schema live, and computes the schema once, when it is built)."""
    tool = server._tool_manager.get_tool(name)
    if tool is not None:
        tool.fn_metadata.output_model = None


def connection_of(session: ServerSession) -> Connection:
    """The connection a request's session belongs to (mcp 2.3.0: `ServerSession._connection`), whose `outbound`
    channel reaches the client between requests and whose `exit_stack` unwinds when it ends."""
    connection: Connection = session._connection
    return connection


def split_at_boundary(middleware: Middleware) -> tuple[Middleware, RequestStateBoundary, Middleware]:
    """`MCPServer.middleware` as (the SDK's built-ins before its `RequestStateBoundary`, the boundary, the rest):
    mcp 2.3.0 installs exactly one boundary, after OpenTelemetry and before the middleware given to it."""
    from mcp.server.request_state import RequestStateBoundary

    at = next(i for i, m in enumerate(middleware) if isinstance(m, RequestStateBoundary))
    boundary = middleware[at]
    assert isinstance(boundary, RequestStateBoundary)
    return middleware[:at], boundary, middleware[at + 1 :]


def boundary_verified(params: Any, sealed: str) -> bool:
    """Whether the `RequestStateBoundary` (in front) verified the `requestState` that arrived as `sealed`: mcp 2.3.0
    refuses a forged, expired or misbound state with -32602 and hands on only the plaintext it decoded from a
    verified one, which is never the sealed token itself."""
    return params is not None and params.get("requestState") != sealed


class Resolvers:
    """A tool's `Resolve` parameters (name -> (marker, whether it takes the whole `ElicitationResult`)), run by the
    tool's body itself, so that the body may also answer an `InputRequiredResult` of its own on a round where no
    resolver asks (mcp 2.3.0: `Tool.run` runs `resolve_arguments` over `build_resolver_plans` before the body and
    refuses a body that returns an `InputRequiredResult` when its signature has `Resolve` parameters; both functions
    are in `resolve.__all__`, and on a body's own round they never see its `requestState`)."""

    def __init__(self, parameters: Mapping[str, tuple[Resolve, bool]], arguments: set[str]) -> None:
        from mcp.server.mcpserver.resolve import build_resolver_plans

        self.parameters = dict(parameters)
        self.plans = build_resolver_plans(self.parameters, arguments)

    async def run(self, arguments: Mapping[str, Any], ctx: Context[Any, Any]) -> dict[str, Any] | InputRequiredResult:
        """The parameters' values, or the SDK's `InputRequiredResult` while a resolver still asks (2026-07-28)."""
        from mcp.server.mcpserver.resolve import resolve_arguments

        return await resolve_arguments(self.parameters, self.plans, arguments, ctx)


def quiet_uvicorn(config: uvicorn.Config) -> uvicorn.Server:
    """A uvicorn server that leaves SIGINT and SIGTERM to the process (uvicorn 0.55.0: `Server.serve` installs its
    handlers in `Server.capture_signals`, a context manager, overridden here to do nothing)."""
    import uvicorn

    class Quiet(uvicorn.Server):
        def capture_signals(self) -> Any:
            return nullcontext()

    return Quiet(config)


HEADERS, BODY, DONE = "headers", "body", "done"  # what a client is sending, as a limited protocol reports it


class Watch(Protocol):
    """What watches one connection of a limited protocol (`runtime.serving.Deadlines`)."""

    def reading(self, state: str, headers_begun: bool = True) -> None:
        """The client sends (or may begin) `state`: HEADERS, BODY or DONE; `headers_begun` is False at the end of a
        response, before the next request's first byte."""

    def stop(self) -> None:
        """The connection is lost."""


# Called once uvicorn has taken a new connection, with the number of the server's open connections (this one
# included); None: the connection is refused (the watcher answers and closes it) and is not watched.
Watcher = Callable[[asyncio.Transport, asyncio.AbstractEventLoop, int], Watch | None]


def limited_protocol(parser: str, watcher: Watcher) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol for `parser` ("h11" or "httptools"), telling `watcher` of each connection and what
    its client is sending, for uvicorn's `Config(http=...)`.

    uvicorn 0.55.0 has no hook for this (no header or body timeout; `limit_concurrency` answers 503 only once the
    headers are complete): this subclasses `uvicorn.protocols.http.h11_impl.H11Protocol` or
    `.httptools_impl.HttpToolsProtocol` and relies on their asyncio callbacks `connection_made`, `data_received` and
    `connection_lost`; `on_response_complete` (called at the end of each response, where the next request begins);
    h11's `self.conn` (the `h11.Connection`: `their_state` is IDLE while the client sends headers, SEND_BODY while it
    sends a body), httptools' parser callbacks `on_message_begin`, `on_headers_complete` and `on_message_complete`;
    `self.loop`; and `self.connections` (the server's `ServerState.connections`, to which `connection_made` adds)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class Limited(asyncio.Protocol):
        """Tells the watcher; put first among the bases, before uvicorn's protocol."""

        # Set by uvicorn's protocol.
        loop: asyncio.AbstractEventLoop
        connections: set[Any]
        _watch: Watch | None = None

        def _reading(self) -> str:
            raise NotImplementedError

        def _tell(self, headers_begun: bool = True) -> None:
            if self._watch is not None:
                self._watch.reading(self._reading(), headers_begun)

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._watch = watcher(transport, self.loop, len(self.connections))
            self._tell()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._tell()

        def on_response_complete(self) -> None:
            super().on_response_complete()  # type: ignore[misc]  # uvicorn's protocols have it, asyncio's has not
            self._tell(headers_begun=False)  # until the next request's first byte (uvicorn's keep-alive covers it)

        def connection_lost(self, exc: Exception | None) -> None:
            if self._watch is not None:
                self._watch.stop()
            super().connection_lost(exc)

    class LimitedH11(Limited, H11Protocol):
        def _reading(self) -> str:
            state = self.conn.their_state
            return HEADERS if state is h11.IDLE else BODY if state is h11.SEND_BODY else DONE

    class LimitedHttpTools(Limited, HttpToolsProtocol):
        _client = HEADERS

        def _reading(self) -> str:
            return self._client

        def on_message_begin(self) -> None:
            self._client = HEADERS
            super().on_message_begin()

        def on_headers_complete(self) -> None:
            self._client = BODY
            super().on_headers_complete()

        def on_message_complete(self) -> None:
            self._client = DONE
            super().on_message_complete()

        def on_response_complete(self) -> None:
            if self._client == DONE:  # no next request begun: wait for its head (timed from its first byte)
                self._client = HEADERS
            super().on_response_complete()

    return LimitedHttpTools if parser == "httptools" else LimitedH11
