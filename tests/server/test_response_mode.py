"""Which requests are answered with a stream: those that ask for progress or listen, and nothing else that is one
request object."""

from typing import Any

import pytest

from mcp_asrama.server.response_mode import wants_stream
from mcp_asrama.server.routing_headers import UNREADABLE


def call(meta: Any = None, method: str = "tools/call") -> dict[str, Any]:
    params: dict[str, Any] = {"name": "cari_anak", "arguments": {"kelas": "7A"}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


@pytest.mark.parametrize(
    "payload",
    [
        call({"progressToken": "rekap-7"}),
        call({"progressToken": 0}),  # a token is any string or number, 0 too
        call({"progressToken": "t", "io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
        {"jsonrpc": "2.0", "id": 2, "method": "subscriptions/listen", "params": {}},
        [call(), call()],  # a batch: the SDK refuses it, as before
        UNREADABLE,
        None,  # no body was read (not a POST the routing-header check saw)
        "tools/call",
    ],
)
def test_streamed(payload: Any) -> None:
    assert wants_stream(payload)


@pytest.mark.parametrize(
    "payload",
    [
        call(),
        call({}),
        call({"progressToken": None}),
        call({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}),
        call("not an object"),
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": "odd"},
    ],
)
def test_plain(payload: Any) -> None:
    assert not wants_stream(payload)
