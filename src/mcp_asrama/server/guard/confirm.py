"""Each confirmation is used at most once: a sealed `requestState` is claimed the first time a round carrying it
runs, and any later round carrying the same one is refused like an invalid state (`-32602`), before the tool runs.

The SDK seals `requestState` (bound to method, tool, arguments, audience and principal) but does not make it
single-use: the same accepted retry sent three times would run a write three times. Every sealed token is unique
(a fresh nonce per mint), so its digest names one round of one confirmation. The SDK has no hook for this; two
middlewares around its `RequestStateBoundary` (outermost first) do it:
- `Noted`, in front of the boundary, notes the digest of the sealed token as it arrived;
- `Claimed`, behind it, claims that digest once the boundary has verified the token (a forged or expired one is
  refused there and never claims anything). The claimed digest is the confirmation's key for an idempotent write
  at the service (`confirmation_key`).
Claims live in a `ClaimStore`, for as long as a state can be valid (its TTL): this process's `MemoryClaims`
(bounded), or `SharedClaims` in a Redis every replica shares (`ASRAMA_CONFIRM_STORAGE=redis://...`, through the
`limits` library: a fixed window of one hit per key is an atomic claim there). A store that cannot be reached
refuses the round (`-32603`), never lets it through unclaimed.
"""

import hashlib
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Protocol

from limits import RateLimitItemPerSecond
from limits.aio.strategies import FixedWindowRateLimiter
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.request_state import RequestStateBoundary
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from mcp_asrama.server.guard import audit
from mcp_asrama.server.guard.limits_storage import MEMORY, LimitsStorage


def replayed() -> MCPError:
    """What the SDK answers for any state it refuses: a replay is told exactly the same."""
    return MCPError(
        code=INVALID_PARAMS, message="Invalid or expired requestState", data={"reason": "invalid_request_state"}
    )


_arrived: ContextVar[str | None] = ContextVar("asrama_request_state_digest", default=None)
_claimed: ContextVar[str | None] = ContextVar("asrama_confirmation_key", default=None)


log = logging.getLogger(__name__)
UNCLAIMABLE = "The confirmation could not be checked (its store is unreachable); nothing was written. Try again."


class ClaimStore(Protocol):
    """An atomic set of claimed keys: `claim` is true exactly once per key within `ttl` seconds; `close` lets go
    of its connections (at the end of the server's lifespan)."""

    async def claim(self, key: str, ttl: float) -> bool: ...

    def close(self) -> None: ...


class MemoryClaims:
    """Claims held by this process: forgotten after their TTL, at most `max_keys` (the oldest go first)."""

    def __init__(self, *, max_keys: int = 100_000, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_keys = max_keys
        self.clock = clock
        self._until: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def __contains__(self, key: str) -> bool:
        return key in self._until

    async def claim(self, key: str, ttl: float) -> bool:
        with self._lock:
            now = self.clock()
            while self._until and next(iter(self._until.values())) <= now:
                self._until.popitem(last=False)
            if key in self._until:
                return False
            while len(self._until) >= self.max_keys:
                self._until.popitem(last=False)
            self._until[key] = now + ttl
            return True

    def close(self) -> None:
        """Nothing to let go of."""


class SharedClaims:
    """Claims in a store every replica reaches (Redis), by `limits`' fixed window: one hit per key per TTL."""

    def __init__(self, uri: str) -> None:
        self._store = LimitsStorage(uri)
        self._limiter = FixedWindowRateLimiter(self._store.storage)

    async def claim(self, key: str, ttl: float) -> bool:
        return await self._limiter.hit(RateLimitItemPerSecond(1, max(1, math.ceil(ttl))), "asrama-confirm", key)

    def close(self) -> None:
        self._store.close()


def claim_store(uri: str) -> ClaimStore:
    """The store ASRAMA_CONFIRM_STORAGE names: `memory://` (this process) or a Redis URL (shared)."""
    return MemoryClaims() if uri == MEMORY else SharedClaims(uri)


def digest(sealed: str) -> str:
    """The key of one sealed `requestState` (never the token itself: it is the client's to keep)."""
    return hashlib.sha256(sealed.encode("utf-8", "surrogatepass")).hexdigest()


def confirmation_key() -> str | None:
    """The claimed confirmation of the request in progress (None when it carried none): an Idempotency-Key."""
    return _claimed.get()


async def noted(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Note the digest of the sealed `requestState` as it arrived (in front of the SDK's boundary)."""
    state = ctx.params.get("requestState") if isinstance(ctx.params, dict) else None
    token = _arrived.set(digest(state) if isinstance(state, str) else None)
    try:
        return await call_next(ctx)
    finally:
        _arrived.reset(token)


class Claimed:
    """Claim the noted digest once the SDK's boundary has verified the state (behind it)."""

    def __init__(self, claims: ClaimStore, ttl: float) -> None:
        self.claims = claims
        self.ttl = ttl

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        key = _arrived.get()
        if key is None:
            return await call_next(ctx)
        try:
            fresh = await self.claims.claim(key, self.ttl)
        except Exception as exc:  # fail closed: an unchecked confirmation is never used
            log.error("confirmation store unreachable", extra={"error": type(exc).__name__})
            audit.note_write("refused")
            raise MCPError(code=INTERNAL_ERROR, message=UNCLAIMABLE) from None
        if not fresh:
            audit.note_write("replayed")
            raise replayed()
        token = _claimed.set(key)
        try:
            return await call_next(ctx)
        finally:
            _claimed.reset(token)


def install(middleware: list[ServerMiddleware[Any]], claims: ClaimStore, ttl: float) -> None:
    """Move the SDK's `RequestStateBoundary` innermost, behind our own middleware (so the audit records a refused
    or replayed state too), with `noted` just in front of it and `Claimed` just behind it."""
    at = next(i for i, m in enumerate(middleware) if isinstance(m, RequestStateBoundary))
    boundary = middleware.pop(at)
    middleware.extend([noted, boundary, Claimed(claims, ttl)])
