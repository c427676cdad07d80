"""Live updates: the data service's change feed, told to whoever subscribed to a resource it changed.

Each MCP process follows the feed itself (`client.feed`), so a roll call made through any replica reaches the
listeners of every replica; nothing is shared between replicas but the service.
- 2026-07-28: `subscriptions/listen` is the SDK's (`MCPServer(subscriptions=bus)`); `Live.publish` puts one
  `ResourceUpdated` per changed resource on the bus. A listen is refused (`-32602`) unless the caller may read
  every resource it names, right now: a student outside the caller's scope reads as not found, and so does
  subscribing to one.
- Handshake era: `resources/subscribe` / `resources/unsubscribe`. `MCPServer` serves neither and has no public hook
  for it: `install` registers them on the low-level server (`MCPServer._lowlevel_server`, private), which then
  also advertises `resources.subscribe` in `initialize`. A subscription belongs to the connection (its standalone
  channel carries the updates) and ends with it; the request context reaches the connection only through its
  session's private `_connection`. It needs a connection that can hear the server between requests (stdio): over
  stateless HTTP there is none, and the host is told to listen instead.

Which resources a change touches (`touched`): attendance → `asrama://absensi/{tanggal}` and the student
(`asrama://anak/{id}`, whose status may follow); izin → the student; a student → the student and `asrama://kamar`
(occupancy); a room → `asrama://kamar`; pelanggaran and hafalan → the student's sub-resource. A change naming no
student (an import) touches every subscribed resource of its kind, and a gap in the feed (`reset`) every subscribed
resource. Health records have no resource: nothing is pushed about them.
"""

import logging
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

import httpx2
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    EmptyResult,
    ResourceUpdatedNotification,
    ResourceUpdatedNotificationParams,
    SubscribeRequestParams,
    SubscriptionsListenRequestParams,
    UnsubscribeRequestParams,
)
from pydantic import ValidationError

from mcp_asrama.client import feed
from mcp_asrama.client.feed import Perubahan
from mcp_asrama.server.core import AsramaServer

log = logging.getLogger(__name__)

LISTEN = "subscriptions/listen"
KAMAR = "asrama://kamar"
_ABSENSI = re.compile(r"\Aasrama://absensi/[^/]+\Z")
_ANAK = re.compile(r"\Aasrama://anak/[^/]+\Z")
_SUB = {
    "pelanggaran": re.compile(r"\Aasrama://anak/[^/]+/pelanggaran\Z"),
    "hafalan": re.compile(r"\Aasrama://anak/[^/]+/hafalan\Z"),
}
NO_SESSION = (
    "resources/subscribe memerlukan sesi yang tetap terbuka (stdio); lewat HTTP gunakan subscriptions/listen "
    "(protokol 2026-07-28)"
)


def touched(change: Perubahan, subscribed: Iterable[str]) -> set[str]:
    """The resources whose content `change` may have changed (those naming no student: among `subscribed`)."""
    anak = f"asrama://anak/{change.id_anak}" if change.id_anak else None
    every = set(subscribed)
    students = {uri for uri in every if _ANAK.match(uri)}
    match change.jenis:
        case "absensi":
            day = {f"asrama://absensi/{change.tanggal.isoformat()}"} if change.tanggal else _of(every, _ABSENSI)
            return day | ({anak} if anak else students)
        case "izin":
            return {anak} if anak else students
        case "anak":
            return {KAMAR} | ({anak} if anak else students)
        case "kamar":
            return {KAMAR}
        case "pelanggaran" | "hafalan":
            return {f"{anak}/{change.jenis}"} if anak else _of(every, _SUB[change.jenis])
        case "kesehatan":
            return set()


def _of(uris: set[str], pattern: re.Pattern[str]) -> set[str]:
    return {uri for uri in uris if pattern.match(uri)}


class Live:
    """Who listens to what in this process, and telling them of changes."""

    server: AsramaServer  # set by `install`: the server is built with this object's bus and middleware

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self._listened: Counter[str] = Counter()  # URIs of the open `subscriptions/listen` streams
        self._connections: dict[Connection, set[str]] = {}  # handshake-era subscriptions, until the connection ends

    def subscribed(self) -> set[str]:
        """Every URI somebody in this process is subscribed to."""
        held = set(self._listened)
        for uris in self._connections.values():
            held |= uris
        return held

    async def changed(self, change: Perubahan) -> None:
        """Tell the subscribers of every resource `change` touched."""
        await self.publish(touched(change, self.subscribed()))

    async def reset(self) -> None:
        """The feed lost events: tell every subscriber to read again."""
        await self.publish(self.subscribed())

    async def publish(self, uris: set[str]) -> None:
        """One update per URI: to the listen streams (the bus) and to handshake-era sessions subscribed to it."""
        for uri in sorted(uris):
            await self.bus.publish(ResourceUpdated(uri=uri))
            for connection, held in list(self._connections.items()):
                if uri in held:
                    await self._tell(connection, uri)

    async def _tell(self, connection: Connection, uri: str) -> None:
        update = ResourceUpdatedNotification(params=ResourceUpdatedNotificationParams(uri=uri))
        try:
            await connection.outbound.notify(update.method, update.params.model_dump(mode="json", exclude_none=True))
        except Exception as exc:  # a connection that went away: forget it, never stop telling the others
            log.info("dropping the subscriptions of a closed connection", extra={"error": type(exc).__name__})
            self._connections.pop(connection, None)

    async def check(self, ctx: ServerRequestContext[Any, Any], uris: Iterable[str]) -> None:
        """Refuse (`-32602`) a subscription to anything the caller may not read right now."""
        context = Context(request_context=ctx, mcp_server=self.server)
        for uri in uris:
            try:
                await self.server.read_resource(uri, context)
            except ResourceError as exc:
                message = f"Tidak dapat berlangganan {uri}: {exc}"
                raise MCPError(code=INVALID_PARAMS, message=message, data={"uri": uri}) from None

    async def gate_listen(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Check a listen's resources before the SDK serves it, and count them as subscribed while it is open."""
        if ctx.method != LISTEN:
            return await call_next(ctx)
        try:
            params = SubscriptionsListenRequestParams.model_validate(ctx.params or {})
        except ValidationError:
            return await call_next(ctx)  # the SDK answers a malformed listen with -32602
        uris = list(dict.fromkeys(params.notifications.resource_subscriptions or ()))
        await self.check(ctx, uris)
        self._listened.update(uris)
        try:
            return await call_next(ctx)
        finally:
            self._listened.subtract(uris)
            for uri in uris:
                if self._listened[uri] <= 0:
                    del self._listened[uri]

    async def subscribe(self, ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams) -> EmptyResult:
        """Handshake era: subscribe this session to one resource it may read."""
        if not ctx.session.can_send_request:
            raise MCPError(code=INVALID_REQUEST, message=NO_SESSION)
        uri = str(params.uri)
        await self.check(ctx, [uri])
        connection = ctx.session._connection  # private: see the module docstring
        if connection not in self._connections:
            self._connections[connection] = set()
            connection.exit_stack.callback(self._connections.pop, connection, None)
        self._connections[connection].add(uri)
        return EmptyResult()

    async def unsubscribe(self, ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams) -> EmptyResult:
        """Handshake era: end this session's subscription to one resource (nothing to end is fine)."""
        self._connections.get(ctx.session._connection, set()).discard(str(params.uri))
        return EmptyResult()

    def middleware(self) -> list[ServerMiddleware[Any]]:
        """The listen gate."""
        return [self.gate_listen]

    async def follow(self, http: httpx2.AsyncClient) -> None:
        """Follow the data service's feed, telling subscribers, until cancelled (or the service has no feed)."""
        await feed.follow(http, self.changed, self.reset)

    def install(self, server: AsramaServer) -> None:
        """Read through `server`, serve the handshake-era subscription methods on it (the SDK's private low-level
        server: `MCPServer` has no public hook for them), and let it end the SDK's listen streams at shutdown."""
        self.server = server
        lowlevel = server._lowlevel_server  # private: see the module docstring
        listens = lowlevel.get_request_handler(LISTEN)
        if listens is not None and isinstance(listens.handler, ListenHandler):
            server.close_listens = listens.handler.close
        lowlevel.add_request_handler("resources/subscribe", SubscribeRequestParams, self.subscribe)
        lowlevel.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams, self.unsubscribe)
