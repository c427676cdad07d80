"""Stdin and stdout for the SDK's stdio transport through the event loop's pipe transports, without threads.

The SDK's `stdio_server()` wraps the standard streams with `anyio.wrap_file`: every line read, every write and
every flush is a hop to a worker thread and back, about a quarter of the server's CPU per call
(bench/throughput.py). It also takes explicit streams (`stdio_server(stdin, stdout)`), but then skips its claim
of fd 0 and 1, so `loop_stdio` does what that claim does: the wire moves to private descriptors, fd 0 points at
the null device and fd 1 at stderr (so stray output of a handler or a child process misses the wire), and both
are restored on exit. Used only on POSIX when both ends are pipes or sockets (what a host gives its server);
a file or a terminal keeps the SDK's own streams.

A line longer than `MAX_LINE` is skipped through its newline and handed on as an unparseable line, so the host
gets a parse error for it and the next line is read as usual.
"""

import asyncio
import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from mcp.server.stdio import stdio_server

MAX_LINE = 8 * 1024 * 1024
OVERLONG = "\x00"  # what an overlong line is handed on as: not JSON, so answered with -32700


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def usable() -> bool:
    """Whether stdin and stdout are pipes or sockets on POSIX."""
    return sys.platform != "win32" and _is_pipe(0) and _is_pipe(1)


class _Lines:
    """The lines of a StreamReader as text, the way the SDK iterates its stdin."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> "_Lines":
        return self

    async def __anext__(self) -> str:
        try:
            line = await self._reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # the end of the stream: what is left, if anything
            line = exc.partial
        except asyncio.LimitOverrunError:  # over the limit: nothing read yet; drop the line through its newline
            await self._skip_line()
            return OVERLONG
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")

    async def _skip_line(self) -> None:
        while True:
            try:
                await self._reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:  # `consumed` bytes hold no newline (or end just before it)
                await self._reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return  # the stream ended inside the line


class _Out:
    """A StreamWriter as the SDK's stdout: `write` a text, `flush` waits until the pipe took it."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


@asynccontextmanager
async def loop_stdio() -> AsyncIterator[Any]:
    """The SDK's `stdio_server` streams, over the event loop's pipes when `usable()`, else its own."""
    if not usable():
        async with stdio_server() as streams:
            yield streams
        return
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    async with AsyncExitStack() as stack:
        stack.callback(_restore, saved_in, saved_out)
        reader = asyncio.StreamReader(limit=MAX_LINE)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(wire_in, "rb", buffering=0)
        )
        stack.callback(read_transport.close)
        write_transport, protocol = await loop.connect_write_pipe(
            lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), os.fdopen(wire_out, "wb", buffering=0)
        )
        stack.callback(write_transport.close)
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        streams = await stack.enter_async_context(stdio_server(_Lines(reader), _Out(writer)))  # type: ignore[arg-type]
        yield streams


def _restore(saved_in: int, saved_out: int) -> None:
    """Point fd 0 and 1 at the wire again."""
    for saved, fd in ((saved_in, 0), (saved_out, 1)):
        os.dup2(saved, fd)
        os.close(saved)
