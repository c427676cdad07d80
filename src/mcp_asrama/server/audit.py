"""Disclosure audit (to be implemented): one hash-chained JSON line per request."""

from pathlib import Path
from typing import Any

from mcp.server.context import ServerMiddleware

from mcp_asrama.server.settings import ServerSettings


def middleware(settings: ServerSettings) -> list[ServerMiddleware[Any]]:
    """The MCP middleware that records each request (none while ASRAMA_AUDIT_LOG is unset)."""
    return []


def verify(path: Path) -> tuple[bool, str]:
    """Check the hash chain of an audit file: (intact, a one-line verdict naming the first broken line)."""
    raise NotImplementedError


def who_saw(path: Path, id_anak: str) -> list[dict[str, Any]]:
    """The entries that disclosed `id_anak`: time, subject, client, method and target."""
    raise NotImplementedError
