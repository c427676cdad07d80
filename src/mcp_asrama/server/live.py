"""Live updates: the data service's change feed, told to whoever subscribed to a resource it changed.

Each MCP process follows the feed itself (`client.feed`), so a roll call made through any replica reaches the
listeners of every replica; nothing is shared between replicas but the service.
The lifespan runs once per process (`response_mode.Shared`), so each process follows the feed once.
- 2026-07-28: `subscriptions/listen` is the SDK's (`MCPServer(subscriptions=bus)`); `Live.publish` puts one
  `Updated` per changed resource on the bus. A listen is refused (`-32602`) unless the caller may read every
  resource it names, right now: a student outside the caller's scope reads as not found, and so does subscribing
  to one. What a listen may hold and what its check costs (open listens per subject and in all, URIs, one
  rate-limit token per read, a family checked at once) is `listen_gate`'s.
- Handshake era: `resources/subscribe` / `resources/unsubscribe`. `MCPServer` serves neither and has no public hook
  for it: `install` registers them on the low-level server (`sdk_seams.add_request_handler`), which then also
  advertises `resources.subscribe` in `initialize`. A subscription belongs to the connection (its standalone
  channel carries the updates) and ends with it; the request context reaches the connection only through its
  session (`sdk_seams.connection_of`). It needs a connection that can hear the server between requests (stdio):
  over stateless HTTP there is none, and the host is told to listen instead.

Which resources a change touches (`touched`) is derived from the domain list (`contract.DOMAINS`): a change of a
kind touches its domain's resource (the URI template filled from the change: `asrama://absensi/{tanggal}`,
`asrama://anak/{id_anak}/hafalan`, ...), and the resources of the domains it also shows in (`SHOWN_IN`: attendance
and izin in the student's status, a student in the rooms' occupancy). A change that does not fill a template (an
import names no student) touches every subscribed resource of that template, and a gap in the feed (`reset`)
every subscribed resource. A domain without a resource (health records) pushes nothing.

Who is told: a change naming a student reaches only subscribers who may see that student (their scope when they
subscribed), on every resource it touches but a whole list (`LISTS`: a template without parameters, as
`asrama://kamar`, whose rows the scope already cuts); a musyrif listening to a day's attendance hears of his rooms'
roll calls, not of the others'. The feed's event carries the student's room and class (our service); for a service
whose events do not, the student is looked up, once per change, only while somebody with a narrower scope than the
whole school listens. A student who cannot be placed (deleted, or the lookup failed) is told only to those who see
every student.
"""

import logging
from collections import Counter
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpx2
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.mcpserver import Context
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated, ServerEvent
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_REQUEST,
    EmptyResult,
    ResourceUpdatedNotification,
    ResourceUpdatedNotificationParams,
    SubscribeRequestParams,
    SubscriptionsListenRequestParams,
    UnsubscribeRequestParams,
)
from pydantic import BaseModel, ValidationError

from mcp_asrama import sdk_seams
from mcp_asrama.client import AsramaClient, AsramaError, NotFound, feed
from mcp_asrama.client.feed import Perubahan
from mcp_asrama.server.asrama_server import AsramaServer, state_of
from mcp_asrama.server.guard import ratelimit
from mcp_asrama.server.guard.access import Akses
from mcp_asrama.server.listen_gate import LISTS, PUBLISHED, SHOWN_IN, Gate, Plan, Slots, too_many_uris

log = logging.getLogger(__name__)

LISTEN = "subscriptions/listen"
NO_SESSION = (
    "resources/subscribe memerlukan sesi yang tetap terbuka (stdio); lewat HTTP gunakan subscriptions/listen "
    "(protokol 2026-07-28)"
)


def touched(change: Perubahan, subscribed: Iterable[str]) -> set[str]:
    """The resources whose content `change` may have changed (those of a template it does not fill: among
    `subscribed`)."""
    every = set(subscribed)
    uris: set[str] = set()
    for kind in (change.jenis, *SHOWN_IN.get(change.jenis, ())):
        resource = PUBLISHED.get(kind)
        if resource is not None:
            uri = resource.uri(change)
            uris |= {uri} if uri is not None else resource.among(every)
    return uris


@dataclass(frozen=True)
class Siapa:
    """Where the student a change names lives and learns (None: unknown)."""

    kelas: str | None
    kamar: str | None


@dataclass(frozen=True)
class Updated(ResourceUpdated):
    """A resource changed; `anak`: the student it is about (None: nobody in particular, told to every listener)."""

    anak: Siapa | None = None

    def tampak(self, akses: Akses) -> bool:
        """Whether a subscriber who sees `akses` may be told."""
        return self.anak is None or akses.melihat(kelas=self.anak.kelas, kamar=self.anak.kamar)


# The scope of the listen being opened: set by `Live.gate_listen` around the SDK's handler, which subscribes.
_viewer: ContextVar[Akses | None] = ContextVar("asrama_listen_viewer", default=None)


class ScopedBus:
    """The SDK's in-process bus, each listener told only of the `Updated` events its subscriber may see."""

    def __init__(self) -> None:
        self._bus = InMemorySubscriptionBus()

    async def publish(self, event: ServerEvent) -> None:
        await self._bus.publish(event)

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        akses = _viewer.get()
        if akses is None or akses.semua:
            return self._bus.subscribe(listener)

        def deliver(event: ServerEvent) -> None:
            if not isinstance(event, Updated) or event.tampak(akses):
                listener(event)

        return self._bus.subscribe(deliver)


class Live:
    """Who listens to what in this process, and telling them of changes."""

    server: AsramaServer  # set by `install`: the server is built with this object's bus and middleware
    gate: Gate

    def __init__(self, slots: Slots, limiter: ratelimit.RateLimiter | None = None) -> None:
        self.bus = ScopedBus()
        self.slots = slots
        self.limiter = limiter  # charges a listen's reads (None: not rate-limited)
        self._listened: Counter[str] = Counter()  # URIs of the open `subscriptions/listen` streams
        self._narrow = 0  # open listens whose subscriber does not see every student
        # Handshake-era subscriptions, until the connection ends: the subscriber's scope and URIs.
        self._connections: dict[Connection, tuple[Akses, set[str]]] = {}
        self._client: AsramaClient | None = None  # the feed's: looks a student up when an event does not place it

    def subscribed(self) -> set[str]:
        """Every URI somebody in this process is subscribed to."""
        held = set(self._listened)
        for _, uris in self._connections.values():
            held |= uris
        return held

    async def changed(self, change: Perubahan) -> None:
        """Tell the subscribers of every resource `change` touched, who may see its student."""
        uris = touched(change, self.subscribed())
        if not uris:
            return
        anak = await self._place(change) if change.id_anak else None
        await self.publish({Updated(uri=uri, anak=None if uri in LISTS else anak) for uri in uris})

    async def _place(self, change: Perubahan) -> Siapa:
        """The named student's class and room: from the event, else (only for a narrower subscriber) the service."""
        if change.kelas is not None or change.kamar is not None:
            return Siapa(change.kelas, change.kamar)
        narrow = self._narrow or any(not akses.semua for akses, _ in self._connections.values())
        if not narrow or self._client is None or change.id_anak is None:
            return Siapa(None, None)
        try:
            found = await self._client.detail_anak(change.id_anak)
        except NotFound:
            return Siapa(None, None)
        except AsramaError as exc:  # told to nobody with a narrower scope: never to the wrong one
            log.warning("could not place a changed student", extra={"error": type(exc).__name__})
            return Siapa(None, None)
        return Siapa(found.kelas, found.kamar)

    async def reset(self) -> None:
        """The feed lost events: tell every subscriber to read again."""
        await self.publish({Updated(uri=uri) for uri in self.subscribed()})

    async def publish(self, events: set[Updated]) -> None:
        """One update per URI: to the listen streams (the bus) and to handshake-era sessions subscribed to it, each
        only if its subscriber may see what changed."""
        for event in sorted(events, key=lambda e: e.uri):
            await self.bus.publish(event)
            for connection, (akses, held) in list(self._connections.items()):
                if event.uri in held and event.tampak(akses):
                    await self._tell(connection, event.uri)

    async def _tell(self, connection: Connection, uri: str) -> None:
        update = ResourceUpdatedNotification(params=ResourceUpdatedNotificationParams(uri=uri))
        try:
            await connection.outbound.notify(update.method, update.params.model_dump(mode="json", exclude_none=True))
        except Exception as exc:  # a connection that went away: forget it, never stop telling the others
            log.info("dropping the subscriptions of a closed connection", extra={"error": type(exc).__name__})
            self._connections.pop(connection, None)

    def _context(self, ctx: ServerRequestContext[Any, Any]) -> Context[Any, Any]:
        return Context(request_context=ctx, mcp_server=self.server)

    async def _charge(self, plan: Plan) -> None:
        """One rate-limit token per read beyond the first (the request paid that); `-32029` when over the limit."""
        if self.limiter is None or plan.reads <= 1:
            return
        subject = ratelimit.subject_of(get_access_token())
        wait = await self.limiter.acquire(subject, cost=plan.reads - 1)
        if wait:
            seconds = ratelimit.retry_seconds(wait)
            message = ratelimit.retry_message(seconds)
            raise MCPError(code=ratelimit.RATE_LIMITED, message=message, data={"retryAfter": seconds})

    async def gate_listen(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        """Hold a slot, charge and check a listen's resources before the SDK serves it, and count them as
        subscribed (with the subscriber's scope) while it is open."""
        if ctx.method != LISTEN:
            return await call_next(ctx)
        try:
            params = SubscriptionsListenRequestParams.model_validate(ctx.params or {})
        except ValidationError:
            return await call_next(ctx)  # the SDK answers a malformed listen with -32602
        uris = list(dict.fromkeys(params.notifications.resource_subscriptions or ()))
        if (refused := too_many_uris(len(uris))) is not None:
            raise refused
        context = self._context(ctx)
        akses = state_of(context).principal().akses
        with self.slots.hold(ratelimit.subject_of(get_access_token())):
            plan = Plan.of(uris)
            await self._charge(plan)
            await self.gate.check(context, uris)
            self._listened.update(uris)
            self._narrow += not akses.semua
            viewing = _viewer.set(akses)
            try:
                return await call_next(ctx)
            finally:
                _viewer.reset(viewing)
                self._narrow -= not akses.semua
                self._listened.subtract(uris)
                for uri in uris:
                    if self._listened[uri] <= 0:
                        del self._listened[uri]

    async def subscribe(self, ctx: ServerRequestContext[Any, Any], params: SubscribeRequestParams) -> EmptyResult:
        """Handshake era: subscribe this session to one resource it may read (at most `MAX_URIS` a session)."""
        if not ctx.session.can_send_request:
            raise MCPError(code=INVALID_REQUEST, message=NO_SESSION)
        uri = str(params.uri)
        connection = sdk_seams.connection_of(ctx.session)
        _, held = self._connections.get(connection, (None, set()))
        if uri not in held and (refused := too_many_uris(len(held) + 1)) is not None:
            raise refused
        context = self._context(ctx)
        await self.gate.check(context, [uri])
        if connection not in self._connections:
            self._connections[connection] = (state_of(context).principal().akses, set())
            connection.exit_stack.callback(self._connections.pop, connection, None)
        self._connections[connection][1].add(uri)
        return EmptyResult()

    async def unsubscribe(self, ctx: ServerRequestContext[Any, Any], params: UnsubscribeRequestParams) -> EmptyResult:
        """Handshake era: end this session's subscription to one resource (nothing to end is fine)."""
        held = self._connections.get(sdk_seams.connection_of(ctx.session))
        if held is not None:
            held[1].discard(str(params.uri))
        return EmptyResult()

    def middleware(self) -> list[ServerMiddleware[Any]]:
        """The listen gate, and the capabilities actually served."""
        return [self.gate_listen, only_what_is_sent]

    async def follow(self, http: httpx2.AsyncClient) -> None:
        """Follow the data service's feed, telling subscribers, until cancelled (or the service has no feed)."""
        self._client = AsramaClient(http)
        await feed.follow(http, self.changed, self.reset)

    def install(self, server: AsramaServer) -> None:
        """Read through `server`, serve the handshake-era subscription methods on it (the SDK's private low-level
        server: `MCPServer` has no public hook for them), and let it end the SDK's listen streams at shutdown."""
        self.server = server
        self.gate = Gate(server)
        closer = sdk_seams.listen_closer(server)
        if closer is not None:
            server.close_listens = closer
        sdk_seams.add_request_handler(server, "resources/subscribe", SubscribeRequestParams, self.subscribe)
        sdk_seams.add_request_handler(server, "resources/unsubscribe", UnsubscribeRequestParams, self.unsubscribe)


LIST_KINDS = ("tools", "prompts", "resources")


async def only_what_is_sent(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """`server/discover` without `listChanged`: the SDK's `get_capabilities` sets it on the 2026-07-28 path
    whenever `subscriptions/listen` is served, but this server's lists never change while it runs (nothing
    publishes a list-changed event), so it says false, as `initialize` already does. The SDK has no setting for
    it; its public hook, a middleware, corrects the result (a model, or the wire dict its boundary returns)."""
    result = await call_next(ctx)
    if ctx.method != "server/discover":
        return result
    if isinstance(result, BaseModel):
        wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        return type(result).model_validate(_without_list_changed(wire))
    if isinstance(result, dict):
        return _without_list_changed(result)
    return result


def _without_list_changed(wire: dict[str, Any]) -> dict[str, Any]:
    capabilities = dict(wire.get("capabilities") or {})
    for kind in LIST_KINDS:
        if isinstance(capabilities.get(kind), dict):
            capabilities[kind] = {**capabilities[kind], "listChanged": False}
    return {**wire, "capabilities": capabilities}
