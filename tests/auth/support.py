"""Raw JSON-RPC over HTTP in either protocol era, and the SDK client carrying a bearer token."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

MODERN = "2026-07-28"
ERAS = ["legacy", MODERN]
TIMEOUT = 15.0


def rpc(
    method: str, params: dict[str, Any] | None = None, *, era: str = "legacy", id: int = 1
) -> tuple[dict[str, Any], dict[str, str]]:
    """A request body and the headers its era needs (2026-07-28: `_meta`, MCP-Protocol-Version, Mcp-Method/Name)."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method, "params": dict(params or {})}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if era == MODERN:
        body["params"]["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
        headers |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
        if method == "tools/call":
            headers["Mcp-Name"] = body["params"]["name"]
    return body, headers


def post(
    url: str,
    method: str = "tools/list",
    params: dict[str, Any] | None = None,
    *,
    era: str = "legacy",
    token: str | None = None,
    headers: dict[str, str] | None = None,
) -> httpx2.Response:
    """POST one JSON-RPC request; `headers` override the era's."""
    body, sent = rpc(method, params, era=era)
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    return httpx2.post(url, json=body, headers=sent | (headers or {}), timeout=TIMEOUT)


@asynccontextmanager
async def bearer_client(url: str, token: str, mode: str) -> AsyncIterator[Client]:
    """The SDK's client over Streamable HTTP, sending `Authorization: Bearer <token>` on every request."""
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode, cache=None) as client,
    ):
        yield client
