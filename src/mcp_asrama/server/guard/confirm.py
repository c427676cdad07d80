"""Each confirmation is used at most once, and only by the call it confirms: a sealed `requestState` is claimed the
first time a verified round carrying it runs, and any later round carrying the same one is refused like an invalid
state (`-32602`), before the tool runs.

The SDK seals `requestState` (bound to method, tool, arguments, audience and principal) but does not make it
single-use: the same accepted retry sent three times would run a write three times. Every sealed token is unique
(a fresh nonce per mint), so its digest names one round of one confirmation. The SDK has no hook for this; two
middlewares around its `RequestStateBoundary` (outermost first; `chain.install` moves the boundary innermost,
behind the audit, so a refused or replayed state is audited too) do it:
- `noted`, in front of the boundary, notes the sealed token as it arrived on a method that carries confirmations
  (`CONFIRMING`: `tools/call`; no resource or prompt of this server asks one), never on any other method;
- `Claimed`, behind it, claims that token's digest only once the boundary has verified it: the boundary replaces a
  verified token with the plaintext it decoded (`sdk_seams.boundary_verified`), and refuses (`-32602`) a forged,
  expired, misbound or another principal's one before anything is claimed. The claimed digest is the
  confirmation's key for an idempotent write at the service (`confirmation_key`).
Claims live in a `ClaimStore`, for as long as a state can be valid (its TTL): this process's `MemoryClaims`
(bounded: a full store refuses new claims, never forgets an unexpired one), or `SharedClaims` in a Redis every
replica shares (`ASRAMA_CONFIRM_STORAGE=redis://...`, through the `limits` library: a fixed window of one hit per key
is an atomic claim there). A store that is full or cannot be reached refuses the round (`-32603`, audited as
`refused`), never lets it through unclaimed.
"""

import hashlib
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, NoReturn, Protocol

from limits import RateLimitItemPerSecond
from limits.aio.strategies import FixedWindowRateLimiter
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from mcp_asrama import sdk_seams
from mcp_asrama.server.guard import audit
from mcp_asrama.server.guard.limits_storage import MEMORY, LimitsStorage


def replayed() -> MCPError:
    """What the SDK answers for any state it refuses: a replay is told exactly the same."""
    return MCPError(
        code=INVALID_PARAMS, message="Invalid or expired requestState", data={"reason": "invalid_request_state"}
    )


# The methods whose requests carry confirmations (the write tools' answers); a state on any other is never claimed.
CONFIRMING = frozenset({"tools/call"})
_arrived: ContextVar[str | None] = ContextVar("asrama_request_state", default=None)
_claimed: ContextVar[str | None] = ContextVar("asrama_confirmation_key", default=None)


log = logging.getLogger(__name__)
UNCLAIMABLE = "The confirmation could not be checked (its store is unreachable); nothing was written. Try again."
FULL = "Too many confirmations are open on this server; nothing was written. Try again in a few minutes."
UNVERIFIED = "The confirmation could not be checked; nothing was written."


class ClaimsFull(Exception):
    """The store holds as many unexpired claims as it may (`args[0]`): a new one is refused, none is forgotten."""


class ClaimStore(Protocol):
    """An atomic set of claimed keys: `claim` is true exactly once per key within `ttl` seconds (or raises
    `ClaimsFull` when it can hold no more); `close` lets go of its connections (at the end of the server's
    lifespan)."""

    async def claim(self, key: str, ttl: float) -> bool: ...

    def close(self) -> None: ...


class MemoryClaims:
    """Claims held by this process: forgotten after their TTL (one TTL for all, so the oldest expire first), at most
    `max_keys`; when that many are unexpired a new claim raises `ClaimsFull` (evicting one would let its
    confirmation run again)."""

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
            if len(self._until) >= self.max_keys:
                raise ClaimsFull(self.max_keys)
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
    """Note the sealed `requestState` as it arrived on a confirming method (in front of the SDK's boundary)."""
    state = ctx.params.get("requestState") if ctx.method in CONFIRMING and ctx.params is not None else None
    token = _arrived.set(state if isinstance(state, str) else None)
    try:
        return await call_next(ctx)
    finally:
        _arrived.reset(token)


class Claimed:
    """Claim the noted state once the SDK's boundary has verified it (behind it)."""

    def __init__(self, claims: ClaimStore, ttl: float) -> None:
        self.claims = claims
        self.ttl = ttl

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        sealed = _arrived.get()
        if sealed is None:
            return await call_next(ctx)
        if not sdk_seams.boundary_verified(ctx.params, sealed):  # the SDK stopped verifying it: fail closed
            log.error("requestState reached the tool unverified", extra={"method": ctx.method})
            self._refuse(UNVERIFIED)
        key = digest(sealed)
        try:
            fresh = await self.claims.claim(key, self.ttl)
        except ClaimsFull as full:
            log.warning("confirmation store full", extra={"max_keys": full.args[0]})
            self._refuse(FULL)
        except Exception as exc:  # fail closed: an unchecked confirmation is never used
            log.error("confirmation store unreachable", extra={"error": type(exc).__name__})
            self._refuse(UNCLAIMABLE)
        if not fresh:
            audit.note_write("replayed")
            raise replayed()
        token = _claimed.set(key)
        try:
            return await call_next(ctx)
        finally:
            _claimed.reset(token)

    @staticmethod
    def _refuse(message: str) -> NoReturn:
        """Refuse the round (`-32603`, audited as refused): nothing runs, nothing is claimed."""
        audit.note_write("refused")
        raise MCPError(code=INTERNAL_ERROR, message=message) from None
