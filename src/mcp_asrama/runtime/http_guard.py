"""The door of both HTTP servers (the data service and the MCP server): which Host names and Origins they accept.

Against DNS rebinding a server answers only requests naming it: the loopback names, a specific bind address and
the names configured for it (421 otherwise); a browser page from another origin is refused (403) unless listed.
A request without an `Origin` is accepted (non-browser clients send none); one without a `Host` is not.
No CORS headers are ever sent: a listed origin may call, nothing invites others to. Refusals are not logged one by
one: the access log counts them per interval.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
WILDCARD_BINDS = frozenset({"", "0.0.0.0", "::"})  # noqa: S104 - names of a wildcard bind, not a bind


def hostname(host: str) -> str | None:
    """The name in a Host header (`[::1]:8001` → `::1`, `Sekolah.example:443` → `sekolah.example`)."""
    value = host.strip().lower()
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        well_formed = bool(bracket) and (rest == "" or (rest.startswith(":") and rest[1:].isdigit()))
    else:
        name, colon, port = value.partition(":")
        well_formed = not colon or port.isdigit()
    return name if name and well_formed else None


def _origin(value: str) -> str:
    return value.strip().lower().rstrip("/")


@dataclass(frozen=True)
class HttpPolicy:
    """Which Host names (any port) and Origins (exact, or `scheme://host:*` for any port) a server accepts."""

    hosts: frozenset[str]
    origins: tuple[str, ...]

    @classmethod
    def of(cls, bind: str, names: Iterable[str] = (), origins: Iterable[str] = ()) -> "HttpPolicy":
        """The loopback names, `bind` unless it is a wildcard, and `names`; exactly the `origins` given."""
        hosts = set(LOOPBACK_HOSTS) | {n.strip().strip("[]").lower() for n in names if n.strip()}
        address = bind.strip().strip("[]").lower()
        if address not in WILDCARD_BINDS:
            hosts.add(address)
        return cls(frozenset(hosts), tuple(dict.fromkeys(_origin(o) for o in origins if o.strip())))

    def host_ok(self, host: str | None) -> bool:
        return host is not None and hostname(host) in self.hosts

    def origin_ok(self, origin: str) -> bool:
        value = _origin(origin)
        for allowed in self.origins:
            if value == allowed:
                return True
            if allowed.endswith(":*"):
                base, _, port = value.rpartition(":")
                if base == allowed[:-2] and port.isdigit():
                    return True
        return False


def refusal(status: int, text: str) -> PlainTextResponse:
    """A short plain-text refusal that no cache keeps."""
    return PlainTextResponse(text, status_code=status, headers={"Cache-Control": "no-store"})


class HostOriginGate:
    """Pure ASGI, on every path: a foreign Origin → 403, then a foreign Host → 421 (except on `host_exempt` paths,
    such as health checks a load balancer sends by IP address); everything else goes on to `app`."""

    def __init__(self, app: ASGIApp, policy: HttpPolicy, host_exempt: Iterable[str] = ()) -> None:
        self.app = app
        self.policy = policy
        self.host_exempt = frozenset(host_exempt)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is not None and not self.policy.origin_ok(origin):
            await refusal(403, "Invalid Origin header")(scope, receive, send)
            return
        if scope["path"] not in self.host_exempt and not self.policy.host_ok(headers.get("host")):
            await refusal(421, "Invalid Host header")(scope, receive, send)
            return
        await self.app(scope, receive, send)
