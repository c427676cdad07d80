"""Over real HTTP: routing headers (`Mcp-Method`, `Mcp-Name`, `MCP-Protocol-Version`) never disagree with the body
in any era, and a 429 names the refused request's own id."""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.auth.conftest import Mcp, mcp_in_thread
from tests.auth.idp import Idp
from tests.auth.support import MODERN, rpc
from tests.http_rpc import reply

pytestmark = pytest.mark.e2e

DETAIL = ("tools/call", {"name": "detail_anak", "arguments": {"id_anak": "A001"}})
PERSONAL = ("Ahmad", "A001", "Hasan")


def send(
    mcp: Mcp, token: str, body: dict[str, Any], headers: dict[str, str] | list[tuple[str, str]]
) -> httpx2.Response:
    extra = list(headers.items()) if isinstance(headers, dict) else headers
    sent = [("Authorization", f"Bearer {token}"), ("Accept", "application/json, text/event-stream"), *extra]
    return httpx2.post(mcp.url, json=body, headers=sent, timeout=15)


def refused_as_mismatch(response: httpx2.Response, request_id: int = 1) -> None:
    assert response.status_code == 400
    answer = response.json()
    assert (answer["error"]["code"], answer["id"]) == (-32020, request_id)
    for value in PERSONAL:
        assert value not in response.text


@pytest.mark.parametrize(
    "headers",
    [
        {"Mcp-Method": "tools/list"},  # no protocol version header: the SDK compares nothing here
        {"MCP-Protocol-Version": "2025-06-18", "Mcp-Method": "tools/list"},
        {"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "tools/call", "Mcp-Name": "daftar_kamar"},
        {"Mcp-Method": "tools/call", "Mcp-Name": "=?base64?ZGFmdGFyX2thbWFy?="},  # daftar_kamar, encoded
    ],
)
def test_a_handshake_era_request_whose_headers_disagree_is_refused(
    jwt_mcp: Mcp, idp: Idp, headers: dict[str, str]
) -> None:
    body, _ = rpc(*DETAIL)
    refused_as_mismatch(send(jwt_mcp, idp.mint(jwt_mcp.public_url), body, headers))


def test_matching_headers_in_the_handshake_era_are_served(jwt_mcp: Mcp, idp: Idp) -> None:
    body, _ = rpc(*DETAIL)
    headers = {"Mcp-Method": "tools/call", "Mcp-Name": "detail_anak"}
    answer = send(jwt_mcp, idp.mint(jwt_mcp.public_url), body, headers)
    assert answer.status_code == 200
    assert reply(answer)["result"]["structuredContent"]["nama"] == "Ahmad Fauzi"


@pytest.mark.parametrize("version_header", [None, "2025-06-18"])
def test_a_2026_body_needs_the_2026_version_header(jwt_mcp: Mcp, idp: Idp, version_header: str | None) -> None:
    body, headers = rpc(*DETAIL, era=MODERN)
    headers.pop("MCP-Protocol-Version")
    if version_header:
        headers["MCP-Protocol-Version"] = version_header
    refused_as_mismatch(send(jwt_mcp, idp.mint(jwt_mcp.public_url), body, headers))


def test_a_routing_header_sent_twice_is_refused(jwt_mcp: Mcp, idp: Idp) -> None:
    body, _ = rpc(*DETAIL)
    twice = [("Mcp-Method", "tools/call"), ("Mcp-Method", "tools/list")]
    refused_as_mismatch(send(jwt_mcp, idp.mint(jwt_mcp.public_url), body, twice))


def test_the_2026_path_still_checks_its_own_headers(jwt_mcp: Mcp, idp: Idp) -> None:
    body, headers = rpc(*DETAIL, era=MODERN)
    headers["Mcp-Name"] = "daftar_kamar"
    refused_as_mismatch(send(jwt_mcp, idp.mint(jwt_mcp.public_url), body, headers))


@pytest.fixture
def one_request_mcp(idp: Idp, service_url: str, tmp_path: Path) -> Iterator[Mcp]:
    with mcp_in_thread(api_url=service_url, auth="jwt", auth_issuer=idp.issuer, auth_jwks_url=idp.jwks_url,
                       rate_limit="1/h", rate_burst=1) as mcp:  # fmt: skip
        yield mcp


@pytest.mark.parametrize("era", ["legacy", MODERN])
def test_a_429_carries_the_request_id(one_request_mcp: Mcp, idp: Idp, era: str) -> None:
    token = idp.mint(one_request_mcp.public_url)
    body, headers = rpc("resources/read", {"uri": "asrama://kamar"}, era=era, id=41)
    if era == MODERN:
        headers["Mcp-Name"] = "asrama://kamar"
    assert send(one_request_mcp, token, body, headers).status_code == 200
    body["id"] = "permintaan-42"
    refused = send(one_request_mcp, token, body, headers)
    assert refused.status_code == 429
    assert refused.json()["id"] == "permintaan-42"
