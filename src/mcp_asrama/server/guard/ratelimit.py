"""Rate limits per subject (`sub`), shared by the MCP and the HTTP layer, and by replicas through one store.

`ASRAMA_RATE_LIMIT` (`60/min`; also `/s`, `/h`) is the rate r and `ASRAMA_RATE_BURST` (20) the burst N: a subject
may make at most N requests in any moving window of N/r seconds (rounded up to whole seconds; with the defaults, 20
in any 20 s). A burst of N is served at once, and a subject that keeps going is held to the rate: r a second over
every window. A request frees its place when it leaves the window (the moving window of the `limits` library, not
a token bucket): after a full burst the next one waits until the burst's first request is a window old (20 s by
default), then up to N again. Should N/r be under a second, the window is one second holding a second's worth of
the rate (the rate wins over a smaller burst). Refused requests take nothing.

The windows live in the store `ASRAMA_RATE_LIMIT_STORAGE` names (`limits_storage`): `memory://` (default, this
process; a subject's entries are forgotten once they leave the window, so memory holds at most one window of
requests) or a Redis every replica shares (`redis://host:6379/0`), where the check and the hit are one atomic
script: replicas behind one balancer share one budget per subject. A store that cannot be reached (or answers
later than `STORE_TIMEOUT`) lets the request through: rate limits protect against abuse, they are not a safety
invariant like confirmation claims. That is logged at most once a minute, never answered with a 5xx.

Limits apply to a shared server only: over HTTP with authentication (`applies`). The subject is the validated
access token's subject (its client id when it has none).

What costs a request: every JSON-RPC request that reaches data or does work for it — `tools/call`, `resources/read`,
`prompts/get`, `completion/complete`, subscriptions, any method we do not know — and, over HTTP, any other request
to the app (a GET, a body that is not JSON or is over the size limit). What does not:
- notifications (`notifications/initialized`, `notifications/cancelled`, ...) and JSON-RPC responses: there is no
  reply to refuse them with, and dropping them would break sessions;
- the handshake (`initialize`, `server/discover`) and `ping`: no data, little work, and a host must always be able
  to connect, see it is alive, and then hear from its next call when to retry;
- the definition lists (`tools/list`, `prompts/list`, `resources/list`, `resources/templates/list`): static,
  cacheable, no data — and the SDK's client lists tools by itself to check results, so a host would pay for its
  own bookkeeping.
  These free requests are metered apart, over HTTP, in a window `FREE_FACTOR` (10) times as large (200 in any
  20 s by default): no host comes near it, and a flood of them is refused (429) before it costs CPU; the access
  log counts them instead of writing a line each (`logs.ROUTINE`);
- `/healthz`, `/readyz` and `/.well-known/...` (auth metadata) over HTTP.

Where it is charged, so that nothing is charged twice:
- `wrap_http`, in front of the SDK's authentication, charges every HTTP request except a `tools/call` (the method
  from the JSON body, which `routing_headers` read once and checked against the headers) and the free messages
  above, and marks the request as charged. Over the limit: HTTP 429 with `Retry-After` (seconds) and a JSON-RPC
  error `-32029` carrying the request's id; `Retry-After` is when the window's oldest request leaves it (the store's
  `get_window_stats`). A request without a valid bearer token is charged to its client address (an anonymous
  flood is refused cheaply), then the SDK answers 401.
- `middleware` charges what the HTTP layer left to it (a `tools/call` over HTTP) and, on stdio and in memory,
  every request that costs. Over the limit, a `tools/call` is a tool error the model can read ("coba lagi
  dalam 12 detik"), and any other request a JSON-RPC error `-32029` with `data.retryAfter`.

Refusals are logged at most once a minute per subject.
"""

import logging
import math
import time
from collections.abc import Mapping
from typing import Any

import anyio
from limits import RateLimitItemPerSecond
from limits.aio.strategies import MovingWindowRateLimiter
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent
from mcp_types.methods import serialize_server_result
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_asrama.server.guard.access import LOCAL_SUBJECT
from mcp_asrama.server.guard.limits_storage import LimitsStorage
from mcp_asrama.server.method_kinds import NO_DATA_METHODS
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
ANONYMOUS_PREFIX = "anonymous:"  # + the client address: the subject of requests without a valid token
LOG_EVERY = 60.0  # seconds between two log lines about one subject's refusals, or about an unreachable store
STORE_TIMEOUT = 1.0  # seconds a check may wait for the store before the request is let through
NAMESPACE = "asrama-rate"  # the storage keys' prefix, apart from the confirmation claims'
FREE_NAMESPACE = "asrama-rate-free"  # the free requests' windows
FREE_FACTOR = 10  # the free requests' window holds this many times the rate and the burst

_PERIODS = {"s": 1.0, "sec": 1.0, "min": 60.0, "h": 3600.0, "hour": 3600.0}


def applies(settings: ServerSettings) -> bool:
    """Whether requests are rate-limited: on a shared server, i.e. over HTTP with authentication. The local operator
    (stdio, or HTTP without auth, which binds loopback only) is never throttled."""
    return settings.transport == "http" and settings.auth != "none"


def parse_rate(text: str) -> float:
    """Requests per second from `N/s`, `N/min` or `N/h` (also `sec`, `hour`)."""
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


def window(rate: float, burst: int) -> RateLimitItemPerSecond:
    """At most `burst` requests in any N/r seconds (whole seconds, at least one, holding at least the rate)."""
    seconds = max(1, math.ceil(burst / rate - 1e-9))
    return RateLimitItemPerSecond(max(burst, math.floor(rate * seconds + 1e-9)), seconds)


class RateLimiter:
    """One moving window per subject, in the store ASRAMA_RATE_LIMIT_STORAGE names; each request is one hit."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.item = window(parse_rate(settings.rate_limit), settings.rate_burst)
        self.free_item = window(parse_rate(settings.rate_limit) * FREE_FACTOR, settings.rate_burst * FREE_FACTOR)
        self._store = LimitsStorage(settings.rate_limit_storage)
        self._strategy = MovingWindowRateLimiter(self._store.storage)
        self._failed_at = -math.inf  # when an unreachable store was last logged

    async def acquire(self, subject: str, cost: int = 1, *, free: bool = False) -> float:
        """`cost` hits in `subject`'s window (all or none; `free`: the free requests' window): 0.0 if granted (or if
        the store cannot say), else the seconds until the window's oldest request leaves it."""
        item, namespace = (self.free_item, FREE_NAMESPACE) if free else (self.item, NAMESPACE)
        try:
            with anyio.fail_after(STORE_TIMEOUT):
                if await self._strategy.hit(item, namespace, subject, cost=cost):
                    return 0.0
                stats = await self._strategy.get_window_stats(item, namespace, subject)
        except Exception as exc:  # fail open: an unreachable store must not take the server down with it
            self._unreachable(exc)
            return 0.0
        return max(stats.reset_time - time.time(), 1e-3)  # refused, even if the window freed a place meanwhile

    def _unreachable(self, exc: Exception) -> None:
        now = time.monotonic()
        if now - self._failed_at >= LOG_EVERY:
            self._failed_at = now
            log.error("rate limit store unreachable; requests let through", extra={"error": type(exc).__name__})

    def close(self) -> None:
        """Let go of the store's connections (at the end of the server's lifespan)."""
        self._store.close()


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
        wait = await limiter.acquire(subject)
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
        anonymous = subject is None
        if subject is None:  # no valid token: charged to the client address, then the SDK answers 401
            client = scope.get("client")
            subject = f"{ANONYMOUS_PREFIX}{client[0] if client else 'unknown'}"
        free = not anonymous and self._free_request(scope, payload)
        if not anonymous and not free and not self._charged(scope, payload):
            await self.app(scope, receive, send)
            return
        wait = await self.limiter.acquire(subject, free=free)
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
        if not anonymous and not free:  # the free window is its own: the MCP layer's token is still to be taken
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
    def _free_request(scope: Scope, payload: Any) -> bool:
        """A request of a free method (`NO_DATA_METHODS`): metered in the free window."""
        return (
            scope.get("method") == "POST"
            and isinstance(payload, dict)
            and "id" in payload
            and isinstance(payload.get("method"), str)  # a hostile body's method may be a list or an object
            and payload["method"] in NO_DATA_METHODS
        )

    @staticmethod
    def _charged(scope: Scope, payload: Any) -> bool:
        """Whether this request is charged here: anything but a tool call (the MCP layer charges those), a
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
