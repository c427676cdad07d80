"""Serving ASGI apps with uvicorn under connection limits: a client has `header_timeout` seconds from connecting
(on a kept-alive connection: from the next request's first byte) to the end of its headers, then `body_timeout`
seconds to the end of its body; a server holds at most `max_connections` connections, answering those beyond with
a quick 503; failed `accept()` calls are counted into one line per interval, not each logged with a traceback.

uvicorn has no hook for this (`timeout_keep_alive` only covers the idle time after a response, and the next
request's first byte cancels it; `limit_concurrency` answers 503 only once a request's headers are complete, so
connections that never complete them are never refused): its HTTP protocol for the chosen parser (h11 or httptools,
as `ASRAMA_HTTP` says: see stack.py) is subclassed in `sdk_seams.limited_protocol`, which tells `Deadlines` what
each client is sending. Once the transport is closed, uvicorn ends the request's `receive()` with `http.disconnect`,
so an app waiting for the body (the body-size limit's and the rate limiter's own reads included) stops waiting.
uvicorn's own limits stay at their defaults: 5 s keep-alive, at most 16 KiB of headers (h11; httptools' own limit
is 80 KiB).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import functools
import logging
import math
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import anyio
import uvicorn

from mcp_asrama import sdk_seams
from mcp_asrama.config import ConnectionLimits
from mcp_asrama.runtime.logs import AccessLog
from mcp_asrama.runtime.stack import Stack

log = logging.getLogger(__name__)

LOG_INTERVAL = 10.0  # seconds: at most one line per interval about each kind of refused or cut connection
# What asyncio reports through the loop's exception handler, with a traceback, each time accept() fails for want
# of file descriptors or memory (asyncio/selector_events.py `_accept_connection`): it tries again for every slot of
# the backlog (2048), every second, and schedules a retry (`_start_serving`) for each failure; retries that run
# after the listening socket was closed (at shutdown) fail with the second message.
ACCEPT_FAILED = "socket.accept() out of system resource"
RETRY_FAILED = "Exception in callback BaseSelectorEventLoop._start_serving("
BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: 19\r\n"
    b"retry-after: 1\r\nconnection: close\r\n\r\nService Unavailable"
)


class Tally:
    """One kind of event, logged at most once per `interval`: the first at once, the later ones as a count."""

    def __init__(self, message: str, interval: float = LOG_INTERVAL, **fields: object) -> None:
        self.message = message
        self.interval = interval
        self.fields = fields
        self._count = 0
        self._logged_at = -math.inf
        self._flush: asyncio.TimerHandle | None = None

    def note(self, loop: asyncio.AbstractEventLoop) -> None:
        self._count += 1
        if self._flush is not None:
            return
        delay = self._logged_at + self.interval - time.monotonic()
        if delay <= 0:
            self._log()
        else:
            self._flush = loop.call_later(delay, self._log)

    def _log(self) -> None:
        log.warning(self.message, extra={**self.fields, "count": self._count, "interval_s": self.interval})
        self._count = 0
        self._logged_at = time.monotonic()
        self._flush = None


class LimitedConfig(uvicorn.Config):
    """uvicorn's configuration with our limits, our protocol for the chosen parser, and the tallies of the
    connections the limits refuse or cut."""

    def __init__(self, app: Any, host: str, port: int, limits: ConnectionLimits, parser: str = "h11") -> None:
        # uvicorn's access line holds the raw path (a child's name in /anak/{id_anak}): AccessLog logs instead.
        # Neither app speaks WebSocket: an upgraded connection would leave the deadlines behind.
        protocol = sdk_seams.limited_protocol(parser, self.watch)
        super().__init__(app, host=host, port=port, http=protocol, ws="none", log_config=None, access_log=False)
        self.limits = limits
        self.refused = Tally("refused connections beyond max_connections (503)", max=limits.max_connections)
        self.slow_headers = Tally("closed connections whose headers came too slowly", timeout=limits.header_timeout)
        self.slow_bodies = Tally("closed connections whose body came too slowly", timeout=limits.body_timeout)

    def watch(
        self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop, open_connections: int
    ) -> Deadlines | None:
        """The deadlines of a new connection, or None when it is one too many (answered with a quick 503)."""
        if open_connections > self.limits.max_connections:
            self.refused.note(loop)
            transport.write(BUSY)
            transport.close()
            return None
        return Deadlines(self, transport, loop)


class Deadlines:
    """A deadline on one connection's headers and on its body (an `sdk_seams.Watch`)."""

    def __init__(self, limited: LimitedConfig, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self.limited = limited
        self.transport = transport
        self.loop = loop
        self._phase: str | None = None  # HEADERS, BODY or None (nothing timed)
        self._deadline: asyncio.TimerHandle | None = None

    def reading(self, state: str, headers_begun: bool = True) -> None:
        """Start the clock when the client begins its headers or its body; stop it when it has sent them."""
        timed = (sdk_seams.HEADERS, sdk_seams.BODY) if headers_begun else (sdk_seams.BODY,)
        phase = state if state in timed and not self.transport.is_closing() else None
        if phase == self._phase:
            return
        self.stop()
        self._phase = phase
        limits = self.limited.limits
        if phase == sdk_seams.HEADERS:
            self._deadline = self.loop.call_later(limits.header_timeout, self._cut, self.limited.slow_headers)
        elif phase == sdk_seams.BODY:
            self._deadline = self.loop.call_later(limits.body_timeout, self._cut, self.limited.slow_bodies)

    def stop(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _cut(self, tally: Tally) -> None:
        self._deadline = None
        tally.note(self.loop)
        self.transport.abort()


def tally_accept_failures(loop: asyncio.AbstractEventLoop) -> None:
    """Count failed accept() calls into one line per interval; hand every other error on as before."""
    previous = loop.get_exception_handler()
    failures = Tally("accept() failed: out of file descriptors or memory; new connections wait")

    def handle(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", ""))
        if message == ACCEPT_FAILED:
            failures.fields["error"] = str(context.get("exception"))
            failures.note(loop)
        elif message.startswith(RETRY_FAILED):
            failures.note(loop)
        elif previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handle)


class ClosingServer(uvicorn.Server):
    """A uvicorn server that first ends the app's long-lived streams when asked to stop: uvicorn waits for open
    responses to finish before the app's lifespan ends, and a stream that only ends when its client goes would
    hold the process up for ever."""

    def __init__(self, config: uvicorn.Config, closing: Callable[[], None] | None) -> None:
        super().__init__(config)
        self.closing = closing

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """End the streams (`closing`), then uvicorn's shutdown: refuse new connections, drain, end the lifespan."""
        if self.closing is not None:
            self.closing()
        await super().shutdown(sockets)


def make_server(
    app: Any,
    host: str,
    port: int,
    limits: ConnectionLimits,
    *,
    plain_paths: Iterable[str] = (),
    closing: Callable[[], None] | None = None,
    stack: Stack | None = None,
) -> uvicorn.Server:
    """A uvicorn server for `app` under `limits`, logging access by route template (`plain_paths`: paths without
    values that may be logged as they are when no route matched); `closing` ends the app's streams on shutdown;
    `stack` names the HTTP parser (default: from the environment)."""
    parser = (stack or Stack()).parser
    return ClosingServer(LimitedConfig(AccessLog(app, plain_paths), host, port, limits, parser), closing)


OTHER_PORTS = (
    "mcp-asrama: to use other ports: make run PORT=8100 MCP_PORT=8101 (the data service's and the MCP server's), "
    "or the command's --port / --mcp-port"
)


def listen(server: uvicorn.Server) -> socket.socket:
    """The listening socket of `server`'s host and port, bound now; a port in use (or an address this machine does
    not have) ends the process with one line on stderr (and for a port in use one more: how to choose others) and exit
    code 1, before anything claims to be running."""
    config = server.config
    family = socket.AF_INET6 if ":" in config.host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio turns on TCP_NODELAY only for sockets that say so, and without it each response
    # body waits ~40 ms for the delayed ACK of its head (Nagle).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((config.host.strip("[]"), config.port))
    except OSError as exc:
        sock.close()
        message = f"mcp-asrama: cannot listen on {config.host}:{config.port}: "
        if exc.errno != errno.EADDRINUSE:
            raise SystemExit(message + str(exc.strerror)) from None
        raise SystemExit(message + f"it is in use (is mcp-asrama already running?)\n{OTHER_PORTS}") from None
    sock.set_inheritable(True)
    return sock


async def serve(*servers: uvicorn.Server, sockets: Sequence[socket.socket] | None = None) -> None:
    """Run the servers in this event loop (each on its socket of `sockets`, when given) until they stop (Ctrl+C,
    SIGTERM, or `should_exit`)."""
    tally_accept_failures(asyncio.get_running_loop())
    async with anyio.create_task_group() as tasks:
        for index, server in enumerate(servers):
            tasks.start_soon(server.serve, None if sockets is None else [sockets[index]])


def run(
    *servers: uvicorn.Server,
    ready: Callable[[], None] | None = None,
    stack: Stack | None = None,
    data_service: bool = False,
) -> None:
    """Bind every server's port, then call `ready` (say where to connect), then serve until interrupted, on the
    event loop of `stack` (default: from the environment; `data_service`: one of the servers is the data service);
    Ctrl+C is the normal way to stop (as with `uvicorn.run`)."""
    options = (stack or Stack()).backend_options(data_service)
    sockets: list[socket.socket] = []
    try:
        for server in servers:
            sockets.append(listen(server))
        if ready is not None:
            ready()
        with contextlib.suppress(KeyboardInterrupt):
            anyio.run(functools.partial(serve, *servers, sockets=sockets), backend_options=options)
    finally:
        for sock in sockets:
            sock.close()
