"""One test per seam of `sdk_seams` (and per uvicorn internal `limited_protocol` relies on): each fails when the SDK
or uvicorn changes what the seam relies on, so that moving the pin in pyproject.toml shows what to check again."""

import asyncio
import inspect
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated, Any

import anyio
import h11
import pytest
import uvicorn
from mcp import Client
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import AcceptedElicitation, Elicit, Resolve
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import (
    CallToolResult,
    ElicitRequest,
    ElicitRequestURLParams,
    ElicitResult,
    EmptyResult,
    InputRequiredResult,
    JSONRPCRequest,
    JSONRPCResponse,
    SubscribeRequestParams,
    TextContent,
)
from pydantic import BaseModel, model_validator
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from mcp_asrama import sdk_seams

pytestmark = pytest.mark.anyio


def bare() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("seams", version="0")

    @server.tool()
    def halo() -> str:
        return "halo"

    return server


async def test_run_lowlevel_serves_the_server_on_the_streams_given() -> None:
    server = bare()
    to_server, server_reads = anyio.create_memory_object_stream[SessionMessage | Exception](4)
    server_writes, from_server = anyio.create_memory_object_stream[SessionMessage](4)
    initialize = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    async with to_server, server_reads, server_writes, from_server, anyio.create_task_group() as tasks:
        tasks.start_soon(sdk_seams.run_lowlevel, server, server_reads, server_writes)
        request = JSONRPCRequest(jsonrpc="2.0", id=1, method="initialize", params=initialize)
        await to_server.send(SessionMessage(request))
        with anyio.fail_after(5):
            answer = await from_server.receive()
        await to_server.aclose()
    assert isinstance(answer.message, JSONRPCResponse)
    assert answer.message.result["serverInfo"]["name"] == "seams"


async def test_add_request_handler_serves_a_method_and_advertises_its_capability() -> None:
    server = bare()
    subscribed: list[str] = []

    async def subscribe(ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams) -> EmptyResult:
        subscribed.append(str(params.uri))
        return EmptyResult()

    sdk_seams.add_request_handler(server, "resources/subscribe", SubscribeRequestParams, subscribe)
    async with Client(server, mode="legacy", cache=None) as client:
        assert client.server_capabilities.resources is not None
        assert client.server_capabilities.resources.subscribe is True
        with pytest.warns(Warning):  # the SDK marks handshake-era subscriptions deprecated
            await client.subscribe_resource("asrama://x")
    assert subscribed == ["asrama://x"]


def test_listen_closer_is_the_listen_handlers_close_or_none() -> None:
    closer = sdk_seams.listen_closer(bare())
    assert callable(closer)
    closer()  # nothing open: closing is harmless
    assert sdk_seams.listen_closer(MCPServer("quiet", version="0", subscriptions=False)) is None


VALIDATED: list[object] = []


class Halo(BaseModel):
    kata: str

    @model_validator(mode="before")
    @classmethod
    def counted(cls, data: object) -> object:
        VALIDATED.append(data)
        return data


async def test_drop_output_validation_keeps_the_schema_and_stops_validating() -> None:
    server = bare()

    @server.tool()
    def built() -> Annotated[CallToolResult, Halo]:
        return CallToolResult(content=[TextContent(type="text", text="{}")], structured_content={"kata": "halo"})

    VALIDATED.clear()
    async with Client(server, mode="legacy", cache=None) as client:
        assert (await client.call_tool("built", {})).is_error is False
    assert VALIDATED == [{"kata": "halo"}]  # the SDK validates it again: the seam has a job to do
    sdk_seams.drop_output_validation(server, "built")
    async with Client(server, mode="legacy", cache=None) as client:
        result = await client.call_tool("built", {})
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert VALIDATED == [{"kata": "halo"}]
    assert result.structured_content == {"kata": "halo"}
    assert listed["built"].output_schema is not None
    assert listed["built"].output_schema["required"] == ["kata"]


async def test_connection_of_is_the_sessions_connection() -> None:
    server = bare()
    seen: list[Connection] = []

    @server.tool()
    def siapa(ctx: Context[Any, Any]) -> str:
        seen.append(sdk_seams.connection_of(ctx.request_context.session))
        return "ok"

    async with Client(server, mode="legacy", cache=None) as client:
        await client.call_tool("siapa", {})
        await client.call_tool("siapa", {})
    assert isinstance(seen[0], Connection)
    assert seen[0] is seen[1]  # one connection for the session's lifetime
    assert hasattr(seen[0], "outbound") and hasattr(seen[0], "exit_stack")


def test_split_at_boundary_finds_the_one_boundary_between_builtins_and_the_given_middleware() -> None:
    async def given(ctx: Any, call_next: Any) -> Any:
        return await call_next(ctx)

    server = MCPServer("seams", version="0", middleware=[given])
    builtins, boundary, rest = sdk_seams.split_at_boundary(server.middleware)
    assert isinstance(boundary, RequestStateBoundary)
    assert [type(m).__name__ for m in builtins] == ["OpenTelemetryMiddleware"]
    assert rest == [given]


async def test_the_boundary_hands_on_the_decoded_state_only_for_a_verified_token() -> None:
    boundary = RequestStateBoundary(RequestStateSecurity.ephemeral(), default_audience="seams")
    params = {"name": "catat", "arguments": {"id_anak": "A001"}}

    def ctx(**extra: Any) -> ServerRequestContext[Any, Any]:
        return ServerRequestContext(
            session=None,  # type: ignore[arg-type]  # the boundary never touches it
            lifespan_context=None,
            protocol_version="2026-07-28",
            method="tools/call",
            params={**params, **extra},
        )

    async def ask(_ctx: Any) -> Any:
        return {"resultType": "input_required", "requestState": "plain"}

    sealed = (await boundary(ctx(), ask))["requestState"]
    handed: list[Any] = []

    async def tool(inner: ServerRequestContext[Any, Any]) -> Any:
        handed.append(inner.params)
        return {}

    await boundary(ctx(requestState=sealed), tool)
    assert handed[0]["requestState"] == "plain"
    assert sdk_seams.boundary_verified(handed[0], sealed)
    assert not sdk_seams.boundary_verified({"requestState": sealed}, sealed)  # what an unverified one looks like
    with pytest.raises(MCPError):  # a forged one never reaches the tool
        await boundary(ctx(requestState=sealed[:-4] + "AAAA"), tool)
    assert len(handed) == 1


class Ja(BaseModel):
    ja: bool


async def test_resolvers_run_by_the_body_ask_through_the_sdk_and_leave_the_body_its_own_round() -> None:
    server = bare()

    async def ditanya(kata: str) -> Elicit[Ja]:
        return Elicit(f"Setuju {kata}?", Ja)

    resolvers = sdk_seams.Resolvers({"jawaban": (Resolve(ditanya), True)}, {"kata"})

    @server.tool()
    async def tanya(ctx: Context[Any, Any], kata: str) -> CallToolResult | InputRequiredResult:
        if ctx.request_state == "milik-tubuh":  # the body's own round: the resolvers are not run
            answer = (ctx.input_responses or {}).get("tubuh")
            assert isinstance(answer, ElicitResult)
            return CallToolResult(content=[TextContent(type="text", text=f"tubuh {answer.action}")])
        resolved = await resolvers.run({"kata": kata}, ctx)
        if isinstance(resolved, InputRequiredResult):
            return resolved
        jawaban = resolved["jawaban"]
        if not (isinstance(jawaban, AcceptedElicitation) and jawaban.data.ja):
            return CallToolResult(content=[TextContent(type="text", text="tidak")])
        url = ElicitRequestURLParams(message="Buka", url="https://contoh.test/u/1", elicitation_id="u1")
        return InputRequiredResult(input_requests={"tubuh": ElicitRequest(params=url)}, request_state="milik-tubuh")

    asked: list[str] = []

    async def person(_ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.url if isinstance(params, ElicitRequestURLParams) else params.message)
        return ElicitResult(
            action="accept", content=None if isinstance(params, ElicitRequestURLParams) else {"ja": True}
        )

    async with Client(server, mode="2026-07-28", cache=None, elicitation_callback=person) as client:
        result = await client.call_tool("tanya", {"kata": "halo"})
    assert asked == ["Setuju halo?", "https://contoh.test/u/1"]
    assert isinstance(result.content[0], TextContent) and result.content[0].text == "tubuh accept"


def test_quiet_uvicorn_leaves_the_signals_that_uvicorn_takes_in_capture_signals() -> None:
    config = uvicorn.Config(app=None, log_config=None)
    assert "self.capture_signals()" in inspect.getsource(uvicorn.Server.serve)
    before = signal.getsignal(signal.SIGINT)
    with uvicorn.Server(config).capture_signals():
        assert signal.getsignal(signal.SIGINT) is not before  # what the seam stops
    with sdk_seams.quiet_uvicorn(config).capture_signals():
        assert signal.getsignal(signal.SIGINT) is before
    assert signal.getsignal(signal.SIGINT) is before


# --- uvicorn internals `sdk_seams.limited_protocol` relies on (see its docstring) -----------------------------------


@pytest.mark.parametrize("protocol", [H11Protocol, HttpToolsProtocol])
def test_uvicorn_protocols_have_the_callbacks_serving_overrides(protocol: type) -> None:
    for name in ("connection_made", "data_received", "connection_lost", "on_response_complete"):
        assert callable(getattr(protocol, name, None)), name
    if protocol is HttpToolsProtocol:
        for name in ("on_message_begin", "on_headers_complete", "on_message_complete"):
            assert callable(getattr(protocol, name, None)), name


def test_uvicorn_protocols_keep_their_loop_conn_and_the_servers_connections() -> None:
    config = uvicorn.Config(app=lambda *_: None, log_config=None)
    state = ServerState()
    loop = asyncio.new_event_loop()
    try:
        h11_protocol = H11Protocol(config, state, {}, _loop=loop)
        tools_protocol = HttpToolsProtocol(config, state, {}, _loop=loop)
    finally:
        loop.close()
    for protocol in (h11_protocol, tools_protocol):
        assert protocol.loop is loop
        assert protocol.connections is state.connections
    assert isinstance(h11_protocol.conn, h11.Connection)
    assert h11_protocol.conn.their_state is h11.IDLE


class Seen:
    """A watcher of every connection of a limited protocol, recording what it is told."""

    def __init__(self) -> None:
        self.opened: list[int] = []
        self.told: list[tuple[str, bool]] = []
        self.stopped = 0

    def watcher(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop, open_connections: int) -> "Seen":
        assert loop is asyncio.get_running_loop() and not transport.is_closing()
        self.opened.append(open_connections)
        return self

    def reading(self, state: str, headers_begun: bool = True) -> None:
        self.told.append((state, headers_begun))

    def stop(self) -> None:
        self.stopped += 1


async def until(done: Any) -> None:
    with anyio.fail_after(5):
        while not done():
            await anyio.sleep(0.01)


async def echo_ok(scope: Any, receive: Any, send: Any) -> None:
    while (await receive()).get("more_body"):
        pass
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@asynccontextmanager
async def served(protocol: type[asyncio.Protocol]) -> AsyncIterator[int]:
    """A uvicorn server on `protocol` in this loop, stopped (not cancelled) even when a test fails; yields its port."""
    config = uvicorn.Config(
        echo_ok, host="127.0.0.1", port=0, http=protocol, lifespan="off", log_config=None, timeout_graceful_shutdown=5
    )
    server = sdk_seams.quiet_uvicorn(config)

    async def serve() -> None:
        with anyio.CancelScope(shield=True):
            await server.serve()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(serve)
        try:
            await until(lambda: server.started)
            yield server.servers[0].sockets[0].getsockname()[1]
        finally:
            server.should_exit = True


@pytest.mark.parametrize("parser", ["h11", "httptools"])
async def test_limited_protocol_tells_the_watcher_what_each_client_sends(parser: str) -> None:
    seen = Seen()
    protocol = sdk_seams.limited_protocol(parser, seen.watcher)
    assert issubclass(protocol, H11Protocol if parser == "h11" else HttpToolsProtocol)
    async with served(protocol) as port:
        async with await anyio.connect_tcp("127.0.0.1", port) as client:
            await until(lambda: seen.told)
            assert seen.opened == [1] and seen.told == [(sdk_seams.HEADERS, True)]
            steps = [
                (b"POST / HTTP/1.1\r\nhost: x\r\n", sdk_seams.HEADERS),
                (b"content-length: 4\r\n\r\n", sdk_seams.BODY),
                (b"ab", sdk_seams.BODY),
                (b"cd", sdk_seams.DONE),
            ]
            for data, state in steps:
                told = len(seen.told)
                await client.send(data)
                await until(lambda told=told: len(seen.told) > told)
                assert seen.told[told] == (state, True), data
            with anyio.fail_after(5):
                assert (await client.receive()).endswith(b"ok")
            await until(lambda: seen.told[-1][1] is False)
            assert seen.told[-1] == (sdk_seams.HEADERS, False)  # the response's end: the next request may begin
            async with await anyio.connect_tcp("127.0.0.1", port):
                await until(lambda: len(seen.opened) == 2)
                assert seen.opened == [1, 2]
        await until(lambda: seen.stopped == 2)


def test_the_seams_load_neither_sdk_and_the_data_service_never_loads_mcp() -> None:
    script = (
        "import sys, mcp_asrama.sdk_seams; print('mcp' in sys.modules, 'uvicorn' in sys.modules); "
        "import mcp_asrama.runtime.starters, mcp_asrama.runtime.serving, mcp_asrama.service.app; "
        "print('mcp' in sys.modules, 'uvicorn' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["False", "False", "False", "True"]
