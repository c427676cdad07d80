"""The JSON-RPC messages of an MCP HTTP response, whether the server answered with one JSON body or an SSE stream.

The MCP server answers a request that asks for progress (or listens) with `text/event-stream` (progress
notifications first, the response last; on the 2026-07-28 path only once the handler sent one) and every other
request, errors and our own layers' refusals (400, 403, 413, 421, 429) with `application/json`.
"""

from typing import Any

import httpx2


def messages(response: httpx2.Response) -> list[dict[str, Any]]:
    """Every JSON-RPC message of a read response, in order: its JSON body, or the data of each SSE event that has
    some (a keep-alive comment or a priming event carries none)."""
    kind = response.headers.get("content-type", "").partition(";")[0].strip().lower()
    if kind == "application/json":
        body = response.json()
        assert isinstance(body, dict), body
        return [body]
    found: list[dict[str, Any]] = []
    for event in httpx2.EventSource(response):
        if event.data:
            message = event.json()
            assert isinstance(message, dict), message
            found.append(message)
    return found


def reply(response: httpx2.Response) -> dict[str, Any]:
    """The JSON-RPC response (result or error) of a request: the last message, after any notifications."""
    found = messages(response)
    assert found and ("result" in found[-1] or "error" in found[-1]), found
    return found[-1]
