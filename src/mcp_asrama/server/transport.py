"""Serving the MCP server: stdio (the host starts us as a subprocess) or stateless Streamable HTTP at /mcp."""

import logging
import math
import time

import anyio
import httpx2
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError, JSONRPCNotification
from mcp_types.methods import SPEC_CLIENT_METHODS
from pydantic import ValidationError
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_asrama import sdk_seams
from mcp_asrama.client import make_http_client
from mcp_asrama.server.asrama_server import AsramaServer
from mcp_asrama.server.guard.chain import HEALTH_PATHS
from mcp_asrama.server.response_mode import ResponseMode
from mcp_asrama.server.settings import ServerSettings
from mcp_asrama.server.stdio_pipes import loop_stdio

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"


def _rejection(problem: Exception | None) -> SessionMessage:
    """-32700 for a line that is not JSON, -32600 for JSON that is not a valid request."""
    if isinstance(problem, ValidationError) and any(e["type"] == "json_invalid" for e in problem.errors()):
        error = ErrorData(code=PARSE_ERROR, message="Parse error")
    else:
        error = ErrorData(code=INVALID_REQUEST, message="Invalid Request")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error))


async def serve_stdio(server: AsramaServer) -> None:
    """Serve on stdin/stdout until stdin closes; malformed lines are answered instead of silently dropped.

    The SDK drops such lines without a reply, and offers no hook for it: a relay between its stdio transport
    and its low-level server answers them (`sdk_seams.run_lowlevel`).
    """
    async with loop_stdio() as (read_stream, write_stream):
        relay_send, relay_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)

        async def relay() -> None:
            async with relay_send:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        log.info("answered a malformed stdin line", extra={"problem": type(item).__name__})
                        await write_stream.send(_rejection(item))
                    elif isinstance(item.message, JSONRPCNotification) and item.message.method in SPEC_CLIENT_METHODS:
                        # A request without a usable id ("id": null) parses as a notification: answer it.
                        await write_stream.send(_rejection(None))
                    else:
                        await relay_send.send(item)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(relay)
            await sdk_seams.run_lowlevel(server, relay_receive, write_stream)


# --- Streamable HTTP ---------------------------------------------------------------------------------------


class Readiness:
    """Whether tool calls can work: the data service answers an authenticated `GET /kamar` with 200 (it needs our
    token and the service's database), else the reason in one line for the IT person (never the token, never the
    service's own body).

    The answer is reused for `reuse` seconds and one probe runs at a time, so an unauthenticated flood of
    `/readyz` cannot become a flood of requests to the data service.
    """

    def __init__(self, settings: ServerSettings, *, timeout: float = 2.0, reuse: float = 2.0) -> None:
        self.settings = settings
        self.timeout = min(timeout, settings.api_timeout)
        self.reuse = reuse
        self._lock = anyio.Lock()
        self._checked_at = -math.inf
        self._reason: str | None = None

    async def _probe(self) -> str | None:
        """None when ready, else why not."""
        settings = self.settings
        async with make_http_client(settings.base_url, token=settings.token, timeout=self.timeout) as http:
            try:
                status = (await http.get("/kamar")).status_code
            except httpx2.HTTPError as exc:
                log.warning("data service not reachable", extra={"error": type(exc).__name__})
                return f"the data service does not answer ({type(exc).__name__}): check ASRAMA_API_URL"
        if status == 200:
            return None
        log.warning("data service not ready", extra={"status": status})
        if status in (401, 403) and settings.token is None:
            return f"we have no token for the data service (HTTP {status}): set ASRAMA_API_TOKEN"
        if status in (401, 403):
            return f"the data service refused our token (HTTP {status}): check ASRAMA_API_TOKEN"
        return f"the data service answered GET /kamar with HTTP {status}: see its log"

    async def reason(self) -> str | None:
        """None when ready, else why not (one line)."""
        async with self._lock:
            if time.monotonic() - self._checked_at >= self.reuse:
                self._reason = await self._probe()
                self._checked_at = time.monotonic()
            return self._reason


def _answer(status: int, body: dict[str, str], **headers: str) -> Response:
    return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store", **headers})


NOT_A_STREAM = (
    "This is an MCP endpoint (Streamable HTTP, stateless): send JSON-RPC requests with POST. "
    "GET /healthz says whether the server is up."
)


class HealthAndPost:
    """`/healthz` and `/readyz` (no auth, no data); any method but POST on /mcp a quick 405 (a stateless server
    has no stream to GET and no session to DELETE: the SDK would hold a GET open for ever); everything else goes
    on to `app` (the rest of the guard chain, then the SDK: auth, Protected Resource Metadata, MCP)."""

    def __init__(self, app: ASGIApp, readiness: Readiness) -> None:
        self.readiness = readiness
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in HEALTH_PATHS:
            await self._health(scope["path"], scope["method"])(scope, receive, send)
            return
        if scope["type"] == "http" and scope["path"] == MCP_PATH and scope["method"] != "POST":
            response = PlainTextResponse(NOT_A_STREAM, status_code=405, headers={"Allow": "POST"})
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _health(self, path: str, method: str) -> ASGIApp:
        if method not in ("GET", "HEAD"):
            return _answer(405, {"status": "method not allowed"}, Allow="GET, HEAD")

        async def respond(scope: Scope, receive: Receive, send: Send) -> None:
            if path == "/healthz":
                response = _answer(200, {"status": "ok"})
            elif (reason := await self.readiness.reason()) is None:
                response = _answer(200, {"status": "ready"})
            else:
                response = _answer(503, {"status": "not ready", "alasan": reason})
            await response(scope, receive, send)

        return respond


def http_app(server: AsramaServer, settings: ServerSettings) -> ASGIApp:
    """The stateless Streamable HTTP app at /mcp inside the HTTP half of the guard chain (`server.guard_http`:
    Host/Origin gate, body limit, routing headers, rate limit; drawn in `guard/__init__`), with the health routes
    behind the gate (any Host).

    A request that asks for progress (or listens) is answered with an SSE stream, so that its notifications travel
    ahead of its result (the SDK drops them in JSON mode); every other request with one JSON body
    (`response_mode`).

    With ASRAMA_AUTH=jwt the SDK requires a valid bearer token on /mcp (401 with `WWW-Authenticate` naming the
    Protected Resource Metadata, 403 `insufficient_scope`) and serves that metadata at the RFC 9728 path.
    """
    streamed, plain = (
        server.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,
            json_response=json_response,
            # The gate checks Host and Origin on every path and bind; the SDK would only on loopback, only on /mcp.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
            max_request_body_size=settings.max_body_bytes,
            host=settings.mcp_host,
        )
        for json_response in (False, True)
    )
    readiness = Readiness(settings)
    return server.guard_http(ResponseMode(streamed, plain), lambda app: HealthAndPost(app, readiness))
