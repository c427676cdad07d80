"""Transport security over real HTTP on 127.0.0.1: Origin and Host checks on a loopback and a public bind,
oversized bodies, header/body mismatches (-32020), and the health endpoints."""

from collections.abc import Iterator

import httpx2
import pytest

from tests.auth.conftest import ALLOWED_ORIGIN, Mcp, jwt_settings, mcp_in_thread
from tests.auth.idp import Idp
from tests.auth.support import ERAS, MODERN, TIMEOUT, post, rpc
from tests.e2e.conftest import free_port
from tests.http_rpc import reply

pytestmark = pytest.mark.e2e

PUBLIC_URL = "https://asrama.example.sch.id/mcp"
MIB = 1024 * 1024


@pytest.fixture(scope="module")
def public_mcp(idp: Idp, service_url: str) -> Iterator[Mcp]:
    """A server configured for a public bind (0.0.0.0 behind https://asrama.example.sch.id) — its socket is
    still 127.0.0.1: only the configuration is public."""
    settings = jwt_settings(idp, public_url=PUBLIC_URL, allowed_origins=[ALLOWED_ORIGIN])
    with mcp_in_thread(api_url=service_url, mcp_host="0.0.0.0", **settings) as mcp:  # noqa: S104
        yield mcp


# --- Origin ----------------------------------------------------------------------------------------------------

FOREIGN_ORIGINS = [
    "https://evil.example",
    "null",
    "http://127.0.0.1.evil.example:8001",
    "https://asrama.example.sch.id.evil",
]


@pytest.mark.parametrize("origin", FOREIGN_ORIGINS)
@pytest.mark.parametrize("era", ERAS)
def test_foreign_origin_is_403_on_a_loopback_bind_even_with_a_valid_token(
    jwt_mcp: Mcp, idp: Idp, origin: str, era: str
) -> None:
    response = post(jwt_mcp.url, era=era, token=idp.mint(jwt_mcp.public_url), headers={"Origin": origin})
    assert response.status_code == 403
    assert "cari_anak" not in response.text


@pytest.mark.parametrize("origin", [*FOREIGN_ORIGINS, "http://localhost:6274", "http://127.0.0.1:8001"])
@pytest.mark.parametrize("era", ERAS)
def test_foreign_and_loopback_origins_are_403_on_a_public_bind(
    public_mcp: Mcp, idp: Idp, origin: str, era: str
) -> None:
    response = post(public_mcp.url, era=era, token=idp.mint(PUBLIC_URL), headers={"Origin": origin})
    assert response.status_code == 403


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/.well-known/oauth-protected-resource/mcp"])
def test_foreign_origin_is_refused_on_every_path(jwt_mcp: Mcp, path: str) -> None:
    response = httpx2.get(jwt_mcp.base + path, headers={"Origin": "https://evil.example"}, timeout=TIMEOUT)
    assert response.status_code == 403


@pytest.mark.parametrize("origin", [ALLOWED_ORIGIN, "http://localhost:6274", "http://127.0.0.1:5173"])
def test_allowed_and_loopback_origins_pass_on_a_loopback_bind(jwt_mcp: Mcp, idp: Idp, origin: str) -> None:
    response = post(jwt_mcp.url, era=MODERN, token=idp.mint(jwt_mcp.public_url), headers={"Origin": origin})
    assert response.status_code == 200


@pytest.mark.parametrize("era", ERAS)
def test_allowed_origin_passes_on_a_public_bind(public_mcp: Mcp, idp: Idp, era: str) -> None:
    response = post(public_mcp.url, era=era, token=idp.mint(PUBLIC_URL), headers={"Origin": ALLOWED_ORIGIN + "/"})
    assert response.status_code == 200


def test_origin_is_checked_before_the_token(jwt_mcp: Mcp) -> None:
    response = post(jwt_mcp.url, headers={"Origin": "https://evil.example"})
    assert response.status_code == 403
    assert "www-authenticate" not in response.headers


# --- Host (DNS rebinding) ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8001", "asrama.example.sch.id.evil", "[::1"])
def test_foreign_host_is_421(public_mcp: Mcp, idp: Idp, host: str) -> None:
    response = post(public_mcp.url, token=idp.mint(PUBLIC_URL), headers={"Host": host})
    assert response.status_code == 421


@pytest.mark.parametrize("host", ["asrama.example.sch.id", "asrama.example.sch.id:443", "ASRAMA.example.sch.id"])
def test_public_url_host_passes(public_mcp: Mcp, idp: Idp, host: str) -> None:
    response = post(public_mcp.url, token=idp.mint(PUBLIC_URL), headers={"Host": host})
    assert response.status_code == 200


def test_foreign_host_is_421_on_a_loopback_bind(jwt_mcp: Mcp, idp: Idp) -> None:
    response = post(jwt_mcp.url, token=idp.mint(jwt_mcp.public_url), headers={"Host": "evil.example"})
    assert response.status_code == 421


def test_public_bind_serves_metadata_for_its_public_url(public_mcp: Mcp, idp: Idp) -> None:
    response = httpx2.get(public_mcp.metadata_url, headers={"Host": "asrama.example.sch.id"}, timeout=TIMEOUT)
    assert response.json()["resource"] == PUBLIC_URL
    refused = post(public_mcp.url, headers={"Host": "asrama.example.sch.id"})
    expected = 'resource_metadata="https://asrama.example.sch.id/.well-known/oauth-protected-resource/mcp"'
    assert refused.status_code == 401 and expected in refused.headers["www-authenticate"]


# --- body size ---------------------------------------------------------------------------------------------------


def _big_call(size: int) -> bytes:
    body, _ = rpc("tools/call", {"name": "cari_anak", "arguments": {"nama": "x" * size}})
    import json

    return json.dumps(body).encode()


@pytest.mark.parametrize("with_token", [True, False])
def test_body_over_one_mib_is_413(jwt_mcp: Mcp, idp: Idp, with_token: bool) -> None:
    _, headers = rpc("tools/call", {"name": "cari_anak"})
    if with_token:
        headers["Authorization"] = f"Bearer {idp.mint(jwt_mcp.public_url)}"
    response = httpx2.post(jwt_mcp.url, content=_big_call(MIB + 1), headers=headers, timeout=TIMEOUT)
    assert response.status_code == 413


def test_chunked_body_over_one_mib_is_413(jwt_mcp: Mcp, idp: Idp) -> None:
    body = _big_call(2 * MIB)

    def chunks() -> Iterator[bytes]:  # no Content-Length: the size shows only while reading
        for start in range(0, len(body), 64 * 1024):
            yield body[start : start + 64 * 1024]

    _, headers = rpc("tools/call", {"name": "cari_anak"})
    headers["Authorization"] = f"Bearer {idp.mint(jwt_mcp.public_url)}"
    response = httpx2.post(jwt_mcp.url, content=chunks(), headers=headers, timeout=TIMEOUT)
    assert response.status_code == 413


def test_body_just_under_one_mib_is_served(jwt_mcp: Mcp, idp: Idp) -> None:
    _, headers = rpc("tools/call", {"name": "cari_anak"})
    headers["Authorization"] = f"Bearer {idp.mint(jwt_mcp.public_url)}"
    body = _big_call(MIB - 1024)
    assert len(body) <= MIB
    response = httpx2.post(jwt_mcp.url, content=body, headers=headers, timeout=TIMEOUT)
    assert response.status_code == 200
    assert reply(response)["result"]["isError"] is True  # a name that long is an argument error, not a crash


# --- header/body mismatch (2026-07-28) ---------------------------------------------------------------------------

MISMATCHES = {
    "method": ({"Mcp-Method": "tools/list"}, None),
    "missing_method": ({"Mcp-Method": ""}, None),
    "name": ({"Mcp-Name": "detail_anak"}, None),
    "protocol_version": ({}, "2099-01-01"),
}


@pytest.mark.parametrize(("override", "body_version"), MISMATCHES.values(), ids=MISMATCHES.keys())
def test_header_body_mismatch_is_32020(
    jwt_mcp: Mcp, idp: Idp, override: dict[str, str], body_version: str | None
) -> None:
    body, headers = rpc("tools/call", {"name": "cari_anak", "arguments": {"kelas": "7A"}}, era=MODERN)
    if body_version:
        body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = body_version
    headers |= {"Authorization": f"Bearer {idp.mint(jwt_mcp.public_url)}", **override}
    response = httpx2.post(jwt_mcp.url, json=body, headers=headers, timeout=TIMEOUT)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32020
    assert "Ahmad" not in response.text


# --- health ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("path", "body"), [("/healthz", {"status": "ok"}), ("/readyz", {"status": "ready"})])
def test_health_needs_no_token_and_carries_no_data(jwt_mcp: Mcp, path: str, body: dict[str, str]) -> None:
    response = httpx2.get(jwt_mcp.base + path, timeout=TIMEOUT)
    assert response.status_code == 200
    assert response.json() == body
    assert response.headers["cache-control"] == "no-store"
    assert "www-authenticate" not in response.headers
    garbage = httpx2.get(jwt_mcp.base + path, headers={"Authorization": "Bearer rubbish"}, timeout=TIMEOUT)
    assert garbage.json() == body


def test_health_answers_any_host_for_probes(public_mcp: Mcp) -> None:
    response = httpx2.get(public_mcp.base + "/healthz", headers={"Host": "10.1.2.3:8001"}, timeout=TIMEOUT)
    assert response.json() == {"status": "ok"}


def test_health_is_get_only(jwt_mcp: Mcp) -> None:
    response = httpx2.post(jwt_mcp.base + "/healthz", timeout=TIMEOUT)
    assert response.status_code == 405
    assert httpx2.head(jwt_mcp.base + "/readyz", timeout=TIMEOUT).status_code == 200


def test_readyz_is_503_while_the_data_service_is_down_and_healthz_stays_200(idp: Idp) -> None:
    dead = f"http://127.0.0.1:{free_port()}"
    with mcp_in_thread(api_url=dead, **jwt_settings(idp)) as mcp:
        ready = httpx2.get(mcp.base + "/readyz", timeout=TIMEOUT)
        assert ready.status_code == 503
        assert ready.json()["status"] == "not ready"
        assert ready.json()["alasan"].endswith("check ASRAMA_API_URL")
        assert dead.rsplit(":", 1)[1] not in ready.text
        assert httpx2.get(mcp.base + "/healthz", timeout=TIMEOUT).json() == {"status": "ok"}
