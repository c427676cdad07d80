"""The guard chain of one server, assembled by `install` in the order `guard/__init__` draws.

`Guard.of(settings, local)` builds the policy objects the chain holds (the bearer verifier, the rate limiter, the
confirmation claims and requestState security, the audit), before the server exists: the SDK takes the verifier
and the requestState security as it is built. `install(server, guard, inner=...)` then puts every step in place:
the HTTP half as `server.guard_http` (applied when the transport builds its app; stdio has none), the MCP
middleware, and the tool-level scope (`server.permits`).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp.server.auth.settings import AuthSettings
from mcp.server.context import ServerMiddleware
from mcp.server.request_state import RequestStateSecurity
from mcp.server.transport_security import RequestBodyLimitMiddleware
from starlette.types import ASGIApp

from mcp_asrama import sdk_seams
from mcp_asrama.config import is_loopback, origin_of
from mcp_asrama.runtime.http_guard import LOOPBACK_ORIGINS, HostOriginGate, HttpPolicy
from mcp_asrama.server.asrama_server import AsramaServer, Needs
from mcp_asrama.server.guard import audit, auth, confirm, ratelimit, writes
from mcp_asrama.server.guard.access import Akses, current_principal
from mcp_asrama.server.guard.token_cache import CachingVerifier
from mcp_asrama.server.routing_headers import RoutingHeaderCheck
from mcp_asrama.server.settings import ServerSettings

if TYPE_CHECKING:
    from mcp_asrama.server.sekolah.authority import Authority

HEALTH_PATHS = ("/healthz", "/readyz")  # answered behind the Host/Origin gate only (any Host: load balancers)


def http_policy(settings: ServerSettings) -> HttpPolicy:
    """Host: the loopback names, the public URL's host and a specific bind address. Origin: ASRAMA_ALLOWED_ORIGINS,
    plus the loopback origins when bound to loopback (a local browser client such as the Inspector)."""
    names = [settings.public_url.host] if settings.public_url is not None and settings.public_url.host else []
    origins = [*settings.allowed_origins, *(LOOPBACK_ORIGINS if is_loopback(settings.mcp_host) else ())]
    if settings.auth == "sekolah" and settings.public_url is not None:  # the sign-in pages' own forms
        origins.append(origin_of(settings.public_url))
    return HttpPolicy.of(settings.mcp_host, names, origins)


@dataclass
class Guard:
    """What one server's chain holds; `close` lets go of the stores (at the end of the lifespan)."""

    settings: ServerSettings
    local: Akses  # what the local operator (stdio, or HTTP without auth) sees
    security: RequestStateSecurity
    verifier: CachingVerifier | None
    limiter: ratelimit.RateLimiter
    claims: confirm.ClaimStore
    auditors: list[audit.Auditor]
    authority: "Authority | None" = None  # --auth sekolah: this server is the authorization server
    server: AsramaServer | None = field(default=None)  # set by `install`: the audit asks it which tools write

    @classmethod
    def of(cls, settings: ServerSettings, local: Akses) -> "Guard":
        """The policy objects `settings` configure (raises AuthConfigError, AuditConfigError for unusable ones)."""
        keys = [key.get_secret_value() for key in settings.state_keys]
        security = RequestStateSecurity(keys=keys) if keys else RequestStateSecurity.ephemeral()
        authority = None
        if settings.auth == "sekolah":  # its libraries (PyJWT, Authlib, …) load only for it: a faster start
            from mcp_asrama.server.sekolah.authority import Authority

            authority = Authority(settings)
        guard = cls(
            settings,
            local,
            security,
            authority.provider.verifier if authority else auth.token_verifier(settings),
            ratelimit.RateLimiter(settings),
            confirm.claim_store(settings.confirm_storage),
            [],
            authority,
        )
        guard.auditors = audit.middleware(settings, guard.writes_tool)
        return guard

    @property
    def limited(self) -> bool:
        """Whether requests are rate-limited (a shared, authenticated server)."""
        return ratelimit.applies(self.settings)

    @property
    def auth(self) -> AuthSettings | None:
        """The SDK's settings for the bearer step and, with --auth sekolah, its authorization server (None without
        auth)."""
        return self.authority.auth_settings() if self.authority else auth.auth_settings(self.settings)

    def writes_tool(self, tool: str) -> bool:
        """Whether `tool` writes, as its registration said."""
        return self.server is not None and tool in self.server.write_tools

    def permits(self, needs: frozenset[Needs]) -> bool:
        """Whether the caller of the request in progress may use a tool that needs `needs`: the writes on (and over
        HTTP a token with `asrama:write`), clinic staff (`peran:kesehatan`)."""
        for need in needs:
            if need == "writes" and not writes.allowed(self.settings.writes):
                return False
            if need == "clinic" and not current_principal(self.settings.auth_scope_claim, self.local).akses.klinik:
                return False
        return True

    def close(self) -> None:
        self.claims.close()
        self.limiter.close()


def install(server: AsramaServer, guard: Guard, *, inner: Sequence[ServerMiddleware[Any]] = ()) -> None:
    """Assemble the whole chain on `server` (built with `guard.verifier`, `guard.auth` and `guard.security`), in
    the order drawn in `guard/__init__`; `inner` is the server's own middleware, run behind the audit."""
    settings = guard.settings
    guard.server = server

    def guard_http(mcp: ASGIApp, endpoints: Callable[[ASGIApp], ASGIApp]) -> ASGIApp:
        """Steps 1-4 around the SDK's app (which holds step 5); `endpoints` answers the health checks and the
        methods /mcp does not serve, behind the gate and before everything else."""
        app = ratelimit.wrap_http(mcp, guard.limiter, guard.verifier) if guard.limited else mcp  # 4
        app = RoutingHeaderCheck(app, settings.max_body_bytes)  # 3
        app = guard.authority.wrap(app) if guard.authority else app  # 2b: the sign-in pages (--auth sekolah)
        app = endpoints(RequestBodyLimitMiddleware(app, settings.max_body_bytes))  # 2
        return HostOriginGate(app, http_policy(settings), host_exempt=HEALTH_PATHS)  # 1

    server.guard_http = guard_http
    server.limiter = guard.limiter
    # 6-11: the SDK's own outermost (OpenTelemetry), then ours, the requestState boundary moved innermost. Rate limits
    # protect a shared, authenticated server (the local operator is never throttled) and run outside the audit: a
    # refused request discloses nothing and writes no audit line.
    builtins, boundary, given = sdk_seams.split_at_boundary(server.middleware)
    server.middleware[:] = [
        *builtins,
        *(ratelimit.middleware(guard.limiter) if guard.limited else []),  # 6
        *guard.auditors,  # 7
        *given,
        *inner,  # 8
        confirm.noted,  # 9
        boundary,  # 10
        confirm.Claimed(guard.claims, guard.security.ttl),  # 11
    ]
    server.permits = guard.permits  # 12
