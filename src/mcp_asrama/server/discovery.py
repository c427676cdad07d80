"""`server/discover` says what is served: every protocol version, not only the modern one.

The SDK's handler lists only `2026-07-28` in `supportedVersions`, although its runner also serves hosts that open
with `initialize` (2024-11-05 … 2025-11-25). The SDK has no setting for it; a middleware (its public hook) adds them.
"""

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp_types import DiscoverResult
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS

SERVED_VERSIONS = [*reversed(MODERN_PROTOCOL_VERSIONS), *reversed(HANDSHAKE_PROTOCOL_VERSIONS)]  # newest first


async def every_served_version(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """List the handshake versions beside the modern ones in a `server/discover` result."""
    result = await call_next(ctx)
    if ctx.method != "server/discover":
        return result
    if isinstance(result, DiscoverResult):
        return result.model_copy(update={"supported_versions": SERVED_VERSIONS})
    if isinstance(result, dict) and "supportedVersions" in result:  # the wire form, as the SDK's boundary returns it
        return {**result, "supportedVersions": SERVED_VERSIONS}
    return result


def middleware() -> list[ServerMiddleware[Any]]:
    """The discovery middleware."""
    return [every_served_version]
