"""The POSTed JSON-RPC message, read once in front of the SDK, and routing headers that must agree with it.

The SDK compares `Mcp-Method` / `Mcp-Name` with the body only on its 2026-07-28 path (`MCP-Protocol-Version:
2026-07-28`). Without that header, or with a 2025 version, a proxy or gateway routing on the headers could be told
`tools/list` while the body is `tools/call detail_anak`. Here, in every era:
- a routing header sent twice, an `Mcp-Method` that is not the body's method, or an `Mcp-Name` that is not the
  body's name (for the methods that carry one) → HTTP 400 with JSON-RPC `-32020`;
- a body whose `_meta` names a 2026-07-28 protocol version needs the same `MCP-Protocol-Version` header (-32020).
On the 2026-07-28 path the SDK's own ladder (`mcp.shared.inbound.classify_inbound_request`) decides, unchanged.

The parsed body is left in the ASGI scope under `MESSAGE` for the rate limiter (which answers with the request's
own id); the app receives the body exactly as sent.
"""

import json
import logging
from collections.abc import Mapping
from typing import Any, Final

from mcp.shared.inbound import NAME_BEARING_METHODS, decode_header_value, find_duplicated_routing_header
from mcp_types import HEADER_MISMATCH
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger(__name__)

MESSAGE: Final = "mcp_asrama.message"  # scope key: the decoded JSON body, or UNREADABLE
UNREADABLE: Final = object()  # not JSON, not complete, or larger than the limit
PROTOCOL_VERSION_META = "io.modelcontextprotocol/protocolVersion"


async def read_body(receive: Receive, limit: int) -> tuple[list[Message], bytes | None]:
    """The request's messages as received (a little over `limit` bytes at most) and the whole body, or None when it
    is larger than `limit` or the client disconnected first (the app then sees the same messages itself)."""
    messages: list[Message] = []
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, None
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            return messages, None
        if not message.get("more_body", False):
            return messages, b"".join(chunks)


def replaying(messages: list[Message], receive: Receive) -> Receive:
    """A `receive` that hands the app the messages already read, in order, then reads on."""
    pending = list(messages)

    async def replay() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


def decode(body: bytes | None) -> Any:
    """The JSON value of a body, or UNREADABLE."""
    if body is None:
        return UNREADABLE
    try:
        return json.loads(body)
    except (ValueError, RecursionError):  # not JSON (or not UTF-8), or nested too deep to parse
        return UNREADABLE


def mismatch(scope: Scope, payload: Any) -> str | None:
    """Why the routing headers disagree with the body, or None when they agree (or the SDK's ladder decides)."""
    duplicated = find_duplicated_routing_header(
        (bytes(k).decode("latin-1"), bytes(v).decode("latin-1")) for k, v in scope.get("headers", [])
    )
    if duplicated is not None:
        return f"{duplicated} header appears more than once"
    headers = Headers(scope=scope)
    version = headers.get("mcp-protocol-version")
    if version in MODERN_PROTOCOL_VERSIONS or not isinstance(payload, Mapping):
        return None
    params = payload.get("params")
    params = params if isinstance(params, Mapping) else {}
    meta = params.get("_meta")
    claimed = meta.get(PROTOCOL_VERSION_META) if isinstance(meta, Mapping) else None
    if claimed in MODERN_PROTOCOL_VERSIONS and version != claimed:
        return "MCP-Protocol-Version header does not match the request envelope's protocol version"
    method_header = headers.get("mcp-method")
    if method_header is not None and method_header != payload.get("method"):
        return "Mcp-Method header does not match the request body's method"
    name_header = headers.get("mcp-name")
    method = payload.get("method")
    name_key = NAME_BEARING_METHODS.get(method) if isinstance(method, str) else None
    if name_header is not None and name_key is not None and decode_header_value(name_header) != params.get(name_key):
        return f"Mcp-Name header does not match the request body's {name_key!r} parameter"
    return None


def request_id(payload: Any) -> str | int | None:
    """The JSON-RPC id of a request body, when it has a valid one."""
    value = payload.get("id") if isinstance(payload, Mapping) else None
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


async def json_rpc_error(
    send: Send, status: int, code: int, message: str, id: str | int | None, data: Any = None, **headers: str
) -> None:
    """An HTTP response carrying one JSON-RPC error (for the request `id`)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    body = json.dumps({"jsonrpc": "2.0", "id": id, "error": error}, ensure_ascii=False).encode()
    extra = [(name.lower().encode(), value.encode()) for name, value in headers.items()]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *extra],
        }
    )
    await send({"type": "http.response.body", "body": body})


class RoutingHeaderCheck:
    """Pure ASGI: reads a POST's body once (bounded by `max_body`), refuses disagreeing headers, leaves the message
    in the scope, and hands the app the body as sent."""

    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        messages, body = await read_body(receive, self.max_body)
        if messages[-1]["type"] == "http.disconnect":  # gone mid-body (or cut by the body timeout): nobody to answer
            log.debug("client went away before its request was complete")
            return
        payload = decode(body)
        scope[MESSAGE] = payload
        problem = mismatch(scope, payload)
        if problem is not None:
            log.info("refused routing headers that disagree with the body", extra={"problem": problem})
            await json_rpc_error(send, 400, HEADER_MISMATCH, problem, request_id(payload))
            return
        await self.app(scope, replaying(messages, receive), send)
