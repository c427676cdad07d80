"""No token passthrough: the host's bearer token stops at the MCP server; the data service only ever sees the
server's own ASRAMA_API_TOKEN. A recording stand-in for a school's own REST service (no /healthz) on 127.0.0.1."""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx2
import pytest

from tests.auth.conftest import jwt_settings, mcp_in_thread
from tests.auth.idp import Idp
from tests.auth.support import ERAS, TIMEOUT, bearer_client, post
from tests.conftest import TOKEN

pytestmark = pytest.mark.e2e

KAMAR = {"data": [{"nama": "Al-Fatih 1", "gedung": "Putra", "kapasitas": 6, "terisi": 2, "musyrif": "Ust. Ridwan"}]}


class Recorder:
    """A data service that records every request's path and headers, requires TOKEN and serves only /kamar."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, str]]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                recorder.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    self._send(401, {"detail": "token"})
                elif self.path.split("?")[0] == "/kamar":
                    self._send(200, KAMAR)
                else:
                    self._send(404, {"detail": "not found"})

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> "Recorder":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=5)


def asked(upstream: Recorder) -> list[str]:
    """The paths requested for a client, without the server's own follower of the change feed (it asks at start,
    whoever connects; this service has none)."""
    return [path.split("?")[0] for path, _ in upstream.requests if path != "/perubahan"]


@pytest.fixture
def upstream() -> Iterator[Recorder]:
    with Recorder() as recorder:
        yield recorder


def _assert_only_our_token_went_upstream(upstream: Recorder, host_tokens: list[str]) -> None:
    assert upstream.requests, "nothing reached the data service"
    for path, headers in upstream.requests:
        assert headers["authorization"] == f"Bearer {TOKEN}"
        seen = path + json.dumps(headers)
        for token in host_tokens:
            for part in token.split(".")[1:]:  # payload and signature (the header part is shared by all tokens)
                assert part not in seen


@pytest.mark.anyio
@pytest.mark.parametrize("era", ERAS)
async def test_host_token_never_reaches_the_data_service(idp: Idp, upstream: Recorder, era: str) -> None:
    with mcp_in_thread(api_url=upstream.url, **jwt_settings(idp)) as mcp:
        token = idp.mint(mcp.public_url)
        async with bearer_client(mcp.url, token, era) as client:
            result = await client.call_tool("daftar_kamar", {})
            assert not result.is_error
            assert result.structured_content["data"][0]["nama"] == "Al-Fatih 1"
            await client.read_resource("asrama://kamar")
        raw = post(mcp.url, "tools/call", {"name": "daftar_kamar", "arguments": {}}, era=era, token=token)
        assert raw.status_code == 200
    _assert_only_our_token_went_upstream(upstream, [token])


def test_refused_tokens_cause_no_upstream_request(idp: Idp, upstream: Recorder) -> None:
    with mcp_in_thread(api_url=upstream.url, **jwt_settings(idp)) as mcp:
        expired = idp.mint(mcp.public_url, exp=1)
        for token in (expired, idp.mint(mcp.public_url, scope="openid")):
            response = post(mcp.url, "tools/call", {"name": "daftar_kamar", "arguments": {}}, token=token)
            assert response.status_code in (401, 403)
    assert asked(upstream) == []


def test_readyz_asks_kamar_with_our_token(idp: Idp, upstream: Recorder) -> None:
    with mcp_in_thread(api_url=upstream.url, **jwt_settings(idp)) as mcp:
        response = httpx2.get(mcp.base + "/readyz", timeout=TIMEOUT)
        assert response.json() == {"status": "ready"}
        assert "Al-Fatih" not in response.text
    assert asked(upstream) == ["/kamar"]
    _assert_only_our_token_went_upstream(upstream, [])


def test_readyz_is_503_when_the_service_refuses_our_token(idp: Idp, upstream: Recorder) -> None:
    with mcp_in_thread(api_url=upstream.url, **jwt_settings(idp, api_token="salah")) as mcp:
        response = httpx2.get(mcp.base + "/readyz", timeout=TIMEOUT)
        assert response.status_code == 503
        assert response.json()["alasan"] == "the data service refused our token (HTTP 401): check ASRAMA_API_TOKEN"
        assert "salah" not in response.text


def test_readyz_answers_a_flood_with_few_upstream_requests(idp: Idp, upstream: Recorder) -> None:
    with mcp_in_thread(api_url=upstream.url, **jwt_settings(idp)) as mcp:
        for _ in range(30):
            assert httpx2.get(mcp.base + "/readyz", timeout=TIMEOUT).status_code == 200
    assert len(asked(upstream)) <= 6  # 30 asked; one probe (GET /kamar) per 2 s at most
