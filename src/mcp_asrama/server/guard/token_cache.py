"""Bearer tokens verified once: the SDK's authentication and the rate limiter ask the same cache.

An accepted token is remembered by its SHA-256 until it expires (at most `max_age`); a refused one for
`refusal_ttl` seconds, so a flood repeating a bad token costs one verification per interval. Refusals are logged
aggregated: at most one line per `log_interval`, with counts per reason (never the token).
"""

import hashlib
import logging
import math
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable

from mcp.server.auth.provider import AccessToken, TokenVerifier

log = logging.getLogger(__name__)

# A verification: the token's access info, or None and the reason it is refused (fit for the log).
Check = Callable[[str], Awaitable[tuple[AccessToken | None, str]]]


class RefusalLog:
    """Counts refused tokens by reason and writes one line per interval (the first at once)."""

    def __init__(self, interval: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.interval = interval
        self.clock = clock
        self._counts: Counter[str] = Counter()
        self._written_at = -math.inf

    def refused(self, reason: str) -> None:
        self._counts[reason] += 1
        now = self.clock()
        if now - self._written_at >= self.interval:
            log.info("bearer token refused", extra={"refused": dict(self._counts), "interval_s": self.interval})
            self._counts.clear()
            self._written_at = now


class CachingVerifier(TokenVerifier):
    """The SDK's `TokenVerifier` over a `check`, remembering at most `max_entries` tokens (by hash only)."""

    def __init__(
        self,
        check: Check,
        *,
        clock: Callable[[], float] = time.time,
        max_entries: int = 4096,
        max_age: float = 300.0,
        refusal_ttl: float = 10.0,
        refusals: RefusalLog | None = None,
    ) -> None:
        self.check = check
        self.clock = clock
        self.max_entries = max_entries
        self.max_age = max_age
        self.refusal_ttl = refusal_ttl
        self.refusals = refusals or RefusalLog()
        # token hash -> (access or None for a refusal, valid until)
        self._entries: OrderedDict[bytes, tuple[AccessToken | None, float]] = OrderedDict()

    @property
    def remembered(self) -> int:
        """How many tokens are remembered (no `__len__`: an empty cache must not be a falsy verifier)."""
        return len(self._entries)

    async def verify_token(self, token: str) -> AccessToken | None:
        """The token's access info when it is valid, else None (the SDK answers 401)."""
        key = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        now = self.clock()
        cached = self._entries.get(key)
        if cached is not None:
            access, until = cached
            if now < until and (access is None or access.expires_at is None or now < access.expires_at):
                self._entries.move_to_end(key)
                if access is None:
                    self.refusals.refused("repeated")
                return access
            del self._entries[key]
        try:
            access, reason = await self.check(token)
        except Exception as exc:  # a verifier that fails is a refusal, never a 500
            access, reason = None, f"verifier failed ({type(exc).__name__})"
        if access is None:
            self.refusals.refused(reason)
            self._remember(key, None, now + self.refusal_ttl)
            return None
        expiry = math.inf if access.expires_at is None else float(access.expires_at)
        self._remember(key, access, min(expiry, now + self.max_age))
        return access

    def _remember(self, key: bytes, access: AccessToken | None, until: float) -> None:
        self._entries[key] = (access, until)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
