"""The routes of bench/latency.py: the `cari_anak` queries, and each way of sending one (direct REST, MCP over
stdio or HTTP through the SDK's session, its `Client.call_tool`, a raw POST, an argument error)."""

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
from mcp import Client
from mcp_types import CallToolResult

import common


@dataclass(frozen=True)
class Query:
    """One `cari_anak` call: a label, the tool's arguments, and the `/anak` query string our server sends."""

    label: str
    arguments: dict[str, Any]

    @property
    def params(self) -> dict[str, Any]:
        """Our server sends `limit` always and `offset` only when it is not 0; so did the tutorial's (never
        offset), so this is also the tutorial's request."""
        return {"limit": 20, **self.arguments}


TIMED = [
    Query("kelas=7A, limit=20", {"kelas": "7A", "limit": 20}),
    Query("nama=sari, limit=20", {"nama": "sari", "limit": 20}),
]
SIZED = [*TIMED, Query("kelas=7A, limit=100", {"kelas": "7A", "limit": 100})]  # sizes only: a bigger page too


@dataclass
class Route:
    """A way to run a query, and its samples (ms) per query label.

    `judged`: held to the latency target; `checked`: its answer must list the same students as the service's;
    `baseline`: the direct route its ratio is to (None: the first route).
    """

    name: str
    call: Callable[[Query], Awaitable[dict[str, Any]]]
    judged: bool = True
    checked: bool = True
    baseline: "Route | None" = None
    pid: int | None = None  # --variants: the process serving this route (a direct route's: the service)
    upstream: int | None = None  # --variants: the service process its calls reach
    samples: dict[str, list[float]] = field(default_factory=dict)
    cpu_ms: float | None = None  # CPU of `pid` in the timed rounds


# --- routes ----------------------------------------------------------------------------------------------


def direct_route(http: httpx2.AsyncClient, name: str = "direct REST") -> Route:
    async def call(query: Query) -> dict[str, Any]:
        response = await http.get("/anak", params=query.params)
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body

    return Route(name, call, judged=False, checked=False)


def _answer(name: str, query: Query, result: CallToolResult) -> dict[str, Any]:
    if result.is_error or result.structured_content is None:
        raise RuntimeError(f"{name}: cari_anak({query.arguments}) failed: {common.text_of(result)}")
    return {"structured": result.structured_content, "text": common.text_of(result)}


async def _ignore_progress(progress: float, total: float | None, message: str | None) -> None:
    """The streamed route's progress callback: the reports are heard (framed, parsed) and dropped."""


def mcp_route(name: str, client: Client, *, progress: bool = False) -> Route:
    """`tools/call` as a round trip on the wire: the request framed and sent, the result received and parsed.
    `progress`: the call asks for progress (a progress token), which over HTTP makes the answer an SSE stream."""
    listener = _ignore_progress if progress else None

    async def call(query: Query) -> dict[str, Any]:
        return _answer(
            name, query, await common.round_trip(client, common.tool_call("cari_anak", query.arguments), listener)
        )

    return Route(name, call, judged=not progress)


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
MODERN_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "cari_anak",
}


def raw_http_route(name: str, http: httpx2.AsyncClient) -> Route:
    """`tools/call` (2026-07-28) POSTed by the same keep-alive httpx2 client as the direct route, its JSON answer
    parsed: the server's part of an MCP call over HTTP, without the SDK client's."""

    async def call(query: Query) -> dict[str, Any]:
        params = {"name": "cari_anak", "arguments": query.arguments, "_meta": MODERN_META}
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
        response = await http.post("/mcp", json=body, headers=MODERN_HEADERS)
        response.raise_for_status()
        result = response.json()["result"]
        if result["isError"]:
            raise RuntimeError(f"{name}: cari_anak({query.arguments}) failed: {result['content'][0]['text']}")
        return {"structured": result["structuredContent"], "text": result["content"][0]["text"]}

    return Route(name, call, judged=False)


def sdk_client_route(name: str, client: Client) -> Route:
    """The SDK's `Client.call_tool`: the round trip, then the client's jsonschema check of the result."""

    async def call(query: Query) -> dict[str, Any]:
        return _answer(name, query, await client.call_tool("cari_anak", query.arguments))

    return Route(name, call, judged=False)


def argument_error_route(name: str, client: Client) -> Route:
    """`limit=1000`: refused by the server's argument validation, so the service is never called."""

    async def call(query: Query) -> dict[str, Any]:
        result = await common.round_trip(client, common.tool_call("cari_anak", {**query.arguments, "limit": 1000}))
        if not result.is_error or "limit" not in common.text_of(result):
            raise RuntimeError(f"{name}: limit=1000 was not refused as an argument error: {common.text_of(result)}")
        return {}

    return Route(name, call, judged=False, checked=False)
