"""`mcp-asrama probe`: a short session with any stdio MCP server, printing every raw JSON-RPC message.

The SDK's client does the protocol (discover or initialize, then the requests); a relay between it and the
SDK's stdio transport prints each message as it crosses, in the wire's own serialization.

With `--tanya` the probe declares elicitation and answers the server's questions (a write's confirmation: the
`input_required` result and its retry on 2026-07-28, `elicitation/create` on the handshake era; the SDK's client does
the rounds). The question goes to stderr, since stdout is the capture; the answer is a line read from the probe's own
stdin (the server's stdin is a pipe of the probe's, so the probe's is free): the person at a terminal, or a script's
pipe. `--tanya y` / `--tanya n` answer every question without reading anything. Only the confirmation form (the one
boolean `setuju`) can be answered; any other form or a URL is shown and declined.
"""

import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any, Literal, TextIO

import anyio
import anyio.from_thread
import anyio.lowlevel
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from mcp_types import CONNECTION_CLOSED, ElicitRequestParams, ElicitResult, Implementation

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


Tanya = Literal["ask", "y", "n"]
YES = {"y", "ya", "yes"}


class Asker:
    """The elicitation callback of `--tanya`: shows each question on `prompt` and answers it with `answer` ("y" or
    "n"), or with a line read from `answers` when `answer` is "ask" (the end of input answers `cancel`)."""

    def __init__(self, answer: Tanya, answers: TextIO, prompt: TextIO) -> None:
        self.answer, self.answers, self.prompt = answer, answers, prompt

    async def __call__(self, context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        self._say(f"--- pertanyaan server:\n{params.message}")
        if params.mode == "url":
            self._say(f"--- server meminta membuka {params.url}; probe tidak membuka alamat: ditolak")
            return ElicitResult(action="decline")
        schema = dict(params.requested_schema)
        fields = schema.get("properties") or {}
        if list(fields) != ["setuju"] or fields["setuju"].get("type") != "boolean":
            shown = json.dumps(schema, ensure_ascii=False)
            self._say(
                f"--- formulir ini bukan persetujuan (setuju: ya/tidak), probe tidak dapat mengisinya: ditolak\n{shown}"
            )
            return ElicitResult(action="decline")
        line: str = self.answer
        if line == "ask":
            print("Setujui? [y/N] ", end="", file=self.prompt, flush=True)
            line = await read_line(self.answers)
            if not line:
                self._say("\n--- tidak ada jawaban: dibatalkan")
                return ElicitResult(action="cancel")
            if not self.answers.isatty():  # a terminal echoes what the person typed; a pipe does not
                self._say(line.rstrip("\n"))
        else:
            self._say(f"Setujui? [y/N] {line} (--tanya {line})")
        if line.strip().lower() in YES:
            return ElicitResult(action="accept", content={"setuju": True})
        return ElicitResult(action="decline")

    def _say(self, text: str) -> None:
        print(text, file=self.prompt, flush=True)


async def read_line(stream: TextIO) -> str:
    """One line of `stream` ('' at its end), read on a daemon thread: the loop keeps relaying meanwhile, and Ctrl+C
    or the session ending is not held up by a person who never answers."""
    token = anyio.lowlevel.current_token()
    done = anyio.Event()
    got: list[str] = []

    def read() -> None:
        try:
            got.append(stream.readline())
        except (OSError, ValueError):  # closed, or not readable
            got.append("")
        with suppress(RuntimeError):  # the session ended while the person was thinking
            anyio.from_thread.run_sync(done.set, token=token)

    threading.Thread(target=read, name="probe-tanya", daemon=True).start()
    await done.wait()
    return got[0]


async def run_probe(
    command: Sequence[str],
    *,
    legacy: bool,
    calls: Sequence[tuple[str, dict[str, Any]]],
    out: TextIO,
    compact: bool = False,
    server_log: bool = False,
    tanya: Tanya | None = None,
    answers: TextIO | None = None,
) -> int:
    """Open a session, list everything, make the calls; 0 when the session worked, 1 otherwise. With `tanya` the
    probe declares elicitation and answers questions (see `Asker`; `answers` defaults to stdin); without, it declares
    none."""
    show = Printer(out, compact)
    command = resolve(list(command))
    if shutil.which(command[0]) is None:
        print(f"probe: cannot start {command[0]}: no such program (give its path)", file=sys.stderr)
        return 1
    params = StdioServerParameters(command=command[0], args=list(command[1:]), env=dict(os.environ))
    # the server's stderr is kept (not shown) so that its own reason can be said if it stops
    errlog = sys.stderr if server_log else tempfile.TemporaryFile("w+", errors="replace")  # noqa: SIM115 - closed below
    try:
        async with Client(
            recording_stdio(params, show, errlog),
            mode="legacy" if legacy else "auto",
            cache=None,
            client_info=Implementation(name="mcp-asrama-probe", version=__version__),
            elicitation_callback=None if tanya is None else Asker(tanya, answers or sys.stdin, sys.stderr),
        ) as client:
            for step in (client.list_tools, client.list_resources, client.list_prompts):
                await _guarded(step(), out)
            for name, arguments in calls:
                await _guarded(client.call_tool(name, arguments), out)
    except (OSError, MCPError, anyio.BrokenResourceError, anyio.EndOfStream, ExceptionGroup) as exc:
        cause = _first_leaf(exc)
        reason = None if errlog is sys.stderr else last_line(errlog)
        if reason is not None and _closed(cause):
            print(f"probe: the server stopped: {reason}", file=sys.stderr)
        else:
            print(f"probe: session failed: {type(cause).__name__}: {cause}", file=sys.stderr)
        return 1
    finally:
        if errlog is not sys.stderr:
            errlog.close()
    return 0


def last_line(log: TextIO, tail: int = 4096) -> str | None:
    """The last non-blank line the server wrote to `log` (its own reason when it stops at start), or None."""
    log.flush()
    size = log.seek(0, os.SEEK_END)
    log.seek(max(0, size - tail))
    lines = [line.strip() for line in log.read().splitlines() if line.strip()]
    return lines[-1][:500] if lines else None


def _closed(cause: BaseException) -> bool:
    """Whether the session failed because the server's end of the pipe closed (it exited)."""
    if isinstance(cause, MCPError):
        return cause.error.code == CONNECTION_CLOSED
    return isinstance(cause, (anyio.BrokenResourceError, anyio.EndOfStream, BrokenPipeError))


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
