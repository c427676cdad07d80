"""The MCP server over Streamable HTTP on 127.0.0.1, as a real process, in both protocol eras."""

import httpx2
import pytest
from mcp import Client

from tests.auth.support import MODERN, rpc
from tests.http_rpc import reply

pytestmark = pytest.mark.e2e


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["legacy", "2026-07-28", "auto"])
async def test_http_serves_tools_in_each_era(mcp_url: str, era: str) -> None:
    async with Client(mcp_url, mode=era, cache=None) as client:
        result = await client.call_tool("absensi_harian", {"tanggal": "2026-10-06"})
        assert not result.is_error
        assert result.structured_content["per_status"]["izin"] == 1
        kamar = await client.read_resource("asrama://kamar")
        assert '"Al-Fatih 1"' in kamar.contents[0].text


def test_http_refuses_a_foreign_origin(mcp_url: str) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Origin": "https://evil.example", "Accept": "application/json, text/event-stream"}
    response = httpx2.post(mcp_url, json=body, headers=headers, timeout=5)
    assert response.status_code == 403


def test_http_answers_malformed_json_with_parse_error(mcp_url: str) -> None:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    response = httpx2.post(mcp_url, content=b"{not json", headers=headers, timeout=5)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32700


def test_discover_lists_every_served_version_and_advertises_subscriptions(mcp_url: str) -> None:
    body, headers = rpc("server/discover", era=MODERN)
    discovered = reply(httpx2.post(mcp_url, json=body, headers=headers, timeout=5))["result"]
    assert discovered["supportedVersions"] == [MODERN, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    # listChanged: false, since nothing sends list changes
    assert discovered["capabilities"]["resources"] == {"subscribe": True, "listChanged": False}


def test_a_raw_listen_is_an_event_stream_that_opens_with_its_acknowledgement(mcp_url: str) -> None:
    body, headers = rpc(
        "subscriptions/listen", {"notifications": {"resourceSubscriptions": ["asrama://kamar"]}}, era=MODERN
    )
    with httpx2.stream("POST", mcp_url, json=body, headers=headers, timeout=5) as listen:
        assert listen.status_code == 200
        assert listen.headers["content-type"].startswith("text/event-stream")
        first = next(event for event in httpx2.EventSource(listen) if event.data).json()
    assert first["method"] == "notifications/subscriptions/acknowledged"
    assert first["params"]["notifications"] == {"resourceSubscriptions": ["asrama://kamar"]}
    assert first["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == body["id"]


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
def test_each_listed_handshake_version_is_served_and_told_to_listen_for_updates(mcp_url: str, version: str) -> None:
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    body, headers = rpc("initialize", params)
    initialized = reply(httpx2.post(mcp_url, json=body, headers=headers, timeout=5))["result"]
    assert initialized["protocolVersion"] == version
    assert initialized["capabilities"]["resources"] == {"subscribe": True, "listChanged": False}
    body, headers = rpc("resources/subscribe", {"uri": "asrama://kamar"})
    refused = reply(httpx2.post(mcp_url, json=body, headers=headers, timeout=5))["error"]
    assert refused["code"] == -32600 and "subscriptions/listen" in refused["message"]


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT"])
def test_anything_but_post_on_the_endpoint_answers_405_at_once(mcp_url: str, method: str) -> None:
    response = httpx2.request(method, mcp_url, headers={"Accept": "text/event-stream"}, timeout=5)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert "POST" in response.text and "/healthz" in response.text
