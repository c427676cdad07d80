"""`mcp-asrama probe`: a short session with any stdio MCP server, printing every raw JSON-RPC message.

The SDK's client does the protocol (discover or initialize, then the requests); a relay between it and the
SDK's stdio transport prints each message as it crosses, in the wire's own serialization.
"""

import json
import os
import shutil
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, TextIO

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import Implementation

from mcp_asrama import __version__
from mcp_asrama.runtime.invocation import resolve


def wire_json(message: SessionMessage) -> str:
    """A message as the stdio transport writes it."""
    return message.message.model_dump_json(by_alias=True, exclude_unset=True)


class Printer:
    """Prints each message with its direction, pretty (default) or one line each."""

    def __init__(self, out: TextIO, compact: bool) -> None:
        self.out, self.compact = out, compact

    def __call__(self, direction: str, message: SessionMessage | Exception) -> None:
        if isinstance(message, Exception):
            print(f"{direction} (unreadable message: {type(message).__name__})", file=self.out, flush=True)
            return
        data = json.loads(wire_json(message))
        text = json.dumps(
            data,
            ensure_ascii=False,
            separators=(",", ":") if self.compact else None,
            indent=None if self.compact else 2,
        )
        print(f"{direction} {text}" if self.compact else f"{direction}\n{text}", file=self.out, flush=True)


@asynccontextmanager
async def recording_stdio(
    params: StdioServerParameters, show: Printer, errlog: TextIO
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
]:
    """The SDK's stdio transport with every message in both directions shown."""
    async with stdio_client(params, errlog=errlog) as (server_read, server_write), anyio.create_task_group() as tasks:
        to_client_send, to_client_receive = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        to_server_send, to_server_receive = anyio.create_memory_object_stream[SessionMessage](16)

        async def from_server() -> None:
            async with to_client_send:
                async for message in server_read:
                    show("<<< server", message)
                    await to_client_send.send(message)

        async def to_server() -> None:
            async for message in to_server_receive:
                show(">>> client", message)
                await server_write.send(message)

        tasks.start_soon(from_server)
        tasks.start_soon(to_server)
        try:
            yield to_client_receive, to_server_send
        finally:
            tasks.cancel_scope.cancel()


async def run_probe(
    command: Sequence[str],
    *,
    legacy: bool,
    calls: Sequence[tuple[str, dict[str, Any]]],
    out: TextIO,
    compact: bool = False,
    server_log: bool = False,
) -> int:
    """Open a session, list everything, make the calls; 0 when the session worked, 1 otherwise."""
    show = Printer(out, compact)
    command = resolve(list(command))
    if shutil.which(command[0]) is None:
        print(f"probe: cannot start {command[0]}: no such program (give its path)", file=sys.stderr)
        return 1
    params = StdioServerParameters(command=command[0], args=list(command[1:]), env=dict(os.environ))
    errlog = sys.stderr if server_log else open(os.devnull, "w")  # noqa: SIM115 - closed below
    try:
        async with Client(
            recording_stdio(params, show, errlog),
            mode="legacy" if legacy else "auto",
            cache=None,
            client_info=Implementation(name="mcp-asrama-probe", version=__version__),
        ) as client:
            for step in (client.list_tools, client.list_resources, client.list_prompts):
                await _guarded(step(), out)
            for name, arguments in calls:
                await _guarded(client.call_tool(name, arguments), out)
    except (OSError, MCPError, anyio.BrokenResourceError, anyio.EndOfStream, ExceptionGroup) as exc:
        cause = _first_leaf(exc)
        print(f"probe: session failed: {type(cause).__name__}: {cause}", file=sys.stderr)
        return 1
    finally:
        if errlog is not sys.stderr:
            errlog.close()
    return 0


def _first_leaf(exc: BaseException) -> BaseException:
    """The first real exception inside task-group wrappers."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


async def _guarded(step: Any, out: TextIO) -> None:
    """Run one request; a JSON-RPC error is already printed as it arrived, so just note it and go on."""
    try:
        await step
    except MCPError as exc:
        print(f"--- error {exc.error.code}: {exc.error.message}", file=out, flush=True)
