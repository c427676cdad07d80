"""Rate limits per subject: one token bucket per subject (`sub`), shared by the MCP and the HTTP layer.

`ASRAMA_RATE_LIMIT` (`60/min`; also `/s`, `/h`) is the refill rate and `ASRAMA_RATE_BURST` (20) the bucket's
size. Limits apply to a shared server only: over HTTP with authentication (`applies`). The subject is the validated
access token's subject (its client id when it has none). Buckets live in this process (see the README on
replicas); a bucket idle long enough to be full again is forgotten, and at most `max_subjects` are kept.

What costs a token: every JSON-RPC request that reaches data or does work for it — `tools/call`, `resources/read`,
`prompts/get`, `completion/complete`, subscriptions, any method we do not know — and, over HTTP, any other request
to the app (a GET, a body that is not JSON or is over the size limit). What does not:
- notifications (`notifications/initialized`, `notifications/cancelled`, ...) and JSON-RPC responses: there is no
  reply to refuse them with, and dropping them would break sessions;
- the handshake (`initialize`, `server/discover`) and `ping`: no data, little work, and a host must always be able
  to connect, see it is alive, and then hear from its next call when to retry;
- the definition lists (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`): static,
  cacheable, no data — and the SDK's client lists tools by itself to check results, so a host would pay for its
  own bookkeeping;
- `/healthz`, `/readyz` and `/.well-known/...` (auth metadata) over HTTP.

Where it is charged, so that nothing is charged twice:
- `wrap_http`, in front of the SDK's authentication, charges every HTTP request except a `tools/call` (the method
  from the JSON body, which `routing_headers` read once and checked against the headers) and the free messages
  above, and marks the request as charged. Over the limit: HTTP 429 with `Retry-After` (seconds) and a JSON-RPC
  error `-32029` carrying the request's id. A request without a valid bearer token costs a token of its client
  address's bucket (an anonymous flood is refused cheaply), then the SDK answers 401.
- `middleware` charges what the HTTP layer left to it (a `tools/call` over HTTP) and, on stdio and in memory,
  every request that costs a token. Over the limit, a `tools/call` is a tool error the model can read ("coba lagi
  dalam 12 detik"), and any other request a JSON-RPC error `-32029` with `data.retryAfter`.

Refusals are logged at most once a minute per subject. The buckets are plain synchronous code (no `await` inside),
hence atomic under asyncio; a lock keeps them safe should a worker thread ever use them too.
"""

import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent
from mcp_types.methods import serialize_server_result
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_asrama.server.guard.access import LOCAL_SUBJECT
from mcp_asrama.server.methods import NO_DATA_METHODS
from mcp_asrama.server.routing_headers import MESSAGE, UNREADABLE, json_rpc_error, request_id
from mcp_asrama.server.settings import ServerSettings

log = logging.getLogger(__name__)

# A server-defined JSON-RPC error (JSON-RPC leaves -32000..-32099 to implementations); 29 as in HTTP 429.
RATE_LIMITED = -32029
TOOL_CALL = "tools/call"
EXEMPT_PATHS = frozenset({"/healthz", "/readyz"})
WELL_KNOWN = "/.well-known/"
# Set in the ASGI scope by `wrap_http` once it has charged a request; the MCP middleware then charges nothing.
CHARGED = "mcp_asrama.ratelimit.charged"
ANONYMOUS_PREFIX = "anonymous:"  # + the client address: the bucket of requests without a valid token
LOG_EVERY = 60.0  # seconds between two log lines about one subject's refusals

_PERIODS = {"s": 1.0, "sec": 1.0, "min": 60.0, "h": 3600.0, "hour": 3600.0}


def applies(settings: ServerSettings) -> bool:
    """Whether requests are rate-limited: on a shared server, i.e. over HTTP with authentication. The local operator
    (stdio, or HTTP without auth, which binds loopback only) is never throttled."""
    return settings.transport == "http" and settings.auth != "none"


def parse_rate(text: str) -> float:
    """Tokens per second from `N/s`, `N/min` or `N/h` (also `sec`, `hour`)."""
    count, _, period = text.strip().partition("/")
    if not count.strip().isdigit() or period.strip() not in _PERIODS:
        raise ValueError(f"rate limit {text!r} is not of the form N/s, N/min or N/h")
    if int(count) < 1:
        raise ValueError(f"rate limit {text!r} must allow at least 1 request per period")
    return int(count) / _PERIODS[period.strip()]


def retry_seconds(wait: float) -> int:
    """Whole seconds to wait, rounded up, at least 1 (the value of `Retry-After`)."""
    return max(1, math.ceil(wait - 1e-9))


def retry_message(seconds: int) -> str:
    """What the model (or the host) reads when refused."""
    return f"Terlalu banyak permintaan; coba lagi dalam {seconds} detik."


def subject_of(token: AccessToken | None) -> str:
    """The rate-limit subject of a validated token, as `access.current_principal` names it; `local` without one."""
    if token is None:
        return LOCAL_SUBJECT
    return token.subject or token.client_id


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class RateLimiter:
    """Token buckets keyed by subject: `rate` tokens a second up to `burst`; each request takes one."""

    def __init__(
        self,
        settings: ServerSettings,
        *,
        clock: Callable[[], float] = time.monotonic,
        max_subjects: int = 10_000,
    ) -> None:
        self.settings = settings
        self.rate = parse_rate(settings.rate_limit)
        self.burst = settings.rate_burst
        self.clock = clock
        self.max_subjects = max_subjects
        self._full_after = self.burst / self.rate  # seconds of idleness after which any bucket is full again
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._buckets)

    def acquire(self, subject: str) -> float:
        """Take one token from `subject`'s bucket: 0.0 if granted, else the seconds until one is available."""
        with self._lock:
            now = self.clock()
            bucket = self._buckets.pop(subject, None)
            if bucket is None:
                bucket = _Bucket(tokens=float(self.burst), stamp=now)
            else:
                elapsed = max(0.0, now - bucket.stamp)
                bucket.tokens = min(float(self.burst), bucket.tokens + elapsed * self.rate)
                bucket.stamp = now
            self._evict(now)
            self._buckets[subject] = bucket
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                return 0.0
            return (1.0 - bucket.tokens) / self.rate

    def _evict(self, now: float) -> None:
        """Forget buckets idle long enough to be full (a fresh one is the same), then the oldest over the cap."""
        while self._buckets:
            oldest = next(iter(self._buckets.values()))
            if now - oldest.stamp < self._full_after:
                break
            self._buckets.popitem(last=False)
        while len(self._buckets) >= self.max_subjects:
            self._buckets.popitem(last=False)


_logged: dict[str, float] = {}  # subject -> when its last refusal was logged


def _log_refusal(subject: str, method: str, seconds: int) -> None:
    """Log a refusal, at most once per `LOG_EVERY` seconds per subject (a flood is not a flood of log lines); never
    an anonymous client's address (the access log counts those 429s)."""
    if subject.startswith(ANONYMOUS_PREFIX):
        return
    now = time.monotonic()
    if now - _logged.get(subject, -math.inf) < LOG_EVERY:
        return
    if len(_logged) >= 10_000:
        _logged.clear()
    _logged[subject] = now
    log.info("rate limited", extra={"subject": subject, "method": method, "retry_after": seconds})


# --- the MCP layer ---------------------------------------------------------------------------------------------


def _charged_over_http(ctx: ServerRequestContext[Any, Any]) -> bool:
    scope = getattr(ctx.request, "scope", None)
    return isinstance(scope, Mapping) and bool(scope.get(CHARGED))


def _tool_error(seconds: int, version: str) -> dict[str, Any]:
    """The wire form of a tool error for `version` (a middleware that answers itself owns the envelope)."""
    result = CallToolResult(content=[TextContent(type="text", text=retry_message(seconds))], is_error=True)
    dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    try:
        return serialize_server_result(TOOL_CALL, version, dumped)
    except (KeyError, ValueError):  # a version the surface does not know: the plain dump
        return dumped


def middleware(limiter: RateLimiter) -> list[ServerMiddleware[Any]]:
    """The MCP middleware: a tool call over the limit gets a tool error saying when to retry."""

    async def rate_limit(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.request_id is None or ctx.method in NO_DATA_METHODS or _charged_over_http(ctx):
            return await call_next(ctx)
        subject = subject_of(get_access_token())
        wait = limiter.acquire(subject)
        if not wait:
            return await call_next(ctx)
        seconds = retry_seconds(wait)
        _log_refusal(subject, ctx.method, seconds)
        if ctx.method == TOOL_CALL:
            return _tool_error(seconds, ctx.protocol_version)
        raise MCPError(code=RATE_LIMITED, message=retry_message(seconds), data={"retryAfter": seconds})

    return [rate_limit]


# --- the HTTP layer --------------------------------------------------------------------------------------------


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _bearer(scope: Scope) -> str | None:
    """The bearer token, read as the SDK's `BearerAuthBackend` reads it."""
    value = _header(scope, b"authorization")
    if not value or not value.lower().startswith("bearer "):
        return None
    return value[7:]


def _free(method: object, is_request: bool) -> bool:
    """A message the HTTP layer does not charge: tool calls (charged by the MCP layer) and free messages."""
    return not is_request or (isinstance(method, str) and (method == TOOL_CALL or method in NO_DATA_METHODS))


class _HttpRateLimit:
    def __init__(self, app: ASGIApp, limiter: RateLimiter, verifier: TokenVerifier | None) -> None:
        self.app = app
        self.limiter = limiter
        self.verifier = verifier

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if scope["type"] != "http" or path in EXEMPT_PATHS or path.startswith(WELL_KNOWN):
            await self.app(scope, receive, send)
            return
        payload = scope.get(MESSAGE, UNREADABLE)
        subject = await self._subject(scope)
        if subject is None:  # no valid token: a bucket per client address, then the SDK answers 401
            client = scope.get("client")
            subject = f"{ANONYMOUS_PREFIX}{client[0] if client else 'unknown'}"
        elif not self._charged(scope, payload):
            await self.app(scope, receive, send)
            return
        wait = self.limiter.acquire(subject)
        if wait:
            seconds = retry_seconds(wait)
            _log_refusal(subject, "http", seconds)
            await json_rpc_error(
                send,
                429,
                RATE_LIMITED,
                retry_message(seconds),
                request_id(payload),
                data={"retryAfter": seconds},
                **{"Retry-After": str(seconds)},
            )
            return
        if not subject.startswith(ANONYMOUS_PREFIX):
            scope[CHARGED] = True
        await self.app(scope, receive, send)

    async def _subject(self, scope: Scope) -> str | None:
        """The validated token's subject (`local` without auth), or None: the verifier is the SDK's, so a token is
        verified once per request (see token_cache)."""
        if self.verifier is None:
            return LOCAL_SUBJECT
        token = _bearer(scope)
        if token is None:
            return None
        try:
            access = await self.verifier.verify_token(token)
        except Exception as exc:  # the SDK's own authentication will meet (and answer) the same failure
            log.warning("token verification failed", extra={"error": type(exc).__name__})
            return None
        if access is None or (access.expires_at is not None and access.expires_at < time.time()):
            return None
        return subject_of(access)

    @staticmethod
    def _charged(scope: Scope, payload: Any) -> bool:
        """Whether this request costs a token here: anything but a tool call (the MCP layer charges those), a
        free message, a notification or a response."""
        if scope.get("method") != "POST" or not isinstance(payload, dict):
            return True
        if "method" not in payload:  # a JSON-RPC response
            return False
        return not _free(payload.get("method"), "id" in payload)


def wrap_http(app: ASGIApp, limiter: RateLimiter, verifier: TokenVerifier | None) -> ASGIApp:
    """The HTTP layer (behind `routing_headers.RoutingHeaderCheck`, which reads the body): any other request over
    the limit, and any request without a valid token over its client address's limit, gets 429 with Retry-After."""
    return _HttpRateLimit(app, limiter, verifier)
