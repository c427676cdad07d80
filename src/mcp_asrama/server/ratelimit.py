"""Rate limits per subject (to be implemented): one token bucket per subject, shared by the MCP and HTTP layers."""

from typing import Any

from mcp.server.auth.provider import TokenVerifier
from mcp.server.context import ServerMiddleware
from starlette.types import ASGIApp

from mcp_asrama.server.settings import ServerSettings


class RateLimiter:
    """Token buckets keyed by subject."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings


def middleware(limiter: RateLimiter) -> list[ServerMiddleware[Any]]:
    """The MCP middleware: a tool call over the limit gets a tool error saying when to retry."""
    return []


def wrap_http(app: ASGIApp, limiter: RateLimiter, verifier: TokenVerifier | None) -> ASGIApp:
    """The HTTP layer: any other request over the limit gets 429 with Retry-After."""
    return app
