"""JSON or an SSE stream, chosen per request: the SDK fixes one response mode for a whole Streamable HTTP app.

A stream is what a request needs when something travels ahead of its result: progress notifications, which the
SDK sends only for a request carrying `_meta.progressToken` (and drops in JSON mode), and the notifications of
`subscriptions/listen`. Every other request gets one JSON body. SSE mode costs the server about 0.6 ms of CPU per
request on the 2026-07-28 path and more on the handshake path (its response stream and tasks; measured in
docs/benchmarks.md, "HTTP stack"), so an ordinary call should not pay it. The SDK has no per-request hook, so two of
its apps stand behind one route: `ResponseMode` runs both apps' lifespans (their session managers) and hands each
POST to one of them, by the body `routing_headers.RoutingHeaderCheck` has already read. Both session managers
enter the server's lifespan, so the server wraps it in `Shared`: entered once per process (one pooled client, one
follower of the change feed: two would tell every listener of every change twice).

What JSON mode gives up: the SDK's 2026-07-28 SSE path cancels a handler whose client went away; in JSON mode the
handler runs to its end, bounded by the upstream timeouts. A client that wants long reads cut short asks for
progress.
"""

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any, Generic, TypeVar

import anyio
from starlette.applications import Starlette
from starlette.types import Receive, Scope, Send

from mcp_asrama.runtime.logs import ROUTINE
from mcp_asrama.server.method_kinds import NO_DATA_METHODS
from mcp_asrama.server.routing_headers import MESSAGE

T = TypeVar("T")
S = TypeVar("S")

STREAMED_METHODS = frozenset({"subscriptions/listen"})


def wants_stream(payload: Any) -> bool:
    """Whether a request's answer is a stream: it listens, or asks for progress. Anything that is not one request
    object (unreadable, a batch) goes the streaming way too: the SDK refuses it the same in either mode."""
    if not isinstance(payload, Mapping):
        return True
    if payload.get("method") in STREAMED_METHODS:
        return True
    params = payload.get("params")
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    return isinstance(meta, Mapping) and meta.get("progressToken") is not None


def routine(payload: Any) -> bool:
    """A message that reaches no data: a request of `NO_DATA_METHODS` (`tools/list`, `ping`, ...), a notification
    or a response. The access log counts these instead of writing a line each (a flood must not fill the log)."""
    if not isinstance(payload, Mapping):
        return False
    return "id" not in payload or "method" not in payload or payload.get("method") in NO_DATA_METHODS


class ResponseMode:
    """Pure ASGI: a POST that needs no stream goes to `plain` (the SDK in JSON mode), everything else to `streamed`
    (SSE mode; also every other path, e.g. the Protected Resource Metadata). The lifespan starts both. A routine
    POST is marked for the access log (`logs.ROUTINE`)."""

    def __init__(self, streamed: Starlette, plain: Starlette) -> None:
        self.streamed = streamed
        self.plain = plain

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            async with self.plain.router.lifespan_context(self.plain):
                await self.streamed(scope, receive, send)
            return
        if scope["type"] == "http" and scope.get("method") == "POST" and routine(scope.get(MESSAGE)):
            scope[ROUTINE] = True
        if scope["type"] == "http" and scope.get("method") == "POST" and not wants_stream(scope.get(MESSAGE)):
            await self.plain(scope, receive, send)
        else:
            await self.streamed(scope, receive, send)


class Shared(Generic[S, T]):
    """A lifespan that several apps of one process enter: the first entry runs it, later ones get the same state,
    and the last exit ends it. Entries must nest (as `ResponseMode` nests them): the first in is the last out, so
    the lifespan's task group is left in the task and order it was entered."""

    def __init__(self, lifespan: Callable[[S], AbstractAsyncContextManager[T]]) -> None:
        self.lifespan = lifespan
        self._lock = anyio.Lock()
        self._entered = 0
        self._stack: AsyncExitStack | None = None
        self._state: Any = None

    @asynccontextmanager
    async def __call__(self, server: S) -> AsyncIterator[T]:
        async with self._lock:
            if self._entered == 0:
                stack = AsyncExitStack()
                self._state = await stack.enter_async_context(self.lifespan(server))
                self._stack = stack
            self._entered += 1
        try:
            yield self._state
        finally:
            self._entered -= 1
            if self._entered == 0 and self._stack is not None:
                stack, self._stack, self._state = self._stack, None, None
                await stack.aclose()
